#include "sim/lane_models.h"

namespace stowage::sim {

// Striped over the drives, shared by the ranks: each rank reads its own
// slice (ZeRO-Infinity's bandwidth-centric partitioning), so a rank sees
// drives x rate / ranks. Offload writes hundreds of GB per step, far past
// any SLC cache, so writes run at the sustained rate where it is known. A
// measured rate per direction (calibration) replaces rate x efficiency.
double nvme_rank_rate(const ModelContext& c, core::Lane lane) {
  const core::NvmeSpec& n = c.machine.nvme;
  const bool read = lane == core::Lane::kNvmeRead;
  const std::optional<core::BytesPerSecond>& measured = read ? c.params.nvme_read_rate : c.params.nvme_write_rate;
  const core::BytesPerSecond rated = read ? n.sequential_read : n.sustained_write ? *n.sustained_write : n.sequential_write;
  const double per_drive = measured ? measured->value() : rated.value() * c.params.nvme_efficiency;
  return per_drive * c.machine.nvme_count / c.ranks;
}

Demand nvme_demand(const core::Op& op, const ModelContext& c) {
  Demand d{.work = op.bytes.as_double(), .latency = to_sim_time(c.params.nvme_latency)};
  const double seconds_per_byte = 1.0 / nvme_rank_rate(c, op.lane);
  const Resource direction = op.lane == core::Lane::kNvmeRead ? Resource::kNvmeReads : Resource::kNvmeWrites;
  d.per_unit[static_cast<size_t>(direction)] = seconds_per_byte;
  d.per_unit[static_cast<size_t>(Resource::kNvme)] = seconds_per_byte;
  d.per_unit[static_cast<size_t>(Resource::kDram)] = 1;
  d.queue = op.lane == core::Lane::kNvmeRead ? 1 : 2;  // one queue per direction, as the store has
  return d;
}

}  // namespace stowage::sim
