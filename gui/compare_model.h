// A predicted and a measured timeline of the same schedule side by side:
// ops matched by their schedule id, and the error per lane (how much longer
// or shorter each lane was busy than predicted). A lane's busy time is the
// union of its ops' spans, as sim::Summary counts it: a lane with four
// slots busy at once for 1 s was busy 1 s, not 4. Busy and step figures
// are calibration::trace_metrics' (gui/model_metrics.h), so the panel shows
// what `stowage compare` prints. GUI-free.
#pragma once

#include <optional>
#include <vector>

#include "calibration/compare.h"
#include "gui/trace_model.h"

namespace stowage::gui {

// A measured op against its prediction: more than kChangeThreshold
// (relative) longer is slower, shorter is faster; within it, unmatched or
// predicted to take no time is kNone.
enum class DurationChange : uint8_t { kNone, kFaster, kSlower };
inline constexpr double kChangeThreshold = 0.10;
[[nodiscard]] DurationChange duration_change(SimTime predicted, SimTime measured);

struct LaneError {
  core::Lane lane = core::Lane::kGpuCompute;
  int matched = 0;             // ops found in both
  SimTime predicted_busy = 0;  // ns during which at least one of the lane's ops ran, all ranks together
  SimTime measured_busy = 0;
  double predicted_share = 0;    // predicted_busy over the predicted makespan, 0..1
  double measured_share = 0;     // measured_busy over the measured makespan
  double busy_error = 0;         // calibration::relative_error of the busy times
  // Busy ns per step after the first (LaneMetrics::steady_busy): the
  // warm-up's page faults and pool fills left out, as the step time leaves
  // them out.
  SimTime predicted_steady_busy = 0;
  SimTime measured_steady_busy = 0;
  double steady_busy_error = 0;
  // The median over ops of |measured - predicted| / predicted duration: a
  // mean is ruled by the few ops predicted to take microseconds (a
  // 16 KiB copy measured at 100x its prediction), a median by the typical op.
  double median_abs_op_error = 0;
};

// One matched op's error: measured minus predicted duration.
struct OpError {
  int32_t predicted_op = 0;             // index into the predicted model's ops
  int32_t measured_op = 0;              // index into the measured model's ops
  SimTime predicted = 0, measured = 0;  // durations, ns
  [[nodiscard]] SimTime error() const { return measured - predicted; }
  // (measured - predicted) / predicted; 0 when nothing was predicted.
  [[nodiscard]] double relative() const {
    return predicted > 0 ? static_cast<double>(error()) / static_cast<double>(predicted) : 0;
  }
};

class CompareModel {
 public:
  // Both models must outlive nothing: the comparison keeps only indices.
  CompareModel(const TraceModel& predicted, const TraceModel& measured);

  [[nodiscard]] std::optional<int32_t> measured_of(int32_t predicted_op) const;
  [[nodiscard]] std::optional<int32_t> predicted_of(int32_t measured_op) const;
  [[nodiscard]] const std::vector<LaneError>& lanes() const { return lanes_; }  // lanes with matched ops
  [[nodiscard]] int unmatched() const { return unmatched_; }                    // ops in only one of the two
  // First op's start to last op's end (TraceMetrics::makespan), and
  // calibration::relative_error of the two: compare's "whole timeline".
  [[nodiscard]] SimTime predicted_makespan() const { return predicted_makespan_; }
  [[nodiscard]] SimTime measured_makespan() const { return measured_makespan_; }
  [[nodiscard]] double makespan_error() const { return error_of(predicted_makespan_, measured_makespan_); }
  // The steady-state step (TraceMetrics::steady_step_time) of each, and
  // calibration::relative_error of the two: compare's "step time".
  [[nodiscard]] SimTime predicted_step() const { return predicted_step_; }
  [[nodiscard]] SimTime measured_step() const { return measured_step_; }
  [[nodiscard]] double step_error() const { return error_of(predicted_step_, measured_step_); }
  // By measured op index.
  [[nodiscard]] const std::vector<DurationChange>& measured_changes() const { return changes_; }
  // The `count` matched ops with the largest absolute error, largest first
  // (ties by predicted op index).
  [[nodiscard]] std::vector<OpError> largest_errors(size_t count) const;

 private:
  static double error_of(SimTime predicted, SimTime measured) {
    return calibration::relative_error(static_cast<double>(predicted), static_cast<double>(measured));
  }
  std::vector<int32_t> to_measured_, to_predicted_;  // -1 where unmatched
  std::vector<OpError> errors_;                      // every matched op, by predicted index
  std::vector<DurationChange> changes_;
  std::vector<LaneError> lanes_;
  int unmatched_ = 0;
  SimTime predicted_makespan_ = 0, measured_makespan_ = 0;
  SimTime predicted_step_ = 0, measured_step_ = 0;
};

}  // namespace stowage::gui
