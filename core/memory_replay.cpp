#include "core/memory_replay.h"

#include <algorithm>
#include <tuple>
#include <vector>

namespace stowage::core {

std::vector<MemoryEvent> memory_events(const Schedule& schedule, const Timeline& timeline) {
  std::vector<MemoryEvent> events;
  events.reserve(2 * schedule.ops.size());
  for (size_t i = 0; i < schedule.ops.size() && i < timeline.spans.size(); ++i) {
    const Op& op = schedule.ops[i];
    const OpSpan& span = timeline.spans[i];
    if (!op.allocs.empty()) events.push_back({span.start, true, op.id});
    if (!op.frees.empty()) events.push_back({std::max(span.start, span.end), false, op.id});
  }
  std::ranges::sort(events, [](const MemoryEvent& a, const MemoryEvent& b) {
    return std::tie(a.time, a.start, a.op) < std::tie(b.time, b.start, b.op);
  });
  return events;
}

std::array<Bytes, 3> replay_peak(const Schedule& schedule, const Timeline& timeline) {
  std::array<Bytes, 3> in_use = schedule.resident;
  std::array<Bytes, 3> peak = in_use;
  for (const MemoryEvent& event : memory_events(schedule, timeline)) {
    const Op& op = schedule.op(event.op);
    for (const MemoryEffect& e : event.start ? op.allocs : op.frees) {
      Bytes& tier = in_use[static_cast<size_t>(e.tier)];
      tier = event.start ? tier + e.bytes : tier - e.bytes;
      peak[static_cast<size_t>(e.tier)] = std::max(peak[static_cast<size_t>(e.tier)], tier);
    }
  }
  return peak;
}

}  // namespace stowage::core
