// The simulator: a schedule on a machine, through the lane models and the
// engine, to a predicted timeline and its summary.
#pragma once

#include <optional>

#include "core/machine_spec.h"
#include "core/schedule.h"
#include "core/timeline.h"
#include "sim/cost_parameters.h"
#include "sim/engine.h"
#include "sim/summary.h"

namespace stowage::sim {

struct Prediction {
  core::Timeline timeline;
  EngineResult engine;
  Summary summary;
};

struct SimulateOptions {
  // nullopt: the machine's own (MachineSpec::calibration, its profile's
  // `calibration:` section over the compiled defaults).
  std::optional<CostParameters> params;
};

Prediction simulate(const core::Schedule& schedule, const core::MachineSpec& machine,
                    const SimulateOptions& options = {});

}  // namespace stowage::sim
