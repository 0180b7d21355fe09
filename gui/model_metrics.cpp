#include "gui/model_metrics.h"

#include <algorithm>
#include <numeric>

namespace stowage::gui {

calibration::TraceMetrics metrics_of(const TraceModel& model) {
  // trace_metrics reads a lane's ops in issue order; a trace lists them by
  // lane and slot, so the schedule takes them by id (the issue order).
  std::vector<int32_t> order(model.ops.size());
  std::iota(order.begin(), order.end(), 0);
  std::ranges::sort(order, {}, [&](int32_t i) { return model.ops[static_cast<size_t>(i)].id; });
  std::vector<core::OpId> new_id(model.ops.size());
  for (size_t k = 0; k < order.size(); ++k) new_id[static_cast<size_t>(order[k])] = static_cast<core::OpId>(k);

  core::Schedule schedule;
  core::Timeline timeline;
  schedule.ops.reserve(order.size());
  timeline.spans.reserve(order.size());
  for (const int32_t i : order) {
    const TraceOp& op = model.ops[static_cast<size_t>(i)];
    core::Op& out = schedule.ops.emplace_back();
    out.id = static_cast<core::OpId>(schedule.ops.size() - 1);
    out.kind = op.kind;
    out.lane = op.lane;
    out.step = op.step;
    out.micro_step = op.micro_step;
    out.bytes = op.bytes;
    for (const int32_t d : model.deps(i)) out.deps.push_back(new_id[static_cast<size_t>(d)]);
    timeline.spans.push_back({.start = op.start, .end = op.end});
  }
  schedule.steps = model.info.steps;
  schedule.ranks = model.info.ranks;
  return calibration::trace_metrics(schedule, timeline);
}

}  // namespace stowage::gui
