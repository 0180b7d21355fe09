// The memory each tier holds over a timeline of a schedule's ops, from the
// schedule alone: the resident bytes, each op's allocations at its start and
// its frees at its end - the rule both interpreters apply (the simulator's
// engine, the executor's interpreter). Replaying a measured timeline gives
// the memory the run held in the order it really ran, so a measured peak can
// be checked against the schedule, whatever the interleaving of the lanes.
#pragma once

#include <array>

#include "core/schedule.h"
#include "core/timeline.h"

namespace stowage::core {

// The peak per tier over `timeline` (one span per op of `schedule`). At
// equal times, ends come before starts, as in the engine (an op lasts at
// least 1 ns, so an op never ends at the instant another starts because of it).
[[nodiscard]] std::array<Bytes, 3> replay_peak(const Schedule& schedule, const Timeline& timeline);

}  // namespace stowage::core
