#include "sim/lane_models.h"

namespace stowage::sim {

Demand cpu_optimizer_demand(const core::Op& op, const ModelContext& c) {
  const double params = static_cast<double>(op.params);
  Demand d{.work = params};
  if (params <= 0) return {.fixed = 1};
  d.per_unit[static_cast<size_t>(Resource::kDram)] = op.bytes.as_double() / params;
  d.per_unit[static_cast<size_t>(Resource::kCpu)] = c.params.adam_flops_per_param;
  return d;
}

}  // namespace stowage::sim
