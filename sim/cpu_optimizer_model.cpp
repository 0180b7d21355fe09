#include "sim/lane_models.h"

namespace stowage::sim {

// Work is counted in bytes of DRAM traffic, like every other flow that
// touches host memory, so fair sharing splits DRAM bandwidth evenly between
// the optimizer and DMA streams rather than by some unit-dependent ratio.
Demand cpu_optimizer_demand(const core::Op& op, const ModelContext& c) {
  const double bytes = op.bytes.as_double();
  if (bytes <= 0 || op.params <= 0) return {.fixed = 1};
  Demand d{.work = bytes};
  d.per_unit[static_cast<size_t>(Resource::kDram)] = 1;
  // Adam's FLOPs come from the cost parameters; other host ops (the
  // gradient check) carry theirs.
  const double flops = op.kind == core::OpKind::kOptimizer
                           ? c.params.adam_flops_per_param * static_cast<double>(op.params)
                           : op.flops.count();
  d.per_unit[static_cast<size_t>(Resource::kCpu)] = flops / bytes;
  return d;
}

}  // namespace stowage::sim
