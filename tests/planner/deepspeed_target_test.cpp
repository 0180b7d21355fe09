// DeepSpeed as a target (planner/deepspeed_target.h): the plan DeepSpeed
// runs is a fixed point (exporting it changes nothing), the search for the
// target finds only such plans, and DeepSpeed's buffer pools are memory in
// the schedule the simulator scores.
#include "planner/deepspeed_target.h"

#include <gtest/gtest.h>

#include "core/policy.h"
#include "planner/search.h"
#include "tests/core/test_profiles.h"

namespace stowage::planner {
namespace {

using core::testing::bundled;
using core::testing::must;

std::string joined(const std::vector<std::string>& notes) {
  std::string all;
  for (const std::string& n : notes) all += n + "\n";
  return all;
}

// Over every bundled machine and every candidate the search generates for
// Llama 2 7B: what DeepSpeed runs, exported again, exports with nothing
// lost, and mapping it again gives the same policy.
TEST(DeepSpeedTarget, WhatDeepSpeedRunsExportsUnchangedOnEveryMachine) {
  const core::ModelSpec model = must(bundled().model("llama-2-7b"));
  const core::TrainingSpec training = must(bundled().training("default"));
  for (const std::string& name : bundled().names(core::ProfileKind::kMachine)) {
    const core::MachineSpec machine = must(bundled().machine(name));
    int checked = 0;
    for (const Candidate& c : search_space(machine, model, training)) {
      core::Result<TargetPlan> t = deepspeed_target(c, machine, model);
      ASSERT_TRUE(t.has_value()) << name << ": " << c.name;
      core::Result<TargetPlan> again = deepspeed_target(t->candidate, machine, model);
      ASSERT_TRUE(again.has_value());
      EXPECT_EQ(again->candidate.policy, t->candidate.policy) << name << ": " << c.name;
      EXPECT_TRUE(again->settings.not_expressible.empty())
          << name << ": " << c.name << "\n" << joined(again->settings.not_expressible);
      ++checked;
    }
    EXPECT_GT(checked, 0) << name;
  }
}

// DeepSpeed's pools rest in memory for the whole step: the CPU peak of the
// plan DeepSpeed runs is the same schedule's peak without them plus their
// bytes (per rank).
TEST(DeepSpeedTarget, PoolsAreResidentMemoryOfTheSchedule) {
  const core::ModelSpec model = must(bundled().model("llama-2-7b"));
  const core::MachineSpec machine = must(bundled().machine("workstation-24gb-1nvme"));
  const core::TrainingSpec training = must(bundled().training("default"));
  const core::Workload w(model, training.sequence_length);
  const core::Placement p = core::standard_placement(core::StandardPlacement::kZeroInfinity, 1);
  const Candidate planned{.name = "zero-infinity", .policy = core::policy_for(p, w, training), .training = training,
                          .runtime_pools = {}};
  const TargetPlan t = must(deepspeed_target(planned, machine, model));
  ASSERT_FALSE(t.candidate.runtime_pools.empty());
  Candidate bare = t.candidate;
  bare.runtime_pools.clear();
  const Evaluation with = evaluate(t.candidate, machine, model);
  const Evaluation without = evaluate(bare, machine, model);
  ASSERT_TRUE(with.summary && without.summary);
  core::Bytes cpu_pools;
  for (const core::MemoryEffect& e : t.candidate.runtime_pools) {
    if (e.tier == core::Tier::kCpu) cpu_pools += e.bytes;
  }
  const size_t cpu = static_cast<size_t>(core::Tier::kCpu);
  EXPECT_EQ(with.summary->peak_memory[cpu], without.summary->peak_memory[cpu] + cpu_pools);
  EXPECT_EQ(with.summary->step_time, without.summary->step_time);  // memory only
}

// The check, on the search's side: planning for DeepSpeed gives a
// plan whose export says nothing is lost, and whose predicted step is that
// of the plan DeepSpeed runs for it.
TEST(DeepSpeedTarget, PlanForDeepSpeedExportsAsPredicted) {
  const core::ModelSpec model = must(bundled().model("llama-2-7b"));
  const core::MachineSpec machine = must(bundled().machine("workstation-24gb-1nvme"));
  const core::TrainingSpec training = must(bundled().training("default"));
  const PlanResult r = search(machine, model, training, {.target = Target::kDeepSpeed});
  ASSERT_TRUE(r.best.has_value());
  const Candidate& best = r.best->candidate;
  EXPECT_FALSE(best.policy.delayed_update);
  const TargetPlan t = must(deepspeed_target(best, machine, model));
  EXPECT_TRUE(t.settings.not_expressible.empty()) << joined(t.settings.not_expressible);
  EXPECT_EQ(t.candidate.policy, best.policy);
  const Evaluation again = evaluate(t.candidate, machine, model);
  ASSERT_TRUE(again.summary.has_value());
  EXPECT_EQ(again.summary->step_time, r.best->summary->step_time);
  EXPECT_EQ(again.summary->peak_memory, r.best->summary->peak_memory);
  for (const Evaluation& e : r.considered) EXPECT_FALSE(e.candidate.policy.delayed_update) << e.candidate.name;
}

}  // namespace
}  // namespace stowage::planner
