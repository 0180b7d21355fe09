// Properties of the planner on the bundled machines and models.
#include "planner/search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "planner/advice.h"
#include "planner/machine_change.h"
#include "planner/nvme_wear.h"
#include "planner/simulated.h"
#include "tests/core/test_profiles.h"

namespace stowage::planner {
namespace {

using core::testing::bundled;
using core::testing::must;

PlanResult plan_for(const core::MachineSpec& machine, const std::string& model) {
  return search(machine, must(bundled().model(model)), must(bundled().training("default")));
}

// The chosen plan is never slower, on the same simulator, than any baseline
// that fits: the baselines are candidates too.
TEST(Search, NeverSlowerThanAFittingBaseline) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"workstation-24gb-1nvme", "llama-2-13b"}, {"workstation-24gb-4nvme", "llama-2-7b"},
      {"dgx-a100", "llama-2-70b"}, {"cloud-t4-vm", "opt-6.7b"}, {"h100-node", "mixtral-8x7b"}};
  for (const auto& [machine, model] : cases) {
    SCOPED_TRACE(machine + " / " + model);
    const PlanResult r = plan_for(must(bundled().machine(machine)), model);
    ASSERT_TRUE(r.best.has_value());
    EXPECT_TRUE(r.best->fits());
    for (const Evaluation& b : r.baselines) {
      if (b.fits()) {
        EXPECT_LE(r.best->step_seconds(), b.step_seconds()) << b.candidate.name;
      }
    }
  }
}

// On the 24 GB workstation, Llama-2-13B fits only with offload: all-GPU
// model states alone are 208 GB.
TEST(Search, Llama13bOnTheWorkstationFitsAndAllGpuDoesNot) {
  const PlanResult r = plan_for(must(bundled().machine("workstation-24gb-1nvme")), "llama-2-13b");
  ASSERT_TRUE(r.best.has_value());
  EXPECT_FALSE(r.baselines[0].fits());
  EXPECT_EQ(r.baselines[0].overflow, core::Tier::kGpu);
}

// More CPU RAM or more NVMe drives never make the chosen plan slower: the
// candidates depend on the model alone (byte budgets, not capacities), the
// old plan still fits, and each candidate is no slower with more of either.
// Up to the search's 0.5 % resolution: a candidate within it of the best is
// not simulated, on either machine.
TEST(Search, MoreRamOrDrivesNeverMakeThePlanSlower) {
  const core::MachineSpec base = must(bundled().machine("workstation-24gb-1nvme"));
  const core::NvmeSpec spare = must(bundled().nvme("samsung-990-pro-4tb"));
  const double before = plan_for(base, "llama-2-13b").best->step_seconds();
  const std::vector<MachineChange> changes = {
      {.add_nvme = 1}, {.add_nvme = 3}, {.ram = core::Bytes(int64_t{256} << 30)}, {.ram = core::Bytes(int64_t{512} << 30)}};
  for (const MachineChange& c : changes) {
    const PlanResult after = plan_for(apply(base, c, spare), "llama-2-13b");
    ASSERT_TRUE(after.best.has_value()) << describe(c);
    EXPECT_LE(after.best->step_seconds(), before * 1.005) << describe(c);
  }
}

