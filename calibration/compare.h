// A predicted and a measured timeline of the same schedule, op by op (ops
// match by id): the step-time error, each lane's busy-time error, the
// duration error of each kind of op (median and 90th percentile), the lane
// whose model is most wrong, and both traces' own metrics
// (trace_metrics.h). Errors are (measured - predicted) / predicted.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "calibration/trace_metrics.h"
#include "core/diagnostic.h"
#include "core/schedule.h"
#include "core/timeline.h"

namespace stowage::calibration {

struct KindError {
  core::Lane lane = core::Lane::kGpuCompute;
  core::OpKind kind = core::OpKind::kForward;
  int ops = 0;
  double median = 0;  // of (measured - predicted) / predicted duration, signed
  double p90 = 0;     // 90th percentile of |that|
};

struct Comparison {
  TraceMetrics predicted, measured;
  int matched_ops = 0;
  double step_error = 0;         // of the steady-state step (TraceMetrics::steady_step_time)
  double makespan_error = 0;     // of the whole timeline
  std::array<std::optional<double>, core::kLaneCount> busy_error{};  // nullopt: lane idle in both
  // Of LaneMetrics::steady_busy, the busy time per step after the warm-up:
  // the lanes' share of what step_error compares.
  std::array<std::optional<double>, core::kLaneCount> steady_busy_error{};
  std::vector<KindError> kinds;  // lane order, then kind order
  // The lane whose busy time per steady step (LaneMetrics::steady_busy) is
  // furthest off, in ns: where the model costs the predicted step most.
  // nullopt when no lane is off at all.
  std::optional<core::Lane> most_wrong_lane;
};

// Both schedules must hold the same ops (same count, and each id the same
// kind on the same lane); otherwise diagnostics naming the first mismatches.
// `predicted_name` and `measured_name` name the inputs in them.
[[nodiscard]] core::Result<Comparison> compare(const core::Schedule& predicted_schedule,
                                               const core::Timeline& predicted,
                                               const core::Schedule& measured_schedule,
                                               const core::Timeline& measured,
                                               const std::string& predicted_name = "predicted",
                                               const std::string& measured_name = "measured");

// (measured - predicted) / predicted; 0 when both are 0, and +inf-free: a
// prediction of 0 against something measured gives 1 (100 %).
[[nodiscard]] double relative_error(double predicted, double measured);

}  // namespace stowage::calibration
