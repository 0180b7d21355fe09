// A candidate simulated once and judged again at other memory capacities
// (planner/simulated.h) must get the verdict a simulation at those
// capacities gives: same fit, same overflowing tier and op, same shortfall.
// Capacities are put exactly at a simulated peak and one byte below it,
// where a verdict flips, and on every tier.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/lower.h"
#include "planner/search.h"
#include "planner/simulated.h"
#include "sim/simulator.h"
#include "tests/core/test_profiles.h"

namespace stowage::planner {
namespace {

using core::testing::bundled;
using core::testing::must;

// The machine with one tier's capacity per rank set to `per_rank`.
core::MachineSpec with_capacity(core::MachineSpec m, core::Tier tier, core::Bytes per_rank) {
  switch (tier) {
    case core::Tier::kGpu: m.gpu.memory = per_rank; break;
    case core::Tier::kCpu: m.host.dram = per_rank * m.gpu_count; break;
    case core::Tier::kNvme: m.nvme.capacity = core::Bytes(per_rank.count() * m.gpu_count / m.nvme_count); break;
  }
  return m;
}

// What the engine itself says at the machine's capacities, independently
// of judge(): the first op whose allocation crossed a capacity, or none.
void expect_the_engines_verdict(const Candidate& c, const core::MachineSpec& m, const core::ModelSpec& model,
                                const Evaluation& judged, const std::string& what) {
  const core::Workload w(model, c.training.sequence_length);
  auto s = core::lower(c.policy, m, w, c.training, {.steps = core::steady_state_steps(c.policy), .validate = false});
  ASSERT_TRUE(s) << what;
  bool over_at_start = false;
  for (core::Tier t : core::kAllTiers) over_at_start |= s->resident[static_cast<size_t>(t)] > s->capacity[static_cast<size_t>(t)];
  if (over_at_start) return;  // judged as over before any op runs (planner/simulated.cpp)
  const sim::Prediction p = sim::simulate(*s, m);
  EXPECT_EQ(judged.fits(), !p.engine.overflow.has_value()) << what;
  if (!p.engine.overflow) return;
  EXPECT_EQ(judged.overflow, p.engine.overflow->tier) << what;
  EXPECT_EQ(judged.overflow_op, s->op(p.engine.overflow->op).name) << what;
}

void expect_same_verdict(const Evaluation& fresh, const Evaluation& again, const std::string& what) {
  EXPECT_EQ(fresh.verdict, again.verdict) << what << ": " << fresh.reason << " / " << again.reason;
  EXPECT_EQ(fresh.overflow, again.overflow) << what;
  EXPECT_EQ(fresh.overflow_bytes, again.overflow_bytes) << what;
  EXPECT_EQ(fresh.capacity, again.capacity) << what;
  EXPECT_EQ(fresh.overflow_op, again.overflow_op) << what;
  EXPECT_EQ(fresh.reason, again.reason) << what;
  EXPECT_EQ(fresh.step_seconds(), again.step_seconds()) << what;
  EXPECT_EQ(fresh.nvme_bytes_written, again.nvme_bytes_written) << what;
}

TEST(SimulationCache, AVerdictJudgedAgainIsTheVerdictOfASimulationAtThoseCapacities) {
  const core::ProfileCatalog catalog = bundled();
  int flips = 0, compared = 0;
  for (const auto& [machine_name, model_name] :
       std::vector<std::pair<std::string, std::string>>{{"workstation-24gb-1nvme", "llama-2-7b"},
                                                        {"dgx-a100", "opt-13b"},
                                                        {"cloud-t4-vm", "gpt2-xl"}}) {
    const core::MachineSpec machine = must(catalog.machine(machine_name));
    const core::ModelSpec model = must(catalog.model(model_name));
    const core::TrainingSpec training = must(catalog.training(machine.gpu.bf16_rate ? "default" : "fp16-adam"));
    const std::vector<Candidate> space = search_space(machine, model, training);
    for (size_t i = 0; i < space.size(); i += space.size() / 6 + 1) {
      SimulationCache cache;
      const Evaluation first = evaluate(space[i], machine, model, &cache);
      ASSERT_TRUE(first.summary) << first.reason;
      ASSERT_NE(cache.find(space[i]), nullptr);
      for (core::Tier tier : core::kAllTiers) {
        if (tier == core::Tier::kNvme && machine.nvme_count == 0) continue;
        const core::Bytes peak = first.summary->peak_memory[static_cast<size_t>(tier)];
        if (peak.count() == 0) continue;
        for (const core::Bytes per_rank : {peak, peak - core::Bytes(1), peak * 2}) {
          const core::MachineSpec other = with_capacity(machine, tier, per_rank);
          const std::string what = machine_name + " / " + model_name + ": " + space[i].name + ", " +
                                   std::string(core::to_string(tier)) + " " + std::to_string(per_rank.count());
          const Evaluation fresh = evaluate(space[i], other, model);
          const Evaluation again = evaluate(space[i], other, model, &cache);
          expect_same_verdict(fresh, again, what);
          expect_the_engines_verdict(space[i], other, model, again, what);
          flips += fresh.fits() != first.fits();
          ++compared;
        }
      }
    }
  }
  EXPECT_GT(compared, 40);
  EXPECT_GT(flips, 5);  // the capacities chosen do move verdicts both ways
}

// The cache is keyed by the whole candidate: one that differs in anything
// but its name is not found.
TEST(SimulationCache, FindsOnlyTheSameCandidate) {
  const core::ProfileCatalog catalog = bundled();
  const core::MachineSpec machine = must(catalog.machine("workstation-24gb-1nvme"));
  const core::ModelSpec model = must(catalog.model("gpt2"));
  const core::TrainingSpec training = must(catalog.training("default"));
  const std::vector<Candidate> space = search_space(machine, model, training);
  ASSERT_GE(space.size(), 2u);
  SimulationCache cache;
  (void)evaluate(space[0], machine, model, &cache);
  EXPECT_NE(cache.find(space[0]), nullptr);
  Candidate deeper = space[0];
  deeper.policy.h2d_prefetch_depth += 1;
  EXPECT_EQ(cache.find(deeper), nullptr);
  Candidate longer = space[0];
  longer.training.max_grad_norm = 0.5;
  EXPECT_EQ(cache.find(longer), nullptr);
  Candidate pooled = space[0];
  pooled.runtime_pools.push_back({core::Tier::kCpu, core::Bytes(1), "pool"});
  EXPECT_EQ(cache.find(pooled), nullptr);
}

// A search on a machine with more memory, given what a search on the
// smaller one simulated, chooses the plan it chooses without them: the
// same candidate at the same step time. Candidates judged again may be
// named as overflowing where the memory model alone would have pruned
// them, never the reverse, and whether each one fits is the same.
TEST(SimulationCache, ASearchOnALargerMachineChoosesAsWithoutIt) {
  const core::ProfileCatalog catalog = bundled();
  const core::MachineSpec machine = must(catalog.machine("workstation-24gb-1nvme"));
  const core::ModelSpec model = must(catalog.model("llama-2-13b"));
  const core::TrainingSpec training = must(catalog.training("default"));
  core::MachineSpec small = machine;
  small.host.dram = core::Bytes(int64_t{24} << 30);
  const SearchOptions fixed{.vary_micro_batch = false, .vary_checkpointing = false};
  const PlanResult before = search(small, model, training, fixed);
  auto cache = std::make_shared<SimulationCache>();
  cache->add_all(before.baselines);
  cache->add_all(before.considered);
  SearchOptions reuse = fixed;
  reuse.simulations = cache;
  const PlanResult without = search(machine, model, training, fixed);
  const PlanResult with = search(machine, model, training, reuse);
  ASSERT_TRUE(without.best);
  ASSERT_TRUE(with.best);
  EXPECT_EQ(with.best->candidate.name, without.best->candidate.name);
  EXPECT_EQ(with.best->step_seconds(), without.best->step_seconds());
  ASSERT_EQ(with.considered.size(), without.considered.size());
  for (size_t i = 0; i < with.considered.size(); ++i) {
    const Evaluation& a = with.considered[i];
    const Evaluation& b = without.considered[i];
    EXPECT_EQ(a.candidate.name, b.candidate.name);
    EXPECT_EQ(a.fits(), b.fits()) << a.candidate.name;
    if (a.verdict != b.verdict) {
      EXPECT_EQ(a.verdict, Verdict::kOverflows) << a.candidate.name;
      EXPECT_EQ(b.verdict, Verdict::kPruned) << a.candidate.name;
    }
  }
}

}  // namespace
}  // namespace stowage::planner
