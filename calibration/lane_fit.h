// Fits a machine's cost parameters to a measured trace whose ops are not a
// Stowage schedule's (a PyTorch profiler trace, kineto_trace.h), lane by
// lane: `schedule` (the plan the measured run followed, as Stowage lowers
// it) is simulated, and each lane's rate parameters are scaled by how much
// faster or slower it ran than predicted, until the simulated busy time per
// step matches the measured one. A few rounds, because lanes interact
// (host DRAM is shared by DMA and the CPU optimizer, as the model has it).
//
//   gpu.compute  matmul_efficiency and hbm_efficiency ×f, compute_overhead ÷f
//   pcie.*       pcie_pinned_efficiency and pcie_pageable_efficiency (both
//                directions together)
//   cpu.optim    cpu_core_rate and dram_efficiency
//   nvme.*       nvme_efficiency, and nvme_read_rate and nvme_write_rate where
//                set (both directions together)
//   gpu.comm     comm_efficiency
//
// Then the time no lane shows (a framework's own work between operators)
// goes into compute_overhead, so that the steady step matches too; gpu.compute's
// busy time is then over by that much. Lanes idle on either side keep their
// values. Unlike fit.h there is no per-op regression: the measured ops have
// no counterparts to pair with.
#pragma once

#include "calibration/fit.h"
#include "calibration/trace_metrics.h"
#include "core/cost_parameters.h"
#include "core/machine_spec.h"
#include "core/schedule.h"

namespace stowage::calibration {

[[nodiscard]] FitReport fit_lanes(const core::Schedule& schedule, const core::MachineSpec& machine,
                                  const core::CostParameters& start, const TraceMetrics& measured);

}  // namespace stowage::calibration
