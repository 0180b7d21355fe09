// The simulator's cost parameters are data of the machine
// (core/cost_parameters.h, a machine profile's `calibration:` section); the
// sim keeps its old name for them.
#pragma once

#include "core/cost_parameters.h"

namespace stowage::sim {

using CostParameters = core::CostParameters;

}  // namespace stowage::sim
