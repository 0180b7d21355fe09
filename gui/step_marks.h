// Where the training steps of a timeline begin and which span is its steady
// state. A step begins at its first forward op. On a predicted timeline the
// window is the one `stowage simulate` measures (sim/summary.h): with three
// steps or more the last two step intervals, with two the one interval, and
// the step time is the window's length per step, or the simulator's own
// step where the trace gives a longer one (a lane falling behind,
// sim/step_floor.h). On a measured one it is
// the rule `stowage run` and `compare` print (core/measured_steps.h): the
// steps after the first, from the first step's end to the last's, with
// their median length as the step time; so the ruler shows the number the
// command line printed for the same run. The bound is the lane busiest in
// the window. GUI-free: the ruler draws these, tests check them.
#pragma once

#include <optional>
#include <vector>

#include "gui/busy_time.h"
#include "gui/trace_model.h"

namespace stowage::gui {

struct SteadyWindow {
  SimTime begin = 0, end = 0;  // ns: the first forward op of the window's first step, and past its last
  int steps = 1;               // step intervals in the window
  SimTime step_time = 0;       // ns: (end - begin) / steps; on a measured trace, their median length
  bool median = false;         // step_time is the median of the steps in the window (a measured trace)
  // A predicted trace whose simulator step is longer than the window: the
  // step is the simulator's, set by the bound lane's work falling behind.
  bool falls_behind = false;
  core::Lane bound = core::Lane::kGpuCompute;  // the busiest lane in the window
  double bound_share = 0;                      // its busy share of the window, 0..1
};

struct StepMarks {
  struct Step {
    int step = 0;
    SimTime start = 0;  // ns: its first forward op's start (its first op's, if it has no forward)
  };
  std::vector<Step> steps;             // by start; empty when the trace has no step numbers
  std::optional<SteadyWindow> steady;  // with two steps or more
};

[[nodiscard]] StepMarks step_marks(const TraceModel& model, const LaneBusy& busy);

}  // namespace stowage::gui
