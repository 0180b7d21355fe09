#include "gui/model_metrics.h"

#include <algorithm>
#include <numeric>

namespace stowage::gui {

calibration::TraceMetrics metrics_of(const TraceModel& model) {
  // trace_metrics reads a lane's ops in issue order; a trace lists them by
  // lane and slot, so the view takes them by id (the issue order).
  std::vector<int32_t> order(model.ops.size());
  std::iota(order.begin(), order.end(), 0);
  std::ranges::sort(order, {}, [&](int32_t i) { return model.ops[static_cast<size_t>(i)].id; });
  std::vector<int32_t> position(model.ops.size());
  for (size_t k = 0; k < order.size(); ++k) position[static_cast<size_t>(order[k])] = static_cast<int32_t>(k);

  calibration::TimingView view;
  view.ops.reserve(order.size());
  for (const int32_t i : order) {
    const TraceOp& op = model.ops[static_cast<size_t>(i)];
    const auto first = static_cast<int32_t>(view.deps.size());
    for (const int32_t d : model.deps(i)) view.deps.push_back(position[static_cast<size_t>(d)]);
    view.ops.push_back({.lane = op.lane, .step = op.step, .bytes = op.bytes.count(), .start = op.start,
                        .end = op.end, .first_dep = first, .end_dep = static_cast<int32_t>(view.deps.size())});
  }
  return calibration::trace_metrics(view);
}

}  // namespace stowage::gui
