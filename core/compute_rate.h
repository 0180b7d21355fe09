// The rate a compute op of a given size runs at before matmul_efficiency:
// the one rule the simulator, the planner's bounds and calibration's fit
// share.
#pragma once

#include <vector>

#include "core/cost_parameters.h"
#include "core/units.h"

namespace stowage::core {

// `curve` (CostParameters::compute_rate_by_flops) at `flops`: interpolated
// linearly in log FLOPs between the two points around it, the nearest
// point's rate beyond either end; `peak` where the curve is empty.
[[nodiscard]] FlopsPerSecond compute_rate(const std::vector<RatePoint>& curve, FlopsPerSecond peak, double flops);

}  // namespace stowage::core
