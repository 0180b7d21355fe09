#include "planner/memory_floor.h"

#include <algorithm>

#include "core/memory_estimate.h"

namespace stowage::planner {

std::array<core::Bytes, 3> rank_capacity(const core::MachineSpec& m) {
  return {m.gpu.memory, m.host.dram / m.gpu_count, m.total_nvme_capacity() / m.gpu_count};
}

std::array<core::Bytes, 3> memory_floor(const Candidate& c, const core::MachineSpec& machine,
                                        const core::Workload& workload) {
  using core::Tier;
  const core::Policy& p = c.policy;
  const int g = machine.gpu_count;
  const int param_ranks = p.stage == core::ZeroStage::k3 ? g : 1;
  const int state_ranks = p.stage >= core::ZeroStage::k1 ? g : 1;
  const int grad_ranks = p.stage >= core::ZeroStage::k2 ? g : 1;
  const std::vector<core::Partition> parts = core::partitions_of(workload, p.sub_group_params);
  std::array<core::Bytes, 3> floor{};
  auto put = [&](Tier t, int64_t bytes) { floor[static_cast<size_t>(t)] += core::Bytes(bytes); };
  bool crosses = false;
  int64_t largest_on_nvme = 0;
  for (size_t j = 0; j < parts.size() && j < p.partitions.size(); ++j) {
    const core::PartitionPolicy& pp = p.partitions[j];
    const int64_t n = parts[j].params;
    put(pp.param16, 2 * n / param_ranks);
    put(pp.optimizer_states, 12 * n / state_ranks);
    // The gradient buffer the optimizer reads; a delayed update keeps two on
    // the host (step t+1's arrive while step t's optimizer reads).
    const int copies = p.delayed_update && pp.gradients == Tier::kCpu ? 2 : 1;
    put(pp.gradients, copies * 2 * n / grad_ranks);
    crosses = crosses || pp.param16 != Tier::kGpu || pp.optimizer != core::OptimizerDevice::kGpu;
    if (pp.optimizer_states == Tier::kNvme) largest_on_nvme = std::max(largest_on_nvme, n);
  }
  // States read ahead from NVMe wait in host memory, prefetch-depth deep.
  put(Tier::kCpu, std::max(1, p.nvme_prefetch_depth) * 12 * largest_on_nvme / state_ranks);
  // Layers gathered on the GPU for compute: up to the prefetch depth ahead
  // plus the one in use, and one layer's full gradients before they leave.
  const int64_t layer = workload.largest_layer_params();
  const bool fetched = p.stage == core::ZeroStage::k3 || p.partitions.empty() || p.partitions.front().param16 != Tier::kGpu;
  if (fetched) put(Tier::kGpu, (std::max(1, p.h2d_prefetch_depth) + 1) * 2 * layer / param_ranks);
  put(Tier::kGpu, 2 * layer);
  const core::RuntimeBuffers reserves;
  put(Tier::kGpu, reserves.gpu_reserve.count());
  put(Tier::kCpu, reserves.host_reserve.count() / g);
  put(Tier::kGpu, workload.activation_bytes(c.training.tokens_per_micro_batch(), c.policy.activation_checkpointing).count());
  if (crosses) put(Tier::kCpu, std::max(1, p.staging_buffers) * 2 * workload.largest_layer_params() / grad_ranks);
  return floor;
}

}  // namespace stowage::planner
