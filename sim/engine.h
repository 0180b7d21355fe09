// The discrete-event engine: runs a schedule's ops on their lanes in issue
// order once their dependencies are met, as CUDA streams do, on an integer
// nanosecond clock. Ops that flow through shared resources share them fairly
// (max-min fairness) and speed up when a neighbour finishes; those whose
// demands name one queue are served in turn (Demand::queue), and a flow
// may have a lower limit while another crowds it (Demand::crowded_max_rate). It knows no
// hardware: the demands come from the lane models (sim/lane_models.h).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/schedule.h"
#include "core/timeline.h"
#include "sim/demand.h"

namespace stowage::sim {

// The first moment a tier holds more than its capacity.
struct Overflow {
  core::Tier tier;
  core::SimTime at = 0;
  core::OpId op = 0;          // the op whose allocation crossed the line
  core::Bytes in_use;
  core::Bytes capacity;
  // Who held the tier then, largest first (tensor name, bytes), including
  // what was resident from the start (Schedule::resident_items).
  std::vector<std::pair<std::string, core::Bytes>> holders;
};

// An allocation that took a tier past its highest use so far: the `seq`-th
// memory step of the run (allocations and frees counted in the order they
// applied). A tier's rises increase, so the first crossing of any capacity
// is its first rise above it: which op would overflow a tier of another
// size, known without running again (planner/simulated.h).
struct PeakRise {
  int64_t seq = 0;
  core::OpId op = 0;
  core::Bytes in_use;
};

struct EngineResult {
  core::SimTime makespan = 0;
  std::array<core::Bytes, 3> peak;  // per rank, by Tier
  std::optional<Overflow> overflow;
  std::array<std::vector<PeakRise>, 3> rises;  // by Tier, in order
};

// The rates max-min fair sharing gives `flows` running together, in each
// one's units per second: the engine's own rule, for callers that invert
// it on a measured timeline (calibration/fit.cpp). `flows` are in the
// order they started: of those that share a queue, only the first flows,
// the others get 0. Every demand must flow (work > 0).
[[nodiscard]] std::vector<double> fair_rates(std::span<const Demand> flows, const Capacities& capacities);

// `demands[i]` is op i's demand. Deterministic: the same inputs give the
// same events in the same order. Precondition: the schedule is valid
// (core::validate) and every demand is positive (fixed > 0 or work > 0).
EngineResult run_engine(const core::Schedule& schedule, std::span<const Demand> demands,
                        const Capacities& capacities, core::TimelineSink& sink);

}  // namespace stowage::sim
