// Step marks as `stowage simulate` measures the steady state: steps begin
// at their first forward op, the window is the last two step intervals.
#include "gui/step_marks.h"

#include <gtest/gtest.h>

#include "gui/trace_from_timeline.h"
#include "gui_test_data.h"

namespace stowage::gui {
namespace {

// Four steps: a forward op at 0, 100, 220 and 330 ns (each 40 ns), and an
// NVMe read from 5 ns before each forward for 60 ns.
TraceModel four_steps() {
  TraceModel m;
  m.tracks.push_back({.name = "gpu.compute", .lane = core::Lane::kGpuCompute});
  m.tracks.push_back({.name = "nvme.read", .lane = core::Lane::kNvmeRead});
  const SimTime starts[] = {0, 100, 220, 330};
  for (int s = 0; s < 4; ++s) {
    const SimTime t = starts[s];
    m.ops.push_back(
        {.id = 2 * s, .track = 0, .kind = core::OpKind::kForward, .start = t, .end = t + 40, .step = s});
    m.ops.push_back({.id = 2 * s + 1,
                     .track = 1,
                     .kind = core::OpKind::kReadStates,
                     .lane = core::Lane::kNvmeRead,
                     .start = std::max<SimTime>(0, t - 5),
                     .end = t + 55,
                     .step = s});
    m.tracks[0].ops.push_back(2 * s);
    m.tracks[1].ops.push_back(2 * s + 1);
  }
  m.finish();
  return m;
}

TEST(StepMarks, TheSteadyWindowIsTheLastTwoStepIntervals) {
  const TraceModel m = four_steps();
  const StepMarks marks = step_marks(m, lane_busy(m));
  ASSERT_EQ(marks.steps.size(), 4u);
  EXPECT_EQ(marks.steps[1].start, 100);
  EXPECT_EQ(marks.steps[3].start, 330);
  ASSERT_TRUE(marks.steady.has_value());
  // Window [100, 330): two intervals, 115 ns per step.
  EXPECT_EQ(marks.steady->begin, 100);
  EXPECT_EQ(marks.steady->end, 330);
  EXPECT_EQ(marks.steady->step_time, 115);
  // In the window: compute busy [100, 140) and [220, 260), 80 ns; the NVMe
  // reads [95, 155) -> [100, 155), [215, 275) and [325, 385) -> [325, 330):
  // 55 + 60 + 5 = 120 ns. The reads bound it, 120 / 230.
  EXPECT_EQ(marks.steady->bound, core::Lane::kNvmeRead);
  EXPECT_DOUBLE_EQ(marks.steady->bound_share, 120.0 / 230.0);
}

TEST(StepMarks, OneStepHasNoWindow) {
  TraceModel m = testing::synthetic_model(10, 2, 10, 0);  // every op in step 0
  const StepMarks marks = step_marks(m, lane_busy(m));
  EXPECT_EQ(marks.steps.size(), 1u);
  EXPECT_FALSE(marks.steady.has_value());
}

TEST(StepMarks, AgreesWithTheSimulatorsSummary) {
  const testing::Simulated s = testing::tiny_simulated(core::StandardPlacement::kZeroInfinity);
  const TraceModel m = trace_from_timeline(s.schedule, s.timeline, {.source = "predicted"});
  const StepMarks marks = step_marks(m, lane_busy(m));
  ASSERT_TRUE(marks.steady.has_value());
  EXPECT_NEAR(static_cast<double>(marks.steady->step_time) * 1e-9, s.summary.step_time.value(), 1e-9);
  EXPECT_EQ(marks.steady->end - marks.steady->step_time, s.summary.window_start);
  EXPECT_EQ(marks.steady->bound, s.summary.bounding_lane);
}

}  // namespace
}  // namespace stowage::gui
