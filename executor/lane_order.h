// Ordering work that no op of the schedule orders (backend.h's events; on
// the CPU backend they complete as they are recorded): work an op issues
// on another lane than its own (a replay's NVMe write-backs), and the
// transfers between a partition's home and the host that set a run up,
// snapshot it for a checkpoint or read the trained state back; and the
// boundary between two schedules of one run. Those are
// issued on one lane but touch what any lane may have written or will
// read, so each is put behind every lane's work and every lane's next
// work behind it.
#pragma once

#include <array>

#include "core/diagnostic.h"
#include "core/schedule.h"
#include "executor/backend.h"

namespace stowage::executor {

// Work `lane` issues next starts after everything `after` has issued.
[[nodiscard]] inline core::Result<void> lane_waits_for(Backend& backend, core::Lane lane, core::Lane after) {
  auto event = backend.record(after);
  if (!event) return std::unexpected(event.error());
  return backend.wait(lane, *event);
}

// Work `lane` issues next starts after everything every lane has issued.
[[nodiscard]] inline core::Result<void> wait_for_every_lane(Backend& backend, core::Lane lane) {
  for (core::Lane other : core::kAllLanes) {
    if (other == lane) continue;
    if (auto r = lane_waits_for(backend, lane, other); !r) return r;
  }
  return {};
}

// Work every lane issues next starts after everything `lane` has issued
// (one event, waited on by all).
[[nodiscard]] inline core::Result<void> every_lane_waits_for(Backend& backend, core::Lane lane) {
  auto event = backend.record(lane);
  if (!event) return std::unexpected(event.error());
  for (core::Lane other : core::kAllLanes) {
    if (other == lane) continue;
    if (auto r = backend.wait(other, *event); !r) return r;
  }
  return {};
}

// Work any lane issues next starts after everything every lane has issued:
// between two schedules of a run, as the simulator starts each one with
// every lane idle.
[[nodiscard]] inline core::Result<void> all_lanes_wait_for_each_other(Backend& backend) {
  std::array<Event, core::kLaneCount> events;
  for (core::Lane lane : core::kAllLanes) {
    auto event = backend.record(lane);
    if (!event) return std::unexpected(event.error());
    events[static_cast<size_t>(lane)] = *event;
  }
  for (core::Lane lane : core::kAllLanes) {
    for (core::Lane other : core::kAllLanes) {
      if (other == lane) continue;
      if (auto r = backend.wait(lane, events[static_cast<size_t>(other)]); !r) return r;
    }
  }
  return {};
}

}  // namespace stowage::executor
