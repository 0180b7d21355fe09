#include "core/memory_replay.h"

#include <algorithm>
#include <tuple>
#include <vector>

namespace stowage::core {

namespace {

// Events in the schedule's memory order, at the times the gate let them apply.
std::vector<MemoryEvent> ordered_events(const Schedule& schedule, const Timeline& timeline) {
  std::vector<MemoryEvent> events;
  events.reserve(schedule.memory_order.size());
  std::array<SimTime, 3> last{};  // per tier: when its last event applied
  for (const MemoryStep& step : schedule.memory_order) {
    if (static_cast<size_t>(step.op) >= timeline.spans.size()) continue;
    const Op& op = schedule.op(step.op);
    const OpSpan& span = timeline.spans[static_cast<size_t>(step.op)];
    SimTime at = step.start ? span.start : std::max(span.start, span.end);
    const std::vector<MemoryEffect>& effects = step.start ? op.allocs : op.frees;
    for (const MemoryEffect& e : effects) at = std::max(at, last[static_cast<size_t>(e.tier)]);
    for (const MemoryEffect& e : effects) last[static_cast<size_t>(e.tier)] = at;
    events.push_back({at, step.start, step.op});
  }
  std::ranges::stable_sort(events, {}, &MemoryEvent::time);
  return events;
}

}  // namespace

std::vector<MemoryEvent> memory_events(const Schedule& schedule, const Timeline& timeline) {
  if (!schedule.memory_order.empty()) return ordered_events(schedule, timeline);
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

std::vector<MemoryStep> memory_order_of(const Schedule& schedule, const Timeline& timeline) {
  std::vector<MemoryStep> order;
  for (const MemoryEvent& event : memory_events(schedule, timeline)) order.push_back({event.op, event.start});
  return order;
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

std::vector<MemorySample> memory_samples(const Schedule& schedule, const Timeline& timeline,
                                         const std::array<Bytes, 3>& at_start, SimTime from) {
  std::vector<MemorySample> out;
  std::array<Bytes, 3> in_use = at_start;
  for (Tier tier : kAllTiers) out.push_back({from, tier, in_use[static_cast<size_t>(tier)]});
  for (const MemoryEvent& event : memory_events(schedule, timeline)) {
    const Op& op = schedule.op(event.op);
    std::array<bool, 3> touched{};
    for (const MemoryEffect& e : event.start ? op.allocs : op.frees) {
      Bytes& tier = in_use[static_cast<size_t>(e.tier)];
      tier = event.start ? tier + e.bytes : tier - e.bytes;
      touched[static_cast<size_t>(e.tier)] = true;
    }
    for (Tier tier : kAllTiers) {
      if (touched[static_cast<size_t>(tier)]) out.push_back({event.time, tier, in_use[static_cast<size_t>(tier)]});
    }
  }
  return out;
}

}  // namespace stowage::core
