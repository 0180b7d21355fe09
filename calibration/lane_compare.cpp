#include "calibration/lane_compare.h"

#include <algorithm>
#include <cmath>

#include "calibration/compare.h"

namespace stowage::calibration {
namespace {

double steps_of(const TraceMetrics& m) {
  return static_cast<double>(std::max<size_t>(1, m.step_times.size()));
}

}  // namespace

double busy_per_step(const TraceMetrics& m, core::Lane lane) {
  return static_cast<double>(m.lanes[static_cast<size_t>(lane)].busy) / steps_of(m);
}

double exposed_per_step(const TraceMetrics& m, core::Lane lane) {
  return static_cast<double>(m.lanes[static_cast<size_t>(lane)].exposed()) / steps_of(m);
}

double no_lane_per_step(const TraceMetrics& m) {
  core::SimTime steps = 0;
  for (core::SimTime s : m.step_times) steps += s;
  return static_cast<double>(std::max<core::SimTime>(0, steps - m.any_lane_busy)) / steps_of(m);
}

LaneComparison compare_lanes(const TraceMetrics& predicted, const TraceMetrics& measured) {
  LaneComparison c{.predicted = predicted, .measured = measured};
  c.step_error = relative_error(static_cast<double>(predicted.steady_step_time()),
                                static_cast<double>(measured.steady_step_time()));
  double worst = 0;
  for (core::Lane lane : core::kAllLanes) {
    const double p = busy_per_step(predicted, lane), m = busy_per_step(measured, lane);
    if (p == 0 && m == 0) continue;
    c.busy_error[static_cast<size_t>(lane)] = relative_error(p, m);
    if (std::abs(m - p) > worst) {
      worst = std::abs(m - p);
      c.most_wrong_lane = lane;
    }
  }
  return c;
}

}  // namespace stowage::calibration
