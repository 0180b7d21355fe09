#include "core/memory_replay.h"

#include <algorithm>
#include <tuple>
#include <vector>

namespace stowage::core {

std::array<Bytes, 3> replay_peak(const Schedule& schedule, const Timeline& timeline) {
  // (time, 0 = end | 1 = start, op)
  std::vector<std::tuple<SimTime, int, OpId>> events;
  events.reserve(2 * schedule.ops.size());
  for (const Op& op : schedule.ops) {
    const OpSpan& span = timeline.spans.at(static_cast<size_t>(op.id));
    events.emplace_back(span.start, 1, op.id);
    events.emplace_back(span.end, 0, op.id);
  }
  std::sort(events.begin(), events.end());
  std::array<Bytes, 3> in_use = schedule.resident;
  std::array<Bytes, 3> peak = in_use;
  for (const auto& [time, starts, id] : events) {
    const Op& op = schedule.op(id);
    for (const MemoryEffect& e : starts ? op.allocs : op.frees) {
      Bytes& tier = in_use[static_cast<size_t>(e.tier)];
      tier = starts ? tier + e.bytes : tier - e.bytes;
      peak[static_cast<size_t>(e.tier)] = std::max(peak[static_cast<size_t>(e.tier)], tier);
    }
  }
  return peak;
}

}  // namespace stowage::core
