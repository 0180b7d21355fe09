#include "planner/deepspeed_rules.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace stowage::planner::deepspeed {
namespace {

using core::Bytes;

constexpr int64_t kFp32 = 4;
constexpr int64_t kHalf = 2;  // fp16 and bf16 alike

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

int64_t sum(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{0});
}

int64_t largest(const std::vector<int64_t>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

int ranks_of(const DeepSpeedSettings& s) {
  return std::max(1, s.gpu_count);
}

int intra_op(const DeepSpeedSettings& s) {
  return s.aio ? s.aio->intra_op_parallelism : 1;
}

// Sub-groups whose states DeepSpeed swaps to NVMe: those of at least
// max(MIN_AIO_BYTES, aio block_size) fp32 bytes; smaller ones stay in CPU
// memory (swap_tensor/optimizer_utils.py, is_swappable_tensor; zero/stage3.py,
// _swappable_optimizer_subgroup).
bool swappable(const DeepSpeedSettings& s, int64_t numel) {
  const int64_t block = s.aio ? s.aio->block_size : kMinAioBytes;
  return numel * kFp32 >= std::max(kMinAioBytes, block);
}

void add(std::vector<RuntimePool>& pools, std::string name, std::string source, int64_t bytes, bool pinned) {
  if (bytes > 0) pools.push_back({.name = std::move(name), .source = std::move(source), .bytes = Bytes(bytes), .pinned = pinned});
}

// Gradients are reduced through contiguous buckets of reduce_bucket_size
// 16-bit elements on the GPU, two of them with overlap_comm in stages 1 and
// 2 (zero/stage_1_and_2.py, ipg_buckets buf_0/buf_1; zero/stage3.py,
// _setup_for_real_optimizer, ipg_buckets).
void reduce_buckets(const DeepSpeedSettings& s, std::vector<RuntimePool>& pools) {
  if (s.stage == 0) return;
  const int64_t count = s.stage < 3 ? 2 : 1;
  pools.push_back({.name = "gradient reduce buckets",
                   .source = s.stage < 3 ? "zero/stage_1_and_2.py, ipg_buckets" : "zero/stage3.py, ipg_buckets",
                   .tier = core::Tier::kGpu,
                   .bytes = Bytes(count * kHalf * s.reduce_bucket_size),
                   .pinned = false});
}

// ZeRO-1/2 with offload_optimizer cpu (zero/stage_1_and_2.py).
void stage_1_2_pools(const DeepSpeedSettings& s, const core::Workload& w, std::vector<RuntimePool>& pools) {
  if (s.optimizer.device == OffloadDevice::kNone) return;
  const int ranks = ranks_of(s);
  const std::vector<int64_t> whole = partition_numels(w, 1);
  const int64_t partition = ceil_div(sum(whole), ranks);
  add(pools, "16-bit copy of the parameter partition",
      "zero/stage_1_and_2.py __init__, param_buffer_of_bit16_for_cpu_offload_groups", kHalf * partition,
      s.pin_memory);
  add(pools, "fp32 gradient partition", "zero/stage_1_and_2.py initialize_optimizer_states, single_grad_partition",
      kFp32 * partition, s.pin_memory);
  add(pools, "16-bit gradient staging buffer (largest parameter)",
      "zero/stage_1_and_2.py __init__, temp_grad_buffer_for_cpu_offload", kHalf * largest(whole), s.pin_memory);
  if (s.gradient_accumulation > 1) {
    // One whole-parameter 16-bit buffer per parameter of the partition,
    // made on the first accumulating micro-step.
    add(pools, "16-bit gradient accumulation buffers",
        "zero/stage_1_and_2.py async_accumulate_grad_in_cpu_via_gpu, accumulated_grads_in_cpu",
        kHalf * ceil_div(sum(whole), ranks), s.pin_memory);
  }
}

void stage_3_optimizer_pools(const DeepSpeedSettings& s, const core::Workload& w, std::vector<RuntimePool>& pools) {
  if (s.optimizer.device == OffloadDevice::kNone) return;
  const std::vector<int64_t> groups = sub_group_numels(w, ranks_of(s), s.sub_group_size);
  const std::vector<int64_t> parts = partition_numels(w, ranks_of(s));
  // In the gradient accumulation dtype, which is the model's 16-bit dtype
  // unless data_types.grad_accum_dtype says otherwise (runtime/engine.py,
  // get_data_types); the exporter leaves it unset. Measured by
  // bench/peers/deepspeed_check: 2 B per element with bf16.
  add(pools, "16-bit gradient partitions", "zero/stage3.py _setup_for_real_optimizer, grad_partitions_flat_buffer",
      kHalf * sum(parts), s.pin_memory);
  const PartialOffload split = partial_offload(groups, s.optimizer.ratio);
  const bool nvme = s.optimizer.device == OffloadDevice::kNvme;
  int64_t cpu_grad = 0;
  bool any_swapped = false;
  for (size_t i = static_cast<size_t>(split.gpu_sub_groups); i < groups.size(); ++i) {
    if (nvme && swappable(s, groups[i])) any_swapped = true;
    else cpu_grad += groups[i];
  }
  add(pools, "fp32 sub-group gradients in CPU memory",
      "zero/stage3.py initialize_optimizer_states, subgroup_gradient_buffer", kFp32 * cpu_grad, s.pin_memory);
  if (!any_swapped) return;
  add(pools, "fp32 gradient buffer of swapped sub-groups (largest sub-group)",
      "zero/stage3.py initialize_optimizer_states, gradient_buffer", kFp32 * largest(groups), false);
  add(pools, "optimizer swap buffers", "swap_tensor/optimizer_utils.py OptimizerSwapper, SwapBufferManager",
      s.optimizer.buffer_count * kFp32 * io_aligned_numel(largest(groups), kFp32, intra_op(s)), true);
}

void stage_3_param_pools(const DeepSpeedSettings& s, const core::Workload& w, std::vector<RuntimePool>& pools) {
  if (s.param.device == OffloadDevice::kNone) return;
  const std::vector<int64_t> parts = partition_numels(w, ranks_of(s));
  const int64_t total = sum(parts);
  const bool nvme = s.param.device == OffloadDevice::kNvme;
  add(pools, "16-bit parameter partitions in CPU memory",
      "zero/stage3.py _create_param_groups_fp16_flat_cpu_memory",
      kHalf * (nvme ? std::min(total, s.param.max_in_cpu) : total), s.pin_memory);
  if (!pools.empty() && pools.back().name.starts_with("16-bit parameter")) pools.back().at_rest_in_stowage = true;
  if (!nvme) return;
  add(pools, "parameter swap buffers", "swap_tensor/partitioned_param_swapper.py _configure_aio, buffers",
      s.param.buffer_count * kHalf * io_aligned_numel(s.param.buffer_size, kHalf, intra_op(s)), true);
  // Sub-groups past max_in_cpu get no flat CPU buffer; their optimizer step
  // writes parameters back through one pinned buffer sized to the largest
  // sub-group, each parameter aligned (zero/stage3.py
  // _create_fp16_partitions_with_defragmentation; swap_tensor/
  // partitioned_param_swapper.py reserve_partitioned_swap_space).
  if (total <= s.param.max_in_cpu) return;
  // The buffer is sized from whole parameters (ds_numel), not partitions.
  const std::vector<int64_t> groups = sub_group_numels(w, ranks_of(s), s.sub_group_size);
  const std::vector<int64_t> whole = partition_numels(w, 1);
  int64_t biggest = 0, aligned = 0;
  size_t k = 0;
  for (int64_t g : groups) {
    int64_t used = 0, a = 0;
    while (used < g && k < parts.size()) {
      used += parts[k];
      a += io_aligned_numel(whole[k], kHalf, intra_op(s));
      ++k;
    }
    if (used > biggest) {
      biggest = used;
      aligned = a;
    }
  }
  add(pools, "parameter write-back buffer (largest sub-group)",
      "swap_tensor/partitioned_param_swapper.py reserve_partitioned_swap_space", kHalf * aligned, true);
}

}  // namespace

