// A predicted timeline against a measured one that shares no op ids with it
// (a PyTorch profiler trace, kineto_trace.h), lane by lane: the
// steady-state step, and each lane's busy and exposed time per step, from
// each trace's totals over its own steps (the two need not have as many).
// Errors are (measured - predicted) / predicted, as in compare.h.
#pragma once

#include <array>
#include <optional>

#include "calibration/trace_metrics.h"
#include "core/schedule.h"

namespace stowage::calibration {

struct LaneComparison {
  TraceMetrics predicted, measured;
  double step_error = 0;                                             // of TraceMetrics::steady_step_time
  std::array<std::optional<double>, core::kLaneCount> busy_error{};  // per step; nullopt: idle in both
  // The lane whose busy time per step is furthest off, in ns; nullopt when
  // none is off at all.
  std::optional<core::Lane> most_wrong_lane;
};

// A lane's busy and exposed (not hidden behind gpu.compute) ns per step.
[[nodiscard]] double busy_per_step(const TraceMetrics& m, core::Lane lane);
[[nodiscard]] double exposed_per_step(const TraceMetrics& m, core::Lane lane);
// ns per step that no lane covers: the steps' total less every lane's busy
// time together (on a PyTorch profiler trace, the framework's host work
// between operators; on a prediction, waits the schedule leaves).
[[nodiscard]] double no_lane_per_step(const TraceMetrics& m);

[[nodiscard]] LaneComparison compare_lanes(const TraceMetrics& predicted, const TraceMetrics& measured);

}  // namespace stowage::calibration
