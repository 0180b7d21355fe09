// A lower bound on a candidate's step time from its policy alone: no lane
// can move or compute its step's work faster than its full capacity, and
// host DRAM carries every DMA byte and the CPU optimizer's traffic. The
// search skips candidates whose bound cannot beat the best plan found.
#pragma once

#include <optional>

#include "core/machine_spec.h"
#include "core/workload.h"
#include "planner/candidate.h"
#include "sim/cost_parameters.h"

namespace stowage::planner {

// Seconds; the largest of the per-lane bounds. `params` must be those the
// candidate is simulated with (sim::SimulateOptions::params), or the bound
// and the simulation disagree about the machine; nullopt: the machine's
// own calibration, as the simulator takes by default.
double step_lower_bound(const Candidate& c, const core::MachineSpec& machine, const core::Workload& workload,
                        const std::optional<sim::CostParameters>& params = std::nullopt);

}  // namespace stowage::planner
