// bf16 optimizer states (issue 16, item 3) end to end on the tiny GPT: the
// loss curve stays near the fp32 states' one but is not the same, the states
// take 8 instead of 12 bytes per parameter where they rest and on the NVMe
// lanes (measured bytes equal the schedule's), and a checkpoint resumes only
// under the state precision it was written with.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "core/policy.h"
#include "executor/trainer.h"
#include "tests/executor/tiny_gpt_fixture.h"

namespace stowage::executor {
namespace {

namespace fs = std::filesystem;
using namespace testing;

core::PlanFile with_bf16_states(core::PlanFile plan) {
  plan.policy.optimizer_state_precision = core::StatePrecision::kBf16;
  return plan;
}

// 60 steps both ways. bf16 keeps 8 significant bits, so each stored moment
// is off by at most 2^-9 relative and each step's size m / sqrt(v) by about
// 2^-8: the two runs are the same training with every step perturbed by
// under half a percent. Measured (seed 7): on ordinary steps the losses
// agree within 0.016 nats; on the two loss spikes (batches the model
// predicts badly, 6.15 and 3.39 nats at steps 22 and 28) the small weight
// difference is magnified, by how much depending on the host's sgemm
// kernels (OpenBLAS picks them by CPU): 0.2 % and 2.8 % of the loss on one
// host, 0.6 % and 5.9 % on another (2026-12-04), where the median step
// differed by 0.01 %. So the typical step is bounded tightly (the median
// relative difference within 1 %) and the spikes loosely (every step
// within 10 %); the level the run settles at (the mean of the last 20
// losses) agrees within 0.02 nats (measured 0.002); the curves must differ
// somewhere, and both must learn (fall by more than 0.8 nats).
TEST(Bf16StatesTraining, LossFollowsFp32StatesCloselyButNotExactly) {
  const core::PlanFile fp32 = plan_where(kNvmeOffload);
  const std::vector<double> full = losses(fp32, 60, "bf16-states-ref");
  const std::vector<double> low = losses(with_bf16_states(fp32), 60, "bf16-states");
  ASSERT_EQ(full.size(), 60u);
  ASSERT_EQ(low.size(), 60u);
  // Step 0 computes with the initial weights, the same in both.
  EXPECT_EQ(low[0], full[0]);
  double largest = 0, settled_full = 0, settled_low = 0;
  std::vector<double> differences;
  for (size_t i = 0; i < full.size(); ++i) {
    differences.push_back(std::abs(low[i] - full[i]) / full[i]);
    largest = std::max(largest, differences.back());
    if (i >= 40) {
      settled_full += full[i] / 20;
      settled_low += low[i] / 20;
    }
  }
  std::nth_element(differences.begin(), differences.begin() + 30, differences.end());
  const double median = differences[30];
  EXPECT_LE(median, 0.01);
  EXPECT_LE(largest, 0.10);
  EXPECT_NEAR(settled_low, settled_full, 0.02);
  EXPECT_NE(low, full);  // the moments' rounding must show
  EXPECT_LT(low.back(), low.front() - 0.8);
  EXPECT_LT(full.back(), full.front() - 0.8);
  std::printf(
      "bf16 states: relative loss difference median %.4f, largest %.4f; last-20 mean %.5f vs %.5f (fp32 states)\n",
      median, largest, settled_low, settled_full);
}

// The executor moves what the schedule declares on every lane, and the
// states' NVMe traffic is 8/12 of fp32 states' (only the states are on NVMe).
TEST(Bf16StatesTraining, NvmeStateTrafficIsTwoThirdsAndMatchesTheSchedule) {
  std::array<int64_t, 2> nvme_read{};
  int k = 0;
  for (const core::PlanFile& plan : {plan_where(kNvmeOffload), with_bf16_states(plan_where(kNvmeOffload))}) {
    const LaneBytes bytes = lane_bytes(plan, "bf16-bytes-" + std::to_string(k));
    EXPECT_EQ(bytes.measured, bytes.declared);
    nvme_read[static_cast<size_t>(k++)] = bytes.measured[static_cast<size_t>(core::Lane::kNvmeRead)];
  }
  ASSERT_GT(nvme_read[0], 0);
  EXPECT_EQ(nvme_read[1] * 12, nvme_read[0] * 8);
}

TEST(Bf16StatesTraining, ResumesExactlyAndOnlyUnderTheSameStatePrecision) {
  const core::PlanFile plan = with_bf16_states(plan_where(kCpuOffload));
  const std::vector<double> straight = losses(plan, 4, "bf16-resume-straight");
  const fs::path root = scratch("bf16-resume") / "checkpoints";
  auto first = backend("bf16-resume-a");
  ASSERT_TRUE(train_plan(plan, *first, {.steps = 2, .seed = 7, .checkpoint_root = root}));
  auto second = backend("bf16-resume-b");
  auto tail = train_plan(plan, *second, {.steps = 4, .seed = 7, .resume = root / "step-000002"});
  ASSERT_TRUE(tail) << core::to_string(tail.error());
  EXPECT_EQ(tail->losses, std::vector<double>(straight.begin() + 2, straight.end()));
  // The same plan with fp32 states may not resume it, and says why.
  auto third = backend("bf16-resume-c");
  auto refused = train_plan(plan_where(kCpuOffload), *third, {.steps = 4, .seed = 7, .resume = root / "step-000002"});
  ASSERT_FALSE(refused);
  const std::string message = core::to_string(refused.error());
  EXPECT_NE(message.find("optimizer states (Adam moments) in bf16, this run's plan in fp32"), std::string::npos)
      << message;
}

}  // namespace
}  // namespace stowage::executor
