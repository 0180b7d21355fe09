// Step marks as `stowage simulate` measures the steady state on a predicted
// trace (steps begin at their first forward op, the window is the last two
// step intervals), and as `stowage run` and `compare` do on a measured one
// (the median step after the first).
#include "gui/step_marks.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "calibration/trace_metrics.h"
#include "core/chrome_trace.h"
#include "core/trace_reader.h"
#include "gui/ruler_painter.h"
#include "gui/trace_from_timeline.h"
#include "gui/trace_loader.h"
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

// A predicted trace whose simulator step (otherData.steady_step_ns) is
// longer than its window, because the NVMe reads fell behind: the ruler
// shows the simulator's step and the lane, as `stowage simulate` prints
// them; one shorter than the window changes nothing.
TEST(StepMarks, APredictedStepLongerThanTheWindowIsTheSimulators) {
  TraceModel m = four_steps();
  m.info.steady_step = 150;
  m.info.falls_behind = core::Lane::kNvmeRead;
  const StepMarks marks = step_marks(m, lane_busy(m));
  ASSERT_TRUE(marks.steady.has_value());
  EXPECT_EQ(marks.steady->step_time, 150);
  EXPECT_TRUE(marks.steady->falls_behind);
  EXPECT_EQ(marks.steady->bound, core::Lane::kNvmeRead);
  EXPECT_EQ(marks.steady->begin, 100);  // the window itself stays where it was measured
  EXPECT_EQ(marks.steady->end, 330);
  EXPECT_TRUE(steady_labels(*marks.steady).front().contains("nvme.read falling behind"));
  EXPECT_TRUE(steady_labels(*marks.steady)[1].contains("nvme.read falling behind"));
  m.info.steady_step = 90;
  const StepMarks shorter = step_marks(m, lane_busy(m));
  EXPECT_EQ(shorter.steady->step_time, 115);
  EXPECT_FALSE(shorter.steady->falls_behind);
}

TEST(StepMarks, OneStepHasNoWindow) {
  TraceModel m = testing::synthetic_model(10, 2, 10, 0);  // every op in step 0
  const StepMarks marks = step_marks(m, lane_busy(m));
  EXPECT_EQ(marks.steps.size(), 1u);
  EXPECT_FALSE(marks.steady.has_value());
}

// Both the case where the window stands (ZeRO-Offload) and the one where
// the NVMe writes fall behind in the two steps simulated (ZeRO-Infinity:
// the one interval reads 10.1 ms, the writes need 12.2 ms a step).
TEST(StepMarks, AgreesWithTheSimulatorsSummary) {
  for (const auto which : {core::StandardPlacement::kZeroOffload, core::StandardPlacement::kZeroInfinity}) {
    const testing::Simulated s = testing::tiny_simulated(which);
    const TraceModel m = trace_from_timeline(s.schedule, s.timeline,
                                             sim::predicted_trace_options(s.summary, "predicted", s.machine));
    const StepMarks marks = step_marks(m, lane_busy(m));
    ASSERT_TRUE(marks.steady.has_value());
    EXPECT_NEAR(static_cast<double>(marks.steady->step_time) * 1e-9, s.summary.step_time.value(), 1e-9);
    EXPECT_NEAR(static_cast<double>(marks.steady->end - marks.steady->begin) * 1e-9 / marks.steady->steps,
                s.summary.window_step_time.value(), 1e-9);
    EXPECT_EQ(marks.steady->end - (marks.steady->end - marks.steady->begin) / marks.steady->steps,
              s.summary.window_start);
    EXPECT_EQ(marks.steady->bound, s.summary.bounding_lane);
    EXPECT_EQ(marks.steady->falls_behind, s.summary.falls_behind.has_value());
  }
  EXPECT_TRUE(testing::tiny_simulated(core::StandardPlacement::kZeroInfinity).summary.falls_behind.has_value());
  EXPECT_FALSE(testing::tiny_simulated(core::StandardPlacement::kZeroOffload).summary.falls_behind.has_value());
}

