// How a measured run's steps are told apart, and which step length stands
// for the run: `stowage run` prints it, `stowage compare` and `calibrate`
// compare against it, and the GUI's ruler shades it on a measured trace.
// One rule, so that all of them show the same number.
//
// A step ends when its last op ends; its length runs from the end of the
// step before (or the trace's start) to its own end, so that the lengths
// add up to the run. The steady-state step is the median length after the
// first (the first carries the warm-up: pages faulted in, pools filled),
// or the only step's. A simulated timeline uses the simulator's own window
// (sim/summary.h), where every step after the fill is the same.
#pragma once

#include <span>
#include <vector>

#include "core/timeline.h"  // SimTime

namespace stowage::core {

struct MeasuredStep {
  int step = 0;
  SimTime end = 0;     // ns: its last op's end
  SimTime length = 0;  // ns: from the previous step's end (or the trace's start) to `end`
};

// Collects each step's last end from the ops, in any order.
class StepEnds {
 public:
  // An op of step `step` (below 0 counts as step 0) that ended at `end`.
  // Steps are kept by number: callers bound them (the trace readers do).
  void add(int step, SimTime end);
  // The steps that have ops, in step order; `begin` is the trace's start.
  [[nodiscard]] std::vector<MeasuredStep> steps(SimTime begin) const;

 private:
  std::vector<SimTime> ends_;  // by step; kNone where a step has no op
};

// The median length after the first step, or the only step's; 0 for none.
[[nodiscard]] SimTime steady_step_length(std::span<const SimTime> lengths);

}  // namespace stowage::core
