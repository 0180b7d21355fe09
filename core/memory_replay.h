// The memory each tier holds over a timeline of a schedule's ops, from the
// schedule alone: the resident bytes, each op's allocations at its start and
// its frees at its end - the rule both interpreters apply (the simulator's
// engine, the executor's interpreter). Replaying a measured timeline gives
// the memory the run held in the order it really ran, so a measured peak can
// be checked against the schedule, whatever the interleaving of the lanes.
#pragma once

#include <array>
#include <vector>

#include "core/schedule.h"
#include "core/timeline.h"

namespace stowage::core {

// A point where an op's memory effects apply: its allocations at its start,
// its frees at its end.
struct MemoryEvent {
  SimTime time = 0;
  bool start = false;
  OpId op = 0;
};

// The memory events of the ops of `schedule` that have effects, in the order
// both interpreters apply them (core/memory_gate.h). Without a memory order:
// by time, and at equal times ends before starts, as in the engine (an op
// lasts at least 1 ns, so an op never ends at the instant another starts
// because of it). With one: in that order, each at its op's start or end or,
// when the gate held it, when the last event before it on its tiers
// applied; then by time, the order kept at equal times. An end before its
// start counts at the start; ops past the end of `timeline.spans` have no
// events. Every replay of a schedule's memory (replay_peak,
// memory_at_peak.h, memory_by_class.h) walks these.
[[nodiscard]] std::vector<MemoryEvent> memory_events(const Schedule& schedule, const Timeline& timeline);

// The order in which `timeline` applied the schedule's memory events: a
// memory order that, given to the schedule, leaves that timeline as it is
// when the simulator made it, and holds every other run of the schedule to
// the same memory, tier by tier.
[[nodiscard]] std::vector<MemoryStep> memory_order_of(const Schedule& schedule, const Timeline& timeline);

// The peak per tier over `timeline` (one span per op of `schedule`), in
// memory_events order.
[[nodiscard]] std::array<Bytes, 3> replay_peak(const Schedule& schedule, const Timeline& timeline);

// The memory samples of a run over `timeline`: each tier's bytes at
// `from` (`at_start`, what rested as the run began), then each tier's bytes
// after every memory event that changes it: what a sink is told as an
// interpreter applies the effects, rebuilt from the spans (for a run whose
// spans were retimed after it was told).
[[nodiscard]] std::vector<MemorySample> memory_samples(const Schedule& schedule, const Timeline& timeline,
                                                       const std::array<Bytes, 3>& at_start, SimTime from);

}  // namespace stowage::core