// The simulator's step and the lane falling behind travel in the written
// trace's otherData and come back when the GUI loads it.
TEST(StepMarks, TheSimulatorsStepIsReadBackFromAWrittenTrace) {
  const testing::Simulated s = testing::tiny_simulated(core::StandardPlacement::kZeroInfinity);
  core::TraceOptions options = sim::predicted_trace_options(s.summary, "predicted: tiny", s.machine);
  const SimTime window = static_cast<SimTime>(std::llround(s.summary.window_step_time.value() * 1e9));
  options.steady_step = window + 1'000'000;  // as if the NVMe writes needed 1 ms more a step
  options.falls_behind = core::Lane::kNvmeWrite;
  std::ostringstream text;
  core::write_chrome_trace(s.schedule, s.timeline, options, text);
  const TraceModel m = core::testing::must(parse_trace(text.str(), "predicted.json"));
  EXPECT_EQ(m.info.steady_step, window + 1'000'000);
  EXPECT_EQ(m.info.falls_behind, core::Lane::kNvmeWrite);
  const StepMarks marks = step_marks(m, lane_busy(m));
  ASSERT_TRUE(marks.steady.has_value());
  EXPECT_EQ(marks.steady->step_time, window + 1'000'000);
  EXPECT_EQ(marks.steady->bound, core::Lane::kNvmeWrite);
  EXPECT_TRUE(marks.steady->falls_behind);
}

TEST(StepMarks, AMeasuredTracesWindowIsTheStepsAfterTheFirstWithTheirMedian) {
  TraceModel m = four_steps();
  m.info.source = "measured";
  const StepMarks marks = step_marks(m, lane_busy(m));
  ASSERT_TRUE(marks.steady.has_value());
  // Steps end with their NVMe reads at 55, 155, 275 and 385 ns: lengths
  // 55, 100, 120 and 110 from the trace's start at 0. The window is the
  // three after the first, and its step the median of 100, 120 and 110.
  EXPECT_EQ(marks.steady->begin, 55);
  EXPECT_EQ(marks.steady->end, 385);
  EXPECT_EQ(marks.steady->steps, 3);
  EXPECT_EQ(marks.steady->step_time, 110);
  EXPECT_TRUE(marks.steady->median);
  // Not the last two intervals a predicted trace would take (115 ns).
  EXPECT_FALSE(step_marks(four_steps(), lane_busy(four_steps())).steady->median);
}

// The number the ruler shows for a measured run is the one `stowage
// compare` (and `stowage run`) prints for the same file: both read it back
// and take the steady step by one rule (core/measured_steps.h). Steps of
// unequal length, so that the last two intervals, the mean and the median
// all differ.
TEST(StepMarks, AMeasuredTracesStepIsTheOneCompareReads) {
  using core::testing::bundled;
  using core::testing::must;
  const core::MachineSpec machine = must(bundled().machine("workstation-24gb-1nvme"));
  const core::TrainingSpec training = must(bundled().training("tiny"));
  const core::Workload w(must(bundled().model("tiny-gpt")), training.sequence_length);
  const core::Policy policy = core::policy_for(
      core::standard_placement(core::StandardPlacement::kZeroOffload, machine.gpu_count), w, training);
  testing::Simulated run{.schedule = must(core::lower(policy, machine, w, training, {.steps = 6}))};
  run.timeline = sim::simulate(run.schedule, machine).timeline;
  // Each step's ops later by the delays of the steps before: step lengths
  // grow by 0, 3, 0, 40, 1 and 2 us.
  const SimTime extra_by_step[] = {0, 3'000, 0, 40'000, 1'000, 2'000};
  for (const core::Op& op : run.schedule.ops) {
    SimTime shift = 0;
    for (int s = 0; s <= op.step; ++s) shift += extra_by_step[s];
    core::OpSpan& span = run.timeline.spans[static_cast<size_t>(op.id)];
    span.start += shift, span.end += shift;
  }
  const std::string text = testing::trace_text(run, "measured");

  const TraceModel m = must(parse_trace(text, "measured.json"));
  const StepMarks marks = step_marks(m, lane_busy(m));
  const core::RecordedTrace read = must(core::parse_recorded_trace(text, "measured.json"));
  const calibration::TraceMetrics metrics = calibration::trace_metrics(read.schedule, read.timeline);
  ASSERT_TRUE(marks.steady.has_value());
  ASSERT_EQ(metrics.step_times.size(), 6u);
  EXPECT_EQ(marks.steady->step_time, metrics.steady_step_time());
  EXPECT_EQ(marks.steady->steps, 5);
  // The window runs from the first step's end to the last's: every step's
  // length but the first's.
  SimTime after_first = 0;
  for (size_t s = 1; s < metrics.step_times.size(); ++s) after_first += metrics.step_times[s];
  EXPECT_EQ(marks.steady->end - marks.steady->begin, after_first);
  // And the three rules differ here, so agreeing means something.
  EXPECT_NE(marks.steady->step_time, (metrics.step_times[4] + metrics.step_times[5]) / 2);
  EXPECT_NE(marks.steady->step_time, after_first / 5);
}

}  // namespace
}  // namespace stowage::gui
