#include <algorithm>

#include "core/compute_rate.h"
#include "sim/lane_models.h"

namespace stowage::sim {

Demand gpu_compute_demand(const core::Op& op, const ModelContext& c) {
  const core::GpuSpec& gpu = c.machine.gpu;
  const core::FlopsPerSecond peak = c.bf16 && gpu.bf16_rate ? *gpu.bf16_rate : gpu.fp16_rate;
  const core::FlopsPerSecond rate = core::compute_rate(c.params.compute_rate_by_flops, peak, op.flops.count());
  const double compute_s = op.flops.count() / (rate.value() * c.params.matmul_efficiency);
  const double memory_s = op.bytes.as_double() / (gpu.memory_bandwidth.value() * c.params.hbm_efficiency);
  const core::Seconds t(std::max(compute_s, memory_s) + c.params.compute_overhead.value());
  return {.fixed = std::max<core::SimTime>(1, to_sim_time(t))};
}

}  // namespace stowage::sim
