#include "gui/critical_path.h"

#include <algorithm>
#include <array>

namespace stowage::gui {
namespace {

// For each op, the op before it on the same lane by id (issue order), or -1;
// only for lanes shown on a single track (streams, not queues).
std::vector<int32_t> lane_predecessors(const TraceModel& model) {
  std::array<int, core::kLaneCount> tracks_per_lane{};
  for (const Track& t : model.tracks) ++tracks_per_lane[static_cast<size_t>(t.lane)];
  std::vector<int32_t> order(model.ops.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::ranges::sort(order, {}, [&](int32_t i) { return model.ops[static_cast<size_t>(i)].id; });
  std::vector<int32_t> previous(model.ops.size(), -1);
  std::array<int32_t, core::kLaneCount> last;
  last.fill(-1);
  for (const int32_t i : order) {
    const auto lane = static_cast<size_t>(model.ops[static_cast<size_t>(i)].lane);
    if (tracks_per_lane[lane] == 1) previous[static_cast<size_t>(i)] = last[lane];
    last[lane] = i;
  }
  return previous;
}

}  // namespace

std::vector<int32_t> critical_path(const TraceModel& model) {
  if (model.ops.empty()) return {};
  const std::vector<int32_t> lane_prev = lane_predecessors(model);
  const auto op = [&](int32_t i) -> const TraceOp& { return model.ops[static_cast<size_t>(i)]; };
  int32_t at = 0;
  for (size_t i = 0; i < model.ops.size(); ++i) {
    if (model.ops[i].end >= op(at).end) at = static_cast<int32_t>(i);
  }
  std::vector<int32_t> path{at};
  while (true) {
    int32_t best = -1;
    const auto consider = [&](int32_t p) {
      if (p >= 0 && op(p).end <= op(at).start && (best < 0 || op(p).end > op(best).end)) best = p;
    };
    for (const int32_t d : model.deps(at)) consider(d);
    consider(lane_prev[static_cast<size_t>(at)]);
    if (best < 0) break;
    path.push_back(best);
    at = best;
  }
  std::ranges::reverse(path);
  return path;
}

}  // namespace stowage::gui