std::vector<int64_t> partition_numels(const core::Workload& workload, int ranks) {
  std::vector<int64_t> out;
  for (const core::Layer& layer : workload.layers()) {
    for (const core::ParamTensor& p : layer.params) out.push_back(ceil_div(p.elements(), std::max(1, ranks)));
  }
  return out;
}

std::vector<int64_t> sub_group_numels(const core::Workload& workload, int ranks, int64_t sub_group_size) {
  const std::vector<int64_t> parts = partition_numels(workload, ranks);
  const int64_t total = sum(parts);
  if (sub_group_size <= 0 || sub_group_size >= total) return {total};
  std::vector<int64_t> out;
  int64_t current = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    current += parts[i];
    if (current >= sub_group_size || i + 1 == parts.size()) {
      out.push_back(current);
      current = 0;
    }
  }
  return out;
}

int64_t io_aligned_numel(int64_t numel, int64_t element_bytes, int intra_op_parallelism) {
  const int64_t alignment = kAioAlignedBytes * std::max(1, intra_op_parallelism) / element_bytes;
  return ceil_div(numel, alignment) * alignment;
}

double PartialOffload::realised_ratio() const {
  const int64_t all = gpu_elements + cpu_elements;
  return all == 0 ? 1.0 : static_cast<double>(cpu_elements) / static_cast<double>(all);
}

