// Comparing a predicted timeline with a measured one: a synthetic measured
// run made by stretching the predicted NVMe reads by 20 % and the compute by
// 5 %, so the per-lane errors are known in advance.
#include "gui/compare_model.h"

#include <gtest/gtest.h>

#include "calibration/compare.h"

#include <algorithm>
#include <cmath>

#include "gui/op_tooltip.h"
#include "gui/trace_from_timeline.h"
#include "gui_test_data.h"

namespace stowage::gui {
namespace {

// Each op keeps its start; its duration is scaled by its lane's factor.
TraceModel perturbed(const testing::Simulated& s) {
  core::Timeline t = s.timeline;
  for (size_t i = 0; i < t.spans.size(); ++i) {
    const core::Lane lane = s.schedule.ops[i].lane;
    const double factor = lane == core::Lane::kNvmeRead ? 1.2 : lane == core::Lane::kGpuCompute ? 1.05 : 1.0;
    const double duration = static_cast<double>(t.spans[i].end - t.spans[i].start) * factor;
    t.spans[i].end = t.spans[i].start + static_cast<SimTime>(std::llround(duration));
  }
  return trace_from_timeline(s.schedule, t, {.title = "tiny-gpt", .source = "measured"});
}

TEST(CompareModel, MatchesOpsByIdAndMeasuresTheErrorPerLane) {
  const testing::Simulated s = testing::tiny_simulated(core::StandardPlacement::kZeroInfinity);
  const TraceModel predicted = trace_from_timeline(s.schedule, s.timeline, {.source = "predicted"});
  const TraceModel measured = perturbed(s);
  const CompareModel c(predicted, measured);
  EXPECT_EQ(c.unmatched(), 0);
  for (size_t p = 0; p < predicted.ops.size(); ++p) {
    const std::optional<int32_t> m = c.measured_of(static_cast<int32_t>(p));
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(measured.ops[static_cast<size_t>(*m)].id, predicted.ops[p].id);
    EXPECT_EQ(c.predicted_of(*m), static_cast<int32_t>(p));
  }
  bool saw_nvme = false;
  for (const LaneError& lane : c.lanes()) {
    const double expected = lane.lane == core::Lane::kNvmeRead     ? 0.2
                            : lane.lane == core::Lane::kGpuCompute ? 0.05
                                                                   : 0;
    EXPECT_NEAR(lane.median_abs_op_error, expected, 1e-3) << core::to_string(lane.lane);
    // Busy is a union of spans: never more than the timeline, whatever the slots.
    EXPECT_LE(lane.predicted_share, 1.0) << core::to_string(lane.lane);
    EXPECT_LE(lane.measured_share, 1.0) << core::to_string(lane.lane);
    if (expected == 0) {
      EXPECT_NEAR(lane.busy_error, 0, 1e-9) << core::to_string(lane.lane);
    }
    saw_nvme = saw_nvme || lane.lane == core::Lane::kNvmeRead;
  }
  EXPECT_TRUE(saw_nvme);
}

// One op predicted at a microsecond and measured at a millisecond does not
// make the lane's typical op error 100 000 %: the column is a median.
TEST(CompareModel, ALanesOpErrorIsTheMedianNotRuledByOneTinyOp) {
  const testing::Simulated s = testing::tiny_simulated(core::StandardPlacement::kZeroInfinity);
  const TraceModel predicted = trace_from_timeline(s.schedule, s.timeline, {.source = "predicted"});
  core::Timeline t = s.timeline;
  bool first = true;
  for (size_t i = 0; i < t.spans.size(); ++i) {
    if (s.schedule.ops[i].lane != core::Lane::kNvmeRead) continue;
    const SimTime d = t.spans[i].end - t.spans[i].start;
    t.spans[i].end = t.spans[i].start + (first ? 1000 * d : d + d / 10);  // one 1000x, the rest +10 %
    first = false;
  }
  const TraceModel measured = trace_from_timeline(s.schedule, t, {.title = "tiny-gpt", .source = "measured"});
  const CompareModel c(predicted, measured);
  const auto nvme = std::ranges::find(c.lanes(), core::Lane::kNvmeRead, &LaneError::lane);
  ASSERT_NE(nvme, c.lanes().end());
  ASSERT_GE(nvme->matched, 3);
  EXPECT_NEAR(nvme->median_abs_op_error, 0.1, 1e-3);
}

TEST(CompareModel, BusyIsTheUnionOfTheLanesSlots) {
  // nvme.read on two slots, [0, 100) and [50, 150) ns, and compute [0, 200):
  // the read lane was busy 150 ns of a 200 ns timeline (75 %), not 200 ns.
  // Measured: the second read runs to 190 ns, so 190 ns busy, +26.7 %.
  const auto model = [](SimTime second_end) {
    TraceModel m;
    m.tracks.push_back({.name = "gpu.compute", .lane = core::Lane::kGpuCompute});
    m.tracks.push_back({.name = "nvme.read", .lane = core::Lane::kNvmeRead});
    m.tracks.push_back({.name = "nvme.read #2", .lane = core::Lane::kNvmeRead});
    m.ops.push_back({.id = 0, .track = 0, .start = 0, .end = 200});
    m.ops.push_back({.id = 1, .track = 1, .lane = core::Lane::kNvmeRead, .start = 0, .end = 100});
    m.ops.push_back({.id = 2, .track = 2, .lane = core::Lane::kNvmeRead, .start = 50, .end = second_end});
    for (int32_t i = 0; i < 3; ++i) m.tracks[static_cast<size_t>(i)].ops.push_back(i);
    m.finish();
    return m;
  };
  const CompareModel c(model(150), model(190));
  const LaneError* read = nullptr;
  for (const LaneError& l : c.lanes()) read = l.lane == core::Lane::kNvmeRead ? &l : read;
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->matched, 2);
  EXPECT_EQ(read->predicted_busy, 150);
  EXPECT_DOUBLE_EQ(read->predicted_share, 0.75);
  EXPECT_EQ(read->measured_busy, 190);
  EXPECT_DOUBLE_EQ(read->measured_share, 0.95);
  EXPECT_NEAR(read->busy_error, 40.0 / 150.0, 1e-12);
}

// The panel's busy, per-step and step figures are the ones `stowage
// compare` prints for the same pair. The measured run's second step has its
// NVMe reads 1.5x longer and the first (the warm-up) as predicted, so the
// whole-trace and per-step errors differ: a panel that took one for the
// other would fail.
TEST(CompareModel, ShowsTheFiguresStowageCompareComputes) {
  const testing::Simulated s = testing::tiny_simulated(core::StandardPlacement::kZeroInfinity);
  ASSERT_EQ(s.schedule.steps, 2);
  core::Timeline t = s.timeline;
  for (size_t i = 0; i < t.spans.size(); ++i) {
    const core::Op& op = s.schedule.ops[i];
    if (op.lane != core::Lane::kNvmeRead) continue;
    const double factor = op.step <= 0 ? 1.0 : 1.5;
    const double duration = static_cast<double>(t.spans[i].end - t.spans[i].start) * factor;
    t.spans[i].end = t.spans[i].start + static_cast<SimTime>(std::llround(duration));
  }
  const calibration::Comparison cli = *calibration::compare(s.schedule, s.timeline, s.schedule, t);
  const CompareModel c(trace_from_timeline(s.schedule, s.timeline, {.source = "predicted"}),
                       trace_from_timeline(s.schedule, t, {.source = "measured"}));
  EXPECT_DOUBLE_EQ(c.step_error(), cli.step_error);
  EXPECT_DOUBLE_EQ(c.makespan_error(), cli.makespan_error);
  EXPECT_EQ(c.measured_makespan(), cli.measured.makespan);
  EXPECT_EQ(c.predicted_step(), cli.predicted.steady_step_time());
  EXPECT_EQ(c.measured_step(), cli.measured.steady_step_time());
  ASSERT_FALSE(c.lanes().empty());
  bool saw_read = false;
  for (const LaneError& lane : c.lanes()) {
    const auto l = static_cast<size_t>(lane.lane);
    SCOPED_TRACE(core::to_string(lane.lane));
    EXPECT_EQ(lane.predicted_busy, cli.predicted.lanes[l].busy);
    EXPECT_EQ(lane.measured_steady_busy, cli.measured.lanes[l].steady_busy);
    EXPECT_DOUBLE_EQ(lane.busy_error, cli.busy_error[l].value_or(0));
    EXPECT_DOUBLE_EQ(lane.steady_busy_error, cli.steady_busy_error[l].value_or(0));
    if (lane.lane == core::Lane::kNvmeRead) {
      saw_read = true;
      EXPECT_GT(lane.steady_busy_error, lane.busy_error + 0.05);  // the warm-up dilutes the whole trace's
    }
  }
  EXPECT_TRUE(saw_read);
}

TEST(CompareModel, OpsInOnlyOneTimelineAreCounted) {
  const TraceModel a = testing::synthetic_model(10, 2, 10, 0);
  const TraceModel b = testing::synthetic_model(7, 2, 10, 0);
  const CompareModel c(a, b);
  EXPECT_EQ(c.unmatched(), 3);
  EXPECT_FALSE(c.measured_of(9).has_value());
}

TEST(OpTooltip, ShowsNameTensorClassBytesTimesAndBandwidth) {
  TraceOp op{.id = 2,
             .category = OpCategory::kH2d,
             .kind = core::OpKind::kUploadParams,
             .lane = core::Lane::kPcieH2d,
             .start = 2000,
             .end = 3500,
             .partition = 0,
             .tensor_class = core::TensorClass::kParam16,
             .bytes = core::Bytes(4000)};
  const std::string text = op_tooltip(op, "upload param16 layers.0");
  EXPECT_NE(text.find("upload param16 layers.0"), std::string::npos);
  EXPECT_NE(text.find("partition: 0"), std::string::npos);
  EXPECT_NE(text.find("tensor class: param16"), std::string::npos);
  EXPECT_NE(text.find("bytes: 4 kB"), std::string::npos);
  EXPECT_NE(text.find("start: 2 µs"), std::string::npos);
  EXPECT_NE(text.find("duration: 1.5 µs"), std::string::npos);
  EXPECT_NE(text.find("bandwidth: 2.667 GB/s"), std::string::npos);  // 4000 B / 1.5 µs
  TraceOp later = op;
  later.start += 100;
  later.end += 400;  // 1.8 µs: 20 % longer
  EXPECT_EQ(difference_line(op, later, "measured"), "measured: 1.8 µs (+20.0 %), starts 100 ns later");
}

}  // namespace
}  // namespace stowage::gui
