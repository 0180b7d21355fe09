// What one timeline says about itself, the measures performance engineers
// know from Holistic Trace Analysis (github.com/facebookresearch/HolisticTraceAnalysis):
// each lane's busy time (the union of its ops' spans), the time the
// compute lane is idle and which lane it was waiting on, transfer time
// hidden behind compute or exposed, and the bandwidth each lane achieved.
// Computed the same way on a predicted and a measured trace.
#pragma once

#include <array>
#include <vector>

#include "core/schedule.h"
#include "core/timeline.h"

namespace stowage::calibration {

struct LaneMetrics {
  core::SimTime busy = 0;     // ns covered by at least one of the lane's ops
  // ns per step in the steady state: the busy time of the ops of the steps
  // after the first, over their count (the first step's alone where there
  // is one). The warm-up's page faults and pool fills are in `busy`, not
  // here, as they are not in TraceMetrics::steady_step_time.
  core::SimTime steady_busy = 0;
  core::SimTime hidden = 0;   // of busy, ns during which gpu.compute was busy too (transfer lanes)
  int64_t bytes = 0;          // moved by its ops
  int ops = 0;
  // bytes / busy in B/s; 0 when the lane was never busy.
  [[nodiscard]] double achieved_bandwidth() const {
    return busy > 0 ? static_cast<double>(bytes) / (static_cast<double>(busy) * 1e-9) : 0;
  }
  [[nodiscard]] core::SimTime exposed() const { return busy - hidden; }
};

struct TraceMetrics {
  core::SimTime makespan = 0;  // first start to last end, ns
  // Each step's length: from the end of the previous step's last op (or the
  // trace's start) to the end of its own last op, by Op::step
  // (core/measured_steps.h).
  std::vector<core::SimTime> step_times;
  std::array<LaneMetrics, core::kLaneCount> lanes{};
  core::SimTime gpu_idle = 0;  // makespan minus gpu.compute's busy time
  // ns covered by an op of any lane: what the steps hold beyond it is time
  // no lane accounts for (on a framework's trace, its host-side work).
  core::SimTime any_lane_busy = 0;
  // The idle time of gpu.compute charged to the lane of the op it waited
  // for: each gap before a compute op goes to the lane of its last
  // finishing dependency off the compute lane (gpu.compute itself when it
  // has none: a gap the compute lane's own ordering made).
  std::array<core::SimTime, core::kLaneCount> gpu_waits_on{};

  // The median step after the first (warm-up), or the only step
  // (core::steady_step_length).
  [[nodiscard]] core::SimTime steady_step_time() const;
};

// `timeline.spans[i]` is the span of `schedule.ops[i]`.
[[nodiscard]] TraceMetrics trace_metrics(const core::Schedule& schedule, const core::Timeline& timeline);

// What the metrics read of a timeline, for a reader that has no
// core::Schedule (the GUI's trace model): each op's lane, step, bytes and
// span, in issue order, and its dependencies as indices into `ops`. A
// million ops take 40 MB here against 200 MB as core::Ops.
struct OpTiming {
  core::Lane lane = core::Lane::kGpuCompute;
  int32_t step = 0;
  int64_t bytes = 0;
  core::SimTime start = 0, end = 0;
  int32_t first_dep = 0, end_dep = 0;  // its dependencies: deps[first_dep, end_dep)
};
struct TimingView {
  std::vector<OpTiming> ops;
  std::vector<int32_t> deps;
};
[[nodiscard]] TraceMetrics trace_metrics(const TimingView& view);

// The union length of [start, end) spans, in any order.
[[nodiscard]] core::SimTime union_length(std::vector<std::pair<core::SimTime, core::SimTime>> spans);

[[nodiscard]] constexpr bool is_transfer_lane(core::Lane lane) {
  return lane == core::Lane::kPcieH2d || lane == core::Lane::kPcieD2h || lane == core::Lane::kNvmeRead ||
         lane == core::Lane::kNvmeWrite || lane == core::Lane::kGpuComm;
}

}  // namespace stowage::calibration