// A faster PCIe link never makes the chosen plan slower, to the search's
// 0.5 % resolution, from Gen3 to Gen4 to Gen5, for three models. Unlike more
// RAM or drives, a candidate itself can get a little slower on a faster
// link: host DRAM bandwidth is shared fairly by the DMA streams and the CPU
// optimizer, so a faster link takes some of it from an optimizer on the
// critical path (measured: Llama-2-13B's Gen4 winner under this test's
// training, 40.85 s at Gen4, 41.38 s at Gen5, +1.28 %; OPT-13B's +0.8 %),
// so the same candidate is held to 1.5 %, the plans the search picks to
// its 0.5 %.
// A faster link never makes the chosen plan slower, split into what can be
// promised exactly and what cannot:
// - the slower link's winner, run on the faster link, is not slower (the
//   cost model), and when it still fits the search finds at least as good
//   (the search, to its 0.5 % resolution);
// - a winner can stop fitting on a faster link, because prefetched copies
//   land sooner and overlap more (peak memory depends on timing; OPT-13B's
//   Gen3 winner overflows the GPU at Gen4 by a few MB), and then the best
//   plan that fits may be slower: 1.35 % for OPT-13B at Gen4 since every
//   optimizer waits for the gradient check. That case is bounded at 2 %
//   until peak memory is made independent of timing (issue 11).
TEST(Search, FasterPcieNeverMakesThePlanSlower) {
  const core::MachineSpec base = must(bundled().machine("workstation-24gb-1nvme"));
  const core::NvmeSpec spare = must(bundled().nvme("samsung-990-pro-4tb"));
  for (const char* model : {"llama-2-7b", "llama-2-13b", "opt-13b"}) {
    std::optional<Evaluation> slower;
    for (int generation : {3, 4, 5}) {
      const core::MachineSpec machine = apply(base, {.pcie_generation = generation}, spare);
      const PlanResult r = plan_for(machine, model);
      ASSERT_TRUE(r.best.has_value()) << model << " Gen" << generation;
      const double seconds = r.best->step_seconds();
      if (slower) {
        const Evaluation same = evaluate(slower->candidate, machine, must(bundled().model(model)));
        EXPECT_LE(same.step_seconds(), slower->step_seconds() * 1.015) << model << " Gen" << generation;
        if (same.verdict == Verdict::kFits) {
          EXPECT_LE(seconds, same.step_seconds() * 1.005) << model << " Gen" << generation;
        } else {
          EXPECT_LE(seconds, slower->step_seconds() * 1.02) << model << " Gen" << generation;
        }
      }
      slower = r.best;
    }
  }
}

// Llama-2-70B on the workstation: parameters and states fit on the NVMe, but
// the 16-bit gradients (2 B x 69 G = 138 GB) must land in CPU RAM, which has
// 128 GiB. The planner names the host as the short tier and finds how much
// more RAM makes it fit.
TEST(Search, TooLargeAModelSaysWhy) {
  const core::MachineSpec machine = must(bundled().machine("workstation-24gb-1nvme"));
  const core::ModelSpec model = must(bundled().model("llama-2-70b"));
  const core::TrainingSpec training = must(bundled().training("default"));
  const PlanResult r = search(machine, model, training);
  EXPECT_FALSE(r.best.has_value());
  const Evaluation* near = closest(r);
  ASSERT_NE(near, nullptr);
  EXPECT_EQ(near->overflow, core::Tier::kCpu);
  const std::vector<Advice> advice = advise(machine, model, training, r, must(bundled().nvme("samsung-990-pro-4tb")));
  ASSERT_FALSE(advice.empty());
  EXPECT_TRUE(advice.front().change.starts_with("add ")) << advice.front().change;
  EXPECT_TRUE(advice.front().step_seconds.has_value()) << advice.front().still;
}

// Issue 11: on Llama-2-7B the memory floor sat above the simulated peak and
// discarded candidates that fit, one faster than the plan chosen. Every
// candidate the search now prunes by memory overflows when simulated (a
// sample of them, every 5th, keeps the test to seconds).
TEST(Search, PrunesOnlyCandidatesThatOverflow) {
  const core::MachineSpec m = must(bundled().machine("workstation-24gb-1nvme"));
  const core::ModelSpec model = must(bundled().model("llama-2-7b"));
  const PlanResult r = search(m, model, must(bundled().training("default")));
  ASSERT_TRUE(r.best.has_value());
  int pruned = 0;
  for (const Evaluation& e : r.considered) {
    if (e.verdict != Verdict::kPruned || pruned++ % 5 != 0) continue;
    const Evaluation simulated = evaluate(e.candidate, m, model);
    EXPECT_EQ(simulated.verdict, Verdict::kOverflows) << e.candidate.name << ": " << e.reason;
  }
  EXPECT_GT(pruned, 100);
}

