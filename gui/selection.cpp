#include "gui/selection.h"

#include <algorithm>

namespace stowage::gui {

Selection select_op(const TraceModel& model, std::optional<int32_t> op) {
  Selection s{.op = op};
  if (!op || *op < 0 || static_cast<size_t>(*op) >= model.ops.size()) return {};
  const auto deps = model.deps(*op);
  const auto consumers = model.consumers(*op);
  s.waits_on.assign(deps.begin(), deps.end());
  s.waited_by.assign(consumers.begin(), consumers.end());
  return s;
}

std::optional<int32_t> op_at(const TraceModel& model, int32_t track, SimTime time, SimTime tolerance) {
  if (track < 0 || static_cast<size_t>(track) >= model.tracks.size()) return std::nullopt;
  const std::vector<int32_t>& ops = model.tracks[static_cast<size_t>(track)].ops;
  const auto at = [&](int32_t i) -> const TraceOp& { return model.ops[static_cast<size_t>(i)]; };
  // The first op starting after `time`; the one before it may contain it.
  const auto next = std::ranges::upper_bound(ops, time, {}, [&](int32_t i) { return at(i).start; });
  std::optional<int32_t> best;
  SimTime best_distance = tolerance + 1;
  const auto consider = [&](int32_t i) {
    const SimTime d = time < at(i).start ? at(i).start - time : (time > at(i).end ? time - at(i).end : 0);
    if (d < best_distance) best = i, best_distance = d;
  };
  if (next != ops.end()) consider(*next);
  // Ops of one track rarely overlap; look back a few for one that does.
  auto it = next;
  for (int k = 0; k < 8 && it != ops.begin(); ++k) consider(*--it);
  return best;
}

}  // namespace stowage::gui
