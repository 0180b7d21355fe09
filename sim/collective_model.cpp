#include <algorithm>

#include "sim/lane_models.h"

namespace stowage::sim {

// A ring collective over `ranks` GPUs moves (ranks-1)/ranks of the data
// through each GPU's link in each direction; the op's bytes already count
// that share (twice for an all-reduce). Latency is paid per ring step
// (Patarasuk & Yuan 2009; NCCL's ring algorithm).
Demand collective_demand(const core::Op& op, const ModelContext& c) {
  const core::GpuSpec& gpu = c.machine.gpu;
  // Vendors quote NVLink as a bidirectional total; one direction is half.
  const double link = gpu.gpu_link_bandwidth ? gpu.gpu_link_bandwidth->value() / 2
                                             : core::pcie_bandwidth_per_direction(gpu.pcie_generation, gpu.pcie_lanes).value();
  const int steps = op.kind == core::OpKind::kAllReduce ? 2 * (c.ranks - 1) : c.ranks - 1;
  const core::Seconds t(op.bytes.as_double() / (link * c.params.comm_efficiency) +
                        c.params.comm_latency.value() * std::max(1, steps));
  return {.fixed = std::max<core::SimTime>(1, to_sim_time(t))};
}

}  // namespace stowage::sim
