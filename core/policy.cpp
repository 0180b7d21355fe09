#include "core/policy.h"

namespace stowage::core {

std::vector<Partition> partitions_of(const Workload& workload, int64_t sub_group_params) {
  std::vector<Partition> out;
  const std::vector<Layer>& layers = workload.layers();
  for (int i = 0; i < static_cast<int>(layers.size()); ++i) {
    const int64_t n = layers[static_cast<size_t>(i)].param_count();
    const int64_t group = sub_group_params > 0 ? sub_group_params : n;
    for (int64_t first = 0; first < n; first += group) {
      out.push_back({.layer = i, .first_param = first, .params = std::min(group, n - first)});
    }
  }
  return out;
}

std::string range_name(const Layer& layer, int64_t first_param, int64_t params) {
  if (first_param == 0 && params == layer.param_count()) return layer.name;
  return layer.name + "[" + std::to_string(first_param) + "+" + std::to_string(params) + "]";
}

std::string partition_name(const Workload& workload, const Partition& partition) {
  return range_name(workload.layers()[static_cast<size_t>(partition.layer)], partition.first_param,
                    partition.params);
}

TrainingSpec effective_training(const TrainingSpec& training, const Policy& policy) {
  TrainingSpec t = training;
  if (policy.micro_batch > 0) t.micro_batch = policy.micro_batch;
  if (policy.gradient_accumulation > 0) t.gradient_accumulation = policy.gradient_accumulation;
  t.activation_checkpointing = policy.activation_checkpointing;
  return t;
}

Policy policy_for(const Placement& placement, const Workload& workload, const TrainingSpec& training) {
  const bool offloaded = placement.optimizer_states != Tier::kGpu;
  const PartitionPolicy each{
      .param16 = placement.param16,
      .optimizer_states = placement.optimizer_states,
      .optimizer = offloaded ? OptimizerDevice::kCpu : OptimizerDevice::kGpu,
      .gradients = offloaded ? Tier::kCpu : Tier::kGpu,
  };
  Policy p{.stage = placement.stage, .activation_checkpointing = training.activation_checkpointing};
  const size_t n = partitions_of(workload, p.sub_group_params).size();
  p.partitions.assign(n, each);
  // A partial offload keeps the first int((1 - ratio) x n) partitions'
  // states on the GPU, as DeepSpeed keeps its first sub-groups
  // (planner/deepspeed_rules.h, partial_offload).
  if (offloaded && placement.offload_ratio < 1) {
    const auto on_gpu = static_cast<size_t>((1 - placement.offload_ratio) * static_cast<double>(n));
    for (size_t j = 0; j < on_gpu && j < n; ++j) {
      p.partitions[j] = {.param16 = placement.param16, .optimizer_states = Tier::kGpu,
                         .optimizer = OptimizerDevice::kGpu, .gradients = Tier::kGpu};
    }
  }
  return p;
}

}  // namespace stowage::core
