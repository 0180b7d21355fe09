#include "calibration/compare.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/calibration/calibration_fixture.h"

namespace stowage::calibration {
namespace {

using core::Lane;

TEST(Compare, ATraceAgainstItselfHasNoError) {
  const testing::Simulated s = testing::simulated({});
  const Comparison c = compare(s.schedule, s.timeline, s.schedule, s.timeline).value();
  EXPECT_EQ(c.matched_ops, static_cast<int>(s.schedule.ops.size()));
  EXPECT_EQ(c.step_error, 0);
  EXPECT_EQ(c.makespan_error, 0);
  int lanes = 0;
  for (const auto& e : c.busy_error) {
    if (e) {
      EXPECT_EQ(*e, 0);
      ++lanes;
    }
  }
  EXPECT_GE(lanes, 5);  // compute, both PCIe directions, both NVMe lanes, the optimizer
  for (const auto& e : c.steady_busy_error) EXPECT_EQ(e.value_or(0), 0);
  for (const KindError& k : c.kinds) {
    EXPECT_EQ(k.median, 0);
    EXPECT_EQ(k.p90, 0);
  }
  EXPECT_FALSE(c.most_wrong_lane.has_value());
}

// Every op of one lane twice as long, nothing else moved (a lane whose
// model is off by 2x, seen as durations): the comparison names that lane,
// its busy error is +100 % and its ops' median error +100 %.
TEST(Compare, ALaneSlowedTwiceIsTheMostWrong) {
  for (Lane slow : {Lane::kPcieH2d, Lane::kCpuOptim, Lane::kNvmeRead, Lane::kGpuCompute}) {
    SCOPED_TRACE(std::string(core::to_string(slow)));
    const testing::Simulated s = testing::simulated({});
    core::Timeline measured = s.timeline;
    for (const core::Op& op : s.schedule.ops) {
      if (op.lane != slow) continue;
      core::OpSpan& sp = measured.spans[static_cast<size_t>(op.id)];
      sp.end = sp.start + 2 * (sp.end - sp.start);
    }
    const Comparison c = compare(s.schedule, s.timeline, s.schedule, measured).value();
    ASSERT_TRUE(c.most_wrong_lane.has_value());
    EXPECT_EQ(*c.most_wrong_lane, slow);
    for (const KindError& k : c.kinds) {
      if (k.lane == slow) {
        EXPECT_NEAR(k.median, 1.0, 1e-6) << core::to_string(k.kind);
      } else {
        EXPECT_EQ(k.median, 0);
      }
    }
    // Each op keeps its start, so a lengthened op may overlap the next one
    // on its lane: the busy time grows, by less than 2x.
    EXPECT_GT(*c.busy_error[static_cast<size_t>(slow)], 0.05);
  }
}

// The same through the simulator: the "measured" timeline made with one
// lane's rate halved, so everything after it moves too. The comparison
// still names the lane whose model was changed.
TEST(Compare, ALaneWithHalfItsRateIsTheMostWrong) {
  core::CostParameters base;
  base.h2d_rate = core::BytesPerSecond(4e9);
  base.d2h_rate = core::BytesPerSecond(4e9);
  // One slow optimizer thread: Adam bound by the cores, not by DRAM, so
  // its rate is what decides the lane.
  base.cpu_core_rate = core::FlopsPerSecond(0.5e9);
  base.optimizer_threads = 1;
  const testing::Simulated predicted = testing::simulated(base);
  core::CostParameters slow_h2d = base;
  slow_h2d.h2d_rate = core::BytesPerSecond(2e9);
  core::CostParameters slow_adam = base;
  slow_adam.cpu_core_rate = core::FlopsPerSecond(base.cpu_core_rate.value() / 2);
  for (const auto& [lane, params] : {std::pair{Lane::kPcieH2d, slow_h2d}, std::pair{Lane::kCpuOptim, slow_adam}}) {
    SCOPED_TRACE(std::string(core::to_string(lane)));
    const testing::Simulated measured = testing::simulated(params);
    const Comparison c = compare(predicted.schedule, predicted.timeline, measured.schedule, measured.timeline).value();
    ASSERT_TRUE(c.most_wrong_lane.has_value());
    EXPECT_EQ(*c.most_wrong_lane, lane);
    EXPECT_GT(*c.busy_error[static_cast<size_t>(lane)], 0.5);
  }
}

// A lane slowed only in the warm-up step, by more in all than another lane
// slowed a little in every step: the second is the most wrong, as its
// model is what costs the steady step.
TEST(Compare, TheMostWrongLaneIsJudgedOnTheSteadyStep) {
  const testing::Simulated s = testing::simulated({}, 3);
  core::Timeline measured = s.timeline;
  int first = s.schedule.ops.front().step;
  for (const core::Op& op : s.schedule.ops) first = std::min(first, op.step);
  for (const core::Op& op : s.schedule.ops) {
    core::OpSpan& sp = measured.spans[static_cast<size_t>(op.id)];
    if (op.lane == Lane::kCpuOptim && op.step == first) sp.end = sp.start + 20 * (sp.end - sp.start);
    if (op.lane == Lane::kNvmeRead) sp.end = sp.start + (sp.end - sp.start) * 13 / 10;
  }
  const Comparison c = compare(s.schedule, s.timeline, s.schedule, measured).value();
  const auto extra = [&](Lane lane) {
    const auto l = static_cast<size_t>(lane);
    return c.measured.lanes[l].busy - c.predicted.lanes[l].busy;
  };
  // Over the whole trace the warm-up's optimizer is further off...
  ASSERT_GT(extra(Lane::kCpuOptim), extra(Lane::kNvmeRead));
  EXPECT_EQ(c.steady_busy_error[static_cast<size_t>(Lane::kCpuOptim)].value_or(1), 0);
  // ...and per steady step the reads are.
  ASSERT_TRUE(c.most_wrong_lane.has_value());
  EXPECT_EQ(*c.most_wrong_lane, Lane::kNvmeRead);
}

TEST(Compare, DifferentSchedulesAreRefused) {
  const testing::Simulated a = testing::simulated({}, 1);
  const testing::Simulated b = testing::simulated({}, 2);
  const auto c = compare(a.schedule, a.timeline, b.schedule, b.timeline, "p.json", "m.json");
  ASSERT_FALSE(c.has_value());
  EXPECT_NE(core::to_string(c.error()).find("m.json"), std::string::npos);
}

TEST(Compare, RelativeErrorHasNoInfinity) {
  EXPECT_EQ(relative_error(0, 0), 0);
  EXPECT_EQ(relative_error(0, 5), 1);
  EXPECT_DOUBLE_EQ(relative_error(2, 3), 0.5);
  EXPECT_DOUBLE_EQ(relative_error(4, 3), -0.25);
}


// A warm-up that only the first step pays (its copies five times as long) is in
// the whole trace's busy error and not in the steady one: the lane's model
// is right for every step the steady step time is made of.
TEST(Compare, AFirstStepSlowedIsNotASteadyBusyError) {
  const testing::Simulated s = testing::simulated({});
  core::Timeline measured = s.timeline;
  int first = s.schedule.ops.front().step;
  for (const core::Op& op : s.schedule.ops) first = std::min(first, std::max(0, op.step));
  for (const core::Op& op : s.schedule.ops) {
    if (op.lane != Lane::kPcieH2d || std::max(0, op.step) != first) continue;
    core::OpSpan& sp = measured.spans[static_cast<size_t>(op.id)];
    sp.end = sp.start + 5 * (sp.end - sp.start);
  }
  const Comparison c = compare(s.schedule, s.timeline, s.schedule, measured).value();
  const auto h2d = static_cast<size_t>(Lane::kPcieH2d);
  EXPECT_GT(*c.busy_error[h2d], 0.05);
  EXPECT_NEAR(c.steady_busy_error[h2d].value(), 0, 1e-9);
}

}  // namespace
}  // namespace stowage::calibration
