// The least time a steady step can take on the simulated machine: every
// shared resource's work per step at its full capacity, and every lane's
// ops at their alone durations over the lane's slots. A run that repeats
// its step forever cannot have a shorter period. The simulator measures its
// step on a window of the few steps it simulates, and a window can read
// shorter than this floor: the work of some lane falls a little further
// behind each step (NVMe writes queued behind the last step's, a delayed
// optimizer) without yet holding up the ops the window is measured between.
// A longer run would wait on it, so the summary's step is at least the floor
// (sim/summary.h). The planner's analytical bound (planner/step_bound.h)
// sums the same work from the policy alone; tests/planner/bounds_test.cpp
// holds it below every simulated step.
#pragma once

#include <span>

#include "core/schedule.h"
#include "sim/demand.h"

namespace stowage::sim {

struct StepFloor {
  core::SimTime length = 0;  // ns per step
  // The lane whose work sets it: the lane itself, or for a shared resource
  // the lane whose ops use the most of it.
  core::Lane lane = core::Lane::kGpuCompute;
};

// Averaged over the steps a steady state is read from: with three steps or
// more those between the first (the fill) and the last (the drain), with
// fewer the first. Ops numbered before step 0 count as step 0.
// `demands[i]` is op i's demand, as the engine ran it.
[[nodiscard]] StepFloor step_floor(const core::Schedule& schedule, std::span<const Demand> demands,
                                   const Capacities& capacities);

}  // namespace stowage::sim