PartialOffload partial_offload(const std::vector<int64_t>& sub_groups, double ratio) {
  const int n = static_cast<int>(sub_groups.size());
  // int() truncates toward zero, as Python's int(float) does.
  const int on_gpu = std::clamp(static_cast<int>((1.0 - ratio) * n), 0, n);
  PartialOffload out{.gpu_sub_groups = on_gpu};
  for (int i = 0; i < n; ++i) (i < on_gpu ? out.gpu_elements : out.cpu_elements) += sub_groups[static_cast<size_t>(i)];
  return out;
}

double ratio_keeping(int gpu_sub_groups, int sub_group_count) {
  if (sub_group_count <= 0 || gpu_sub_groups <= 0) return 1.0;
  if (gpu_sub_groups >= sub_group_count) return 0.0;
  return (sub_group_count - gpu_sub_groups - 0.5) / sub_group_count;
}

int64_t least_param_buffer_size(const core::Workload& workload, int ranks, int intra_op_parallelism) {
  return io_aligned_numel(largest(partition_numels(workload, ranks)), kHalf, intra_op_parallelism);
}

int least_param_buffer_count(const core::Workload& workload) {
  std::map<std::string, int> per_module;
  int most = 0;
  for (const core::Layer& layer : workload.layers()) {
    for (const core::ParamTensor& p : layer.params) most = std::max(most, ++per_module[p.module]);
  }
  return most;
}

int64_t max_reuse_distance(const DeepSpeedSettings& settings) {
  return settings.param.device == OffloadDevice::kNvme ? 0 : kDefaultMaxReuseDistance;
}

std::vector<RuntimePool> runtime_pools(const DeepSpeedSettings& settings, const core::Workload& workload) {
  std::vector<RuntimePool> pools;
  reduce_buckets(settings, pools);
  if (settings.stage < 3) {
    stage_1_2_pools(settings, workload, pools);
    return pools;
  }
  stage_3_optimizer_pools(settings, workload, pools);
  stage_3_param_pools(settings, workload, pools);
  return pools;
}

Bytes pinned_bytes(const std::vector<RuntimePool>& pools) {
  Bytes total;
  for (const RuntimePool& p : pools) {
    if (p.pinned && p.tier == core::Tier::kCpu) total += p.bytes;
  }
  return total;
}

}  // namespace stowage::planner::deepspeed
