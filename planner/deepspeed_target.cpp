#include "planner/deepspeed_target.h"

#include <algorithm>

#include "core/policy.h"

namespace stowage::planner {
namespace {

using core::OptimizerDevice;
using core::PartitionPolicy;
using core::Tier;

Tier tier_of(OffloadDevice d) {
  switch (d) {
    case OffloadDevice::kNone:
      return Tier::kGpu;
    case OffloadDevice::kCpu:
      return Tier::kCpu;
    case OffloadDevice::kNvme:
      return Tier::kNvme;
  }
  return Tier::kGpu;
}

// Leading partitions holding at most `elements` parameters (whole machine).
size_t leading_within(const std::vector<core::Partition>& parts, double elements) {
  size_t k = 0;
  double used = 0;
  while (k < parts.size() && used + static_cast<double>(parts[k].params) <= elements * (1 + 1e-9)) {
    used += static_cast<double>(parts[k++].params);
  }
  return k;
}

// Where each partition's tensors rest under DeepSpeed: one device per
// tensor class, except the GPU share of a partial offload (the leading
// sub-groups, deepspeed_rules.h partial_offload) and the 16-bit
// parameters kept in CPU memory before max_in_cpu runs out (the leading
// ones, zero/stage3.py _create_param_groups_fp16_flat_cpu_memory).
std::vector<PartitionPolicy> placements(const DeepSpeedSettings& s, const core::Workload& w,
                                        const std::vector<core::Partition>& parts) {
  const int ranks = std::max(1, s.gpu_count);
  size_t gpu_states = 0;
  if (s.optimizer.device == OffloadDevice::kNone) {
    gpu_states = parts.size();
  } else if (s.optimizer.ratio < 1.0) {
    const auto groups = deepspeed::sub_group_numels(w, ranks, s.sub_group_size);
    const deepspeed::PartialOffload split = deepspeed::partial_offload(groups, s.optimizer.ratio);
    gpu_states = leading_within(parts, static_cast<double>(split.gpu_elements) * ranks);
  }
  size_t cpu_params = parts.size();
  if (s.param.device == OffloadDevice::kNvme) {
    cpu_params = leading_within(parts, static_cast<double>(s.param.max_in_cpu) * ranks);
  }
  std::vector<PartitionPolicy> out;
  for (size_t j = 0; j < parts.size(); ++j) {
    PartitionPolicy p;
    p.param16 = s.param.device == OffloadDevice::kNvme && j < cpu_params ? Tier::kCpu : tier_of(s.param.device);
    const bool on_gpu = j < gpu_states;
    p.optimizer_states = on_gpu ? Tier::kGpu : tier_of(s.optimizer.device);
    p.optimizer = on_gpu ? OptimizerDevice::kGpu : OptimizerDevice::kCpu;
    p.gradients = on_gpu ? Tier::kGpu : Tier::kCpu;
    out.push_back(p);
  }
  return out;
}

// The policy DeepSpeed runs: the plan's shape and transfer settings with
// DeepSpeed's placements, no delayed or speculative update, and NVMe reads
// one sub-group ahead (pipeline_read, swap_tensor/pipelined_optimizer_swapper.py).
core::Policy target_policy(const core::Policy& planned, const DeepSpeedSettings& s, const core::Workload& w) {
  core::Policy p = planned;
  p.stage = static_cast<core::ZeroStage>(s.stage);
  p.partitions = placements(s, w, core::partitions_of(w, planned.sub_group_params));
  p.delayed_update = false;
  p.speculative_update = false;
  p.nvme_prefetch_depth = 1;
  return p;
}

}  // namespace

std::optional<Target> target_named(std::string_view name) {
  for (Target t : {Target::kStowage, Target::kDeepSpeed, Target::kAccelerate}) {
    if (to_string(t) == name) return t;
  }
  return std::nullopt;
}

std::string_view to_string(Target target) {
  switch (target) {
    case Target::kStowage:
      return "stowage";
    case Target::kDeepSpeed:
      return "deepspeed";
    case Target::kAccelerate:
      return "accelerate";
  }
  return "";
}

core::Result<TargetPlan> deepspeed_target(const Candidate& planned, const core::MachineSpec& machine,
                                          const core::ModelSpec& model) {
  const core::Workload w(model, planned.training.sequence_length);
  const core::PlanFile plan{.machine = machine.name, .model = model.name, .training = planned.training.name,
                            .policy = planned.policy, .predicted = std::nullopt};
  core::Result<DeepSpeedSettings> s = deepspeed_settings(plan, machine, w, planned.training);
  if (!s) return std::unexpected(std::move(s.error()));
  TargetPlan out{.settings = *s, .pools = deepspeed::runtime_pools(*s, w), .candidate = planned};
  out.candidate.policy = target_policy(planned.policy, *s, w);
  out.candidate.runtime_pools.clear();
  for (const deepspeed::RuntimePool& pool : out.pools) {
    if (pool.at_rest_in_stowage) continue;
    out.candidate.runtime_pools.push_back({pool.tier, pool.bytes, "DeepSpeed " + pool.name});
  }
  return out;
}

}  // namespace stowage::planner

namespace stowage::planner {

std::optional<Candidate> as_run_by(Target target, const Candidate& candidate, const core::MachineSpec& machine,
                                   const core::ModelSpec& model) {
  if (target == Target::kStowage) return candidate;
  core::Result<TargetPlan> t = deepspeed_target(candidate, machine, model);
  if (!t) return std::nullopt;
  return std::move(t->candidate);
}

}  // namespace stowage::planner