TEST(Search, ReportsProgressAndStopsWhenAsked) {
  const core::MachineSpec m = must(bundled().machine("workstation-24gb-1nvme"));
  const core::ModelSpec model = must(bundled().model("llama-2-7b"));
  const core::TrainingSpec training = must(bundled().training("default"));
  std::vector<std::pair<int, int>> calls;
  const PlanResult full = search(m, model, training, {.progress = [&](int done, int most) {
    calls.emplace_back(done, most);
    return true;
  }});
  ASSERT_GT(calls.size(), 4u);
  EXPECT_FALSE(full.cancelled);
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].first, static_cast<int>(i));
    EXPECT_LT(calls[i].first, calls[i].second);
  }
  // Stopping after the baselines simulates nothing more.
  const PlanResult stopped = search(m, model, training, {.progress = [](int done, int) { return done < 4; }});
  EXPECT_TRUE(stopped.cancelled);
  EXPECT_EQ(stopped.baselines.size(), 4u);
  const auto simulated = std::count_if(stopped.considered.begin(), stopped.considered.end(),
                                       [](const Evaluation& e) { return e.summary.has_value(); });
  EXPECT_EQ(simulated, 4);
  ASSERT_TRUE(full.best && stopped.best);
  EXPECT_LE(full.best->step_seconds(), stopped.best->step_seconds());
}

TEST(Search, IsDeterministic) {
  const core::MachineSpec m = must(bundled().machine("workstation-24gb-1nvme"));
  const PlanResult a = plan_for(m, "llama-2-7b"), b = plan_for(m, "llama-2-7b");
  ASSERT_EQ(a.considered.size(), b.considered.size());
  EXPECT_EQ(a.best->candidate.name, b.best->candidate.name);
  EXPECT_EQ(a.best->step_seconds(), b.best->step_seconds());
}

// The search simulates candidates ahead on several threads (SearchOptions::
// threads) and still judges them one by one in its order, so every thread
// count considers the same candidates in the same order, with the same
// verdicts, floors and bounds, and chooses the same plan. The cases are
// ones where it could break: searches where the best plan improves while
// candidates are simulated ahead (thousands bounded out after it), one
// stopped at the first fit, and a search that reuses a cache of
// simulations (as advice does, on a machine with more memory).
void expect_same_search(const PlanResult& one, const PlanResult& many, const std::string& what) {
  ASSERT_EQ(one.considered.size(), many.considered.size()) << what;
  ASSERT_EQ(one.best.has_value(), many.best.has_value()) << what;
  if (one.best) {
    EXPECT_EQ(one.best->candidate.name, many.best->candidate.name) << what;
    EXPECT_EQ(one.best->step_seconds(), many.best->step_seconds()) << what;
  }
  for (size_t i = 0; i < one.considered.size(); ++i) {
    const Evaluation& a = one.considered[i];
    const Evaluation& b = many.considered[i];
    const std::string where = what + ", #" + std::to_string(i) + " " + a.candidate.name;
    ASSERT_EQ(a.candidate.name, b.candidate.name) << where;
    EXPECT_EQ(a.verdict, b.verdict) << where;
    EXPECT_EQ(a.reason, b.reason) << where;
    EXPECT_EQ(a.step_seconds(), b.step_seconds()) << where;
    EXPECT_EQ(a.floor, b.floor) << where;
    EXPECT_EQ(a.bound, b.bound) << where;
    EXPECT_EQ(a.overflow, b.overflow) << where;
    EXPECT_EQ(a.overflow_bytes, b.overflow_bytes) << where;
    EXPECT_EQ(a.overflow_op, b.overflow_op) << where;
    EXPECT_EQ(a.holders, b.holders) << where;
    EXPECT_EQ(a.nvme_bytes_written, b.nvme_bytes_written) << where;
  }
}

