// `whatif` compares the plan the user has, not a fresh one: the plan as it
// is and the same plan on the changed machine are its file's policy
// simulated, and the changed side is the faster of that and the re-plan.
#include "planner/what_if.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/placement.h"
#include "planner/machine_change.h"
#include "tests/core/test_profiles.h"

namespace stowage::planner {
namespace {

using core::testing::bundled;
using core::testing::must;

ProfileInputs inputs_for(const std::string& machine, const std::string& model,
                         const std::string& training = "default") {
  return {.machine = must(bundled().machine(machine)),
          .model = must(bundled().model(model)),
          .training = must(bundled().training(training)),
          .machine_name = machine,
          .model_name = model,
          .training_name = training,
          .assumed_nvme_write = std::nullopt};
}

core::Policy standard_policy(const ProfileInputs& in, const char* placement) {
  return core::policy_for(*core::placement_named(placement, in.machine.gpu_count),
                          core::Workload(in.model, in.training.sequence_length), in.training);
}

// Llama-2-7B under zero-infinity on the one-drive workstation is bound by
// its drive (72.7 s a step), where the planner's plan for the same machine
// takes under 10 s: whatif used to show the latter as "as it is".
TEST(WhatIf, AsItIsIsThePlanItWasGiven) {
  const ProfileInputs in = inputs_for("workstation-24gb-1nvme", "llama-2-7b");
  const core::Policy plan = standard_policy(in, "zero-infinity");
  const MachineChange more_ram{.ram = core::Bytes(int64_t{256} << 30)};
  const WhatIf w = what_if(plan, in, apply(in.machine, more_ram, {}));
  const Evaluation given = evaluate(candidate_of(plan, in.training), in.machine, in.model);
  ASSERT_TRUE(w.as_it_is.fits()) << w.as_it_is.reason;
  EXPECT_EQ(w.as_it_is.candidate.policy, plan);
  EXPECT_DOUBLE_EQ(w.as_it_is.step_seconds(), given.step_seconds());
  const PlanResult fresh = search(in.machine, in.model, in.training);
  ASSERT_TRUE(fresh.best);
  EXPECT_GT(w.as_it_is.step_seconds(), 2 * fresh.best->step_seconds())
      << "the case no longer tells them apart";
  // More RAM changes no rate: the same plan takes the same time, and the
  // re-plan, free to keep the states in RAM, is faster.
  EXPECT_DOUBLE_EQ(w.same_plan.step_seconds(), w.as_it_is.step_seconds());
  ASSERT_NE(w.changed(), nullptr);
  EXPECT_EQ(w.changed(), &*w.replanned.best);
  EXPECT_LT(w.changed()->step_seconds(), w.as_it_is.step_seconds() / 2);
}

// The same plan on a machine where it no longer fits (a 16 GB T4 in place of
// the 24 GB 4090, for an all-GPU OPT-1.3B plan that needs 23 GB) is shown as
// not fitting, with the reason. fp16 training: a T4 has no bf16.
TEST(WhatIf, TheSamePlanMayNotFitTheChangedMachine) {
  const ProfileInputs in = inputs_for("workstation-24gb-1nvme", "opt-1.3b", "fp16-adam");
  const core::Policy plan = standard_policy(in, "all-gpu");
  const WhatIf w = what_if(plan, in, apply(in.machine, {.gpu = must(bundled().gpu("t4"))}, {}));
  ASSERT_TRUE(w.as_it_is.fits()) << w.as_it_is.reason;
  EXPECT_FALSE(w.same_plan.fits());
  EXPECT_FALSE(w.same_plan.reason.empty());
  EXPECT_NE(w.changed(), &w.same_plan);
}

// The changed side is the faster of the re-plan and the same plan: a plan
// from outside the search's space may beat what the search finds.
TEST(WhatIf, TheChangedSideIsTheFasterThatFits) {
  const auto timed = [](double seconds, Verdict verdict) {
    Evaluation e{.candidate = {}, .verdict = verdict};
    e.summary.emplace();
    e.summary->step_time = core::Seconds(seconds);
    return e;
  };
  WhatIf w{.as_it_is = timed(10, Verdict::kFits), .same_plan = timed(4, Verdict::kFits), .replanned = {}};
  EXPECT_EQ(w.changed(), &w.same_plan) << "nothing re-planned fits";
  w.replanned.best = timed(5, Verdict::kFits);
  EXPECT_EQ(w.changed(), &w.same_plan);
  w.replanned.best = timed(3, Verdict::kFits);
  EXPECT_EQ(w.changed(), &*w.replanned.best);
  w.replanned.best = timed(4, Verdict::kFits);
  EXPECT_EQ(w.changed(), &*w.replanned.best) << "a tie goes to the re-plan";
  w.same_plan = timed(1, Verdict::kOverflows);
  EXPECT_EQ(w.changed(), &*w.replanned.best) << "a plan that does not fit is never the changed side";
  w.replanned.best.reset();
  EXPECT_EQ(w.changed(), nullptr);
}

// The re-plan keeps Adam's moments in bf16 only where the plan already does
// (the user allowed them when it was made: `plan --allow-bf16-states`).
TEST(WhatIf, ReplansWithBf16StatesOnlyWhereThePlanHasThem) {
  const ProfileInputs in = inputs_for("workstation-24gb-1nvme", "opt-1.3b");
  const auto bf16 = [](const Evaluation& e) {
    return e.candidate.policy.optimizer_state_precision == core::StatePrecision::kBf16;
  };
  core::Policy plan = standard_policy(in, "zero-offload");
  const core::MachineSpec changed = apply(in.machine, {.pcie_generation = 5}, {});
  EXPECT_TRUE(std::ranges::none_of(what_if(plan, in, changed).replanned.considered, bf16));
  plan.optimizer_state_precision = core::StatePrecision::kBf16;
  EXPECT_TRUE(std::ranges::any_of(what_if(plan, in, changed).replanned.considered, bf16));
}

// A new GPU with a link generation runs at that generation: apply() set the
// link first, and the GPU's own profile then put its own generation back.
TEST(MachineChange, TheLinkGenerationHoldsForANewGpu) {
  const core::MachineSpec base = must(bundled().machine("workstation-24gb-1nvme"));
  const core::GpuSpec h100 = must(bundled().gpu("h100-sxm"));
  ASSERT_NE(h100.pcie_generation, 4);
  const core::MachineSpec m = apply(base, {.pcie_generation = 4, .gpu = h100}, {});
  EXPECT_EQ(m.gpu.name, h100.name);
  EXPECT_EQ(m.gpu.pcie_generation, 4);
  EXPECT_EQ(m.host.pcie_generation, 4);
}

}  // namespace
}  // namespace stowage::planner
