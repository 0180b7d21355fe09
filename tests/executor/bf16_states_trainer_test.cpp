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

// 60 steps both ways. The tolerance: bf16 keeps 8 significant bits, so each
// stored moment is off by at most 2^-9 relative and Adam's step direction
// m / sqrt(v) by about 2^-8 (0.4 %); the run's loss falls by about 2 nats
// over these steps, and a 0.4 % change in every step's size moves the curve
// by well under 1 % of that fall. 0.05 nats (2.5 % of the fall) leaves room
// for the moments' errors to compound, and is still far tighter than the
// 0.8-nat fall the test asks of both curves; measured: see the report.
TEST(Bf16StatesTraining, LossFollowsFp32StatesCloselyButNotExactly) {
  const core::PlanFile fp32 = plan_where(kNvmeOffload);
  const std::vector<double> full = losses(fp32, 60, "bf16-states-ref");
  const std::vector<double> low = losses(with_bf16_states(fp32), 60, "bf16-states");
  ASSERT_EQ(full.size(), 60u);
  ASSERT_EQ(low.size(), 60u);
  // Step 0 computes with the initial weights, the same in both.
  EXPECT_EQ(low[0], full[0]);
  double largest = 0;
  for (size_t i = 0; i < full.size(); ++i) largest = std::max(largest, std::abs(low[i] - full[i]));
  EXPECT_LE(largest, 0.05);
  EXPECT_NE(low, full);  // the moments' rounding must show
  EXPECT_LT(low.back(), low.front() - 0.8);
  EXPECT_LT(full.back(), full.front() - 0.8);
  std::printf("bf16 states: largest |loss - fp32 states' loss| over 60 steps %.6f, final %.6f vs %.6f\n", largest,
              low.back(), full.back());
}

// The executor moves what the schedule declares on every lane, and the
// states' NVMe traffic is 8/12 of fp32 states' (only the states are on NVMe).
TEST(Bf16StatesTraining, NvmeStateTrafficIsTwoThirdsAndMatchesTheSchedule) {
  std::array<int64_t, 2> nvme_read{};
  int k = 0;
  for (const core::PlanFile& plan : {plan_where(kNvmeOffload), with_bf16_states(plan_where(kNvmeOffload))}) {
    auto b = backend("bf16-bytes-" + std::to_string(k));
    std::array<int64_t, core::kLaneCount> measured{};
    TrainerOptions options{.steps = 3, .seed = 7};
    options.on_step = [&](const StepReport& r) {
      for (size_t l = 0; l < measured.size(); ++l) measured[l] += r.bytes[l];
    };
    auto run = train_plan(plan, *b, options);
    ASSERT_TRUE(run) << core::to_string(run.error());
    std::array<int64_t, core::kLaneCount> declared{};
    for (const core::Op& op : run->schedule.ops) {
      if (op.lane != core::Lane::kGpuCompute && op.lane != core::Lane::kCpuOptim)
        declared[static_cast<size_t>(op.lane)] += op.bytes.count();
    }
    EXPECT_EQ(measured, declared);
    nvme_read[static_cast<size_t>(k++)] = measured[static_cast<size_t>(core::Lane::kNvmeRead)];
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