TEST(Search, EveryThreadCountConsidersTheSameCandidatesAndChoosesTheSamePlan) {
  for (const auto& [machine_name, model_name] : std::vector<std::pair<std::string, std::string>>{
           {"h100-node", "llama-2-70b"}, {"dgx-a100", "opt-13b"}, {"workstation-24gb-1nvme", "llama-2-13b"}}) {
    const core::MachineSpec machine = must(bundled().machine(machine_name));
    const core::ModelSpec model = must(bundled().model(model_name));
    const core::TrainingSpec training = must(bundled().training("default"));
    const auto searched = [&](int threads, SearchOptions::Until until) {
      return search(machine, model, training, {.until = until, .threads = threads});
    };
    const PlanResult one = searched(1, SearchOptions::Until::kSearchedAll);
    const auto bounded_out = std::ranges::count_if(
        one.considered, [](const Evaluation& e) { return e.verdict == Verdict::kBoundedOut; });
    const auto simulated = std::ranges::count_if(one.considered, [](const Evaluation& e) { return e.summary.has_value(); });
    EXPECT_GT(bounded_out, 100) << machine_name;  // what ran ahead was often in vain
    EXPECT_GT(simulated, 8) << machine_name;
    for (const int threads : {2, 5}) {
      const std::string what = machine_name + " / " + model_name + ", " + std::to_string(threads) + " threads";
      expect_same_search(one, searched(threads, SearchOptions::Until::kSearchedAll), what);
      expect_same_search(searched(1, SearchOptions::Until::kFirstFit),
                         searched(threads, SearchOptions::Until::kFirstFit), what + ", first fit");
    }
  }
}

TEST(Search, EveryThreadCountReusesACacheOfSimulationsTheSameWay) {
  const core::MachineSpec machine = must(bundled().machine("dgx-a100"));
  const core::ModelSpec model = must(bundled().model("opt-13b"));
  const core::TrainingSpec training = must(bundled().training("default"));
  core::MachineSpec roomier = machine;
  roomier.gpu.memory = machine.gpu.memory * 2;  // capacities alone differ, as the cache requires
  roomier.name += " (changed)";
  std::vector<PlanResult> first, again;
  for (const int threads : {1, 3}) {
    SearchOptions options{.threads = threads, .simulations = std::make_shared<SimulationCache>()};
    first.push_back(search(machine, model, training, options));
    again.push_back(search(roomier, model, training, options));
  }
  expect_same_search(first[0], first[1], "first search");
  expect_same_search(again[0], again[1], "search with the cache");
}

TEST(Search, ExplainsEveryRejection) {
  const PlanResult r = plan_for(must(bundled().machine("workstation-24gb-1nvme")), "llama-2-13b");
  for (const Evaluation& e : r.considered) {
    if (!e.fits()) {
      EXPECT_FALSE(e.reason.empty()) << e.candidate.name;
    }
  }
}

// 1.2 PB of rated writes at 100 GB per 10 s step: 12,000 steps... per day
// 8,640 steps write 864 TB, so 1,200 TB last 1.389 days.
TEST(NvmeWear, DaysToRatedEndurance) {
  core::MachineSpec m = must(bundled().machine("workstation-24gb-1nvme"));
  const NvmeWear w = nvme_wear(core::Bytes(100'000'000'000), core::Seconds(10), m);
  ASSERT_TRUE(w.days_to_rated.has_value());
  EXPECT_NEAR(*w.days_to_rated, 1200.0 / 864.0, 1e-9);
  EXPECT_FALSE(nvme_wear(core::Bytes(0), core::Seconds(10), m).days_to_rated.has_value());
}

}  // namespace
}  // namespace stowage::planner
