#include "calibration/trace_metrics.h"

#include <gtest/gtest.h>

namespace stowage::calibration {
namespace {

using core::Lane;
using core::OpKind;

// Worked by hand: compute op A [0, 10), an upload U [5, 25) of 2000 bytes,
// compute op B [25, 30) waiting for U. Compute busy 15, idle 30 - 15 = 15,
// all of it B's wait for U (the gap [10, 25)). U overlaps A on [5, 10):
// 5 ns hidden, 15 exposed. U moved 2000 B in 20 ns: 100 GB/s.
TEST(TraceMetrics, HandWorkedExample) {
  core::Schedule s;
  s.ops = {{.id = 0, .kind = OpKind::kForward, .lane = Lane::kGpuCompute},
           {.id = 1, .kind = OpKind::kUploadParams, .lane = Lane::kPcieH2d, .bytes = core::Bytes(2000)},
           {.id = 2, .kind = OpKind::kBackward, .lane = Lane::kGpuCompute, .deps = {0, 1}}};
  core::Timeline t{.spans = {{0, 10, 0}, {5, 25, 0}, {25, 30, 0}}, .memory = {}};
  const TraceMetrics m = trace_metrics(s, t);
  EXPECT_EQ(m.makespan, 30);
  const LaneMetrics& gpu = m.lanes[static_cast<size_t>(Lane::kGpuCompute)];
  const LaneMetrics& h2d = m.lanes[static_cast<size_t>(Lane::kPcieH2d)];
  EXPECT_EQ(gpu.busy, 15);
  EXPECT_EQ(m.gpu_idle, 15);
  EXPECT_EQ(m.gpu_waits_on[static_cast<size_t>(Lane::kPcieH2d)], 15);
  EXPECT_EQ(h2d.busy, 20);
  EXPECT_EQ(h2d.hidden, 5);
  EXPECT_EQ(h2d.exposed(), 15);
  EXPECT_DOUBLE_EQ(h2d.achieved_bandwidth(), 2000 / 20e-9);
  ASSERT_EQ(m.step_times.size(), 1u);
  EXPECT_EQ(m.step_times[0], 30);
  // Every lane together covers [0, 30): nothing is in no lane.
  EXPECT_EQ(m.any_lane_busy, 30);
}

// Lanes that overlap count once in any_lane_busy; the gap between them is
// in no lane: compute [0, 10), an upload [5, 15), a write [40, 50).
TEST(TraceMetrics, AnyLaneBusyIsTheUnionOverLanes) {
  core::Schedule s;
  s.ops = {{.id = 0, .kind = OpKind::kForward, .lane = Lane::kGpuCompute},
           {.id = 1, .kind = OpKind::kUploadParams, .lane = Lane::kPcieH2d},
           {.id = 2, .kind = OpKind::kWriteStates, .lane = Lane::kNvmeWrite}};
  core::Timeline t{.spans = {{0, 10, 0}, {5, 15, 0}, {40, 50, 0}}, .memory = {}};
  const TraceMetrics m = trace_metrics(s, t);
  EXPECT_EQ(m.any_lane_busy, 25);
  EXPECT_EQ(m.makespan, 50);
}

// Steps end where their last op ends; the steady step skips the first.
TEST(TraceMetrics, SteadyStepIsTheMedianAfterTheFirst) {
  core::Schedule s;
  core::Timeline t;
  const core::SimTime ends[] = {100, 130, 170, 200};  // steps of 100 (warm-up), 30, 40, 30
  for (int i = 0; i < 4; ++i) {
    s.ops.push_back({.id = i, .kind = OpKind::kForward, .lane = Lane::kGpuCompute, .step = i});
    t.spans.push_back({i == 0 ? 0 : ends[i - 1], ends[i], 0});
  }
  const TraceMetrics m = trace_metrics(s, t);
  EXPECT_EQ(m.step_times, (std::vector<core::SimTime>{100, 30, 40, 30}));
  EXPECT_EQ(m.steady_step_time(), 30);
}

// The steady busy time leaves out the first step, as the steady step does,
// and averages the rest: compute ops of steps 0, 1, 2 lasting 50, 10 and 20
// ns, an op before step 0 (setup, 7 ns) counted with step 0.
TEST(TraceMetrics, SteadyBusyIsPerStepAfterTheFirst) {
  core::Schedule s;
  s.ops = {{.id = 0, .kind = OpKind::kForward, .lane = Lane::kGpuCompute, .step = -1},
           {.id = 1, .kind = OpKind::kForward, .lane = Lane::kGpuCompute, .step = 0},
           {.id = 2, .kind = OpKind::kForward, .lane = Lane::kGpuCompute, .step = 1},
           {.id = 3, .kind = OpKind::kForward, .lane = Lane::kGpuCompute, .step = 2}};
  core::Timeline t{.spans = {{0, 7, 0}, {7, 57, 0}, {57, 67, 0}, {67, 87, 0}}, .memory = {}};
  const TraceMetrics m = trace_metrics(s, t);
  const LaneMetrics& gpu = m.lanes[static_cast<size_t>(Lane::kGpuCompute)];
  EXPECT_EQ(gpu.busy, 87);
  EXPECT_EQ(gpu.steady_busy, 15);
  EXPECT_EQ(m.lanes[static_cast<size_t>(Lane::kPcieH2d)].steady_busy, 0);
  // One step: all of it.
  s.ops.resize(2);
  t.spans.resize(2);
  EXPECT_EQ(trace_metrics(s, t).lanes[static_cast<size_t>(Lane::kGpuCompute)].steady_busy, 57);
}

TEST(TraceMetrics, UnionCountsOverlapOnce) {
  EXPECT_EQ(union_length({{0, 10}, {5, 15}, {20, 30}, {25, 26}}), 25);
  EXPECT_EQ(union_length({}), 0);
}

}  // namespace
}  // namespace stowage::calibration
