#include "gui/compare_model.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "gui/model_metrics.h"

namespace stowage::gui {
namespace {

std::optional<int32_t> lookup(const std::vector<int32_t>& map, int32_t i) {
  if (i < 0 || static_cast<size_t>(i) >= map.size() || map[static_cast<size_t>(i)] < 0) return std::nullopt;
  return map[static_cast<size_t>(i)];
}

struct LaneSums {
  int matched = 0;
  std::vector<double> abs_errors;  // |measured - predicted| / predicted, of ops predicted to take time
};

// The median (the upper middle of an even count); 0 for none.
double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

// Of the timeline's first op's start to last op's end.
double share(SimTime busy, SimTime makespan) {
  return makespan > 0 ? static_cast<double>(busy) / static_cast<double>(makespan) : 0;
}

}  // namespace

DurationChange duration_change(SimTime predicted, SimTime measured) {
  if (predicted <= 0) return DurationChange::kNone;
  const double change = static_cast<double>(measured - predicted) / static_cast<double>(predicted);
  if (change > kChangeThreshold) return DurationChange::kSlower;
  if (change < -kChangeThreshold) return DurationChange::kFaster;
  return DurationChange::kNone;
}

CompareModel::CompareModel(const TraceModel& predicted, const TraceModel& measured)
    : to_measured_(predicted.ops.size(), -1),
      to_predicted_(measured.ops.size(), -1),
      changes_(measured.ops.size(), DurationChange::kNone) {
  std::array<LaneSums, core::kLaneCount> sums{};
  for (size_t p = 0; p < predicted.ops.size(); ++p) {
    const TraceOp& a = predicted.ops[p];
    const std::optional<int32_t> m = measured.index_of_id(a.id);
    if (!m) continue;
    to_measured_[p] = *m;
    to_predicted_[static_cast<size_t>(*m)] = static_cast<int32_t>(p);
    const TraceOp& b = measured.ops[static_cast<size_t>(*m)];
    changes_[static_cast<size_t>(*m)] = duration_change(a.duration(), b.duration());
    errors_.push_back({.predicted_op = static_cast<int32_t>(p),
                       .measured_op = *m,
                       .predicted = a.duration(),
                       .measured = b.duration()});
    LaneSums& s = sums[static_cast<size_t>(a.lane)];
    ++s.matched;
    if (a.duration() > 0) {
      s.abs_errors.push_back(std::abs(static_cast<double>(b.duration() - a.duration())) /
                             static_cast<double>(a.duration()));
    }
  }
  // The figures `stowage compare` prints, computed by the same code.
  const calibration::TraceMetrics pm = metrics_of(predicted), mm = metrics_of(measured);
  predicted_makespan_ = pm.makespan;
  measured_makespan_ = mm.makespan;
  predicted_step_ = pm.steady_step_time();
  measured_step_ = mm.steady_step_time();
  int matched = 0;
  for (const core::Lane lane : core::kAllLanes) {
    const LaneSums& s = sums[static_cast<size_t>(lane)];
    if (s.matched == 0) continue;
    matched += s.matched;
    const calibration::LaneMetrics& p = pm.lanes[static_cast<size_t>(lane)];
    const calibration::LaneMetrics& m = mm.lanes[static_cast<size_t>(lane)];
    lanes_.push_back(
        {.lane = lane,
         .matched = s.matched,
         .predicted_busy = p.busy,
         .measured_busy = m.busy,
         .predicted_share = share(p.busy, pm.makespan),
         .measured_share = share(m.busy, mm.makespan),
         .busy_error = calibration::relative_error(static_cast<double>(p.busy), static_cast<double>(m.busy)),
         .predicted_steady_busy = p.steady_busy,
         .measured_steady_busy = m.steady_busy,
         .steady_busy_error = calibration::relative_error(static_cast<double>(p.steady_busy),
                                                          static_cast<double>(m.steady_busy)),
         .median_abs_op_error = median_of(s.abs_errors)});
  }
  unmatched_ = static_cast<int>(predicted.ops.size() + measured.ops.size()) - 2 * matched;
}

std::vector<OpError> CompareModel::largest_errors(size_t count) const {
  std::vector<OpError> out = errors_;
  const auto larger = [](const OpError& a, const OpError& b) {
    const SimTime ea = std::abs(a.error()), eb = std::abs(b.error());
    return ea != eb ? ea > eb : a.predicted_op < b.predicted_op;
  };
  const auto n = static_cast<std::ptrdiff_t>(std::min(count, out.size()));
  std::ranges::partial_sort(out, out.begin() + n, larger);
  out.resize(static_cast<size_t>(n));
  return out;
}

std::optional<int32_t> CompareModel::measured_of(int32_t predicted_op) const {
  return lookup(to_measured_, predicted_op);
}
std::optional<int32_t> CompareModel::predicted_of(int32_t measured_op) const {
  return lookup(to_predicted_, measured_op);
}

}  // namespace stowage::gui
