#include "sim/lane_models.h"

namespace stowage::sim {

Demand pcie_demand(const core::Op& op, const ModelContext& c) {
  const bool h2d = op.lane == core::Lane::kPcieH2d;
  const std::optional<core::Seconds>& own_latency = h2d ? c.params.h2d_latency : c.params.d2h_latency;
  Demand d{.work = op.bytes.as_double(), .latency = to_sim_time(own_latency.value_or(c.params.pcie_latency))};
  const Resource link = h2d ? Resource::kPcieH2d : Resource::kPcieD2h;
  d.per_unit[static_cast<size_t>(link)] = 1;
  d.per_unit[static_cast<size_t>(Resource::kDram)] = 1;  // DMA reads or writes host memory
  return d;
}

}  // namespace stowage::sim
