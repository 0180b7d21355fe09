// DeepSpeed's own rules, written down once: how ZeRO-3 groups parameters
// into optimizer sub-groups, where a partial-offload ratio really puts them,
// which host buffers DeepSpeed allocates (and pins) for a configuration, and
// which limits a configuration must respect to run at all. The exporter, the
// target-restricted search (planner/deepspeed_target.h) and the peer check
// (bench/peers/deepspeed_check) use these and nothing else. Every rule names
// the DeepSpeed 0.19.6 source file it comes from (paths relative to the
// deepspeed/ package); docs/deepspeed.md lists them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor_class.h"
#include "core/training_spec.h"
#include "core/units.h"
#include "core/workload.h"
#include "planner/deepspeed_export.h"

namespace stowage::planner::deepspeed {

// runtime/swap_tensor/utils.py: AIO_ALIGNED_BYTES, MIN_AIO_BYTES.
inline constexpr int64_t kAioAlignedBytes = 1024;
inline constexpr int64_t kMinAioBytes = int64_t{1} << 20;
// runtime/zero/config.py: stage3_max_reuse_distance default (1e9 elements).
inline constexpr int64_t kDefaultMaxReuseDistance = 1'000'000'000;

// One rank's share of each parameter tensor, in model order: DeepSpeed pads
// a tensor to a multiple of the world size and gives each rank numel / world
// (runtime/zero/partition_parameters.py, _partition_param / _aligned_size).
[[nodiscard]] std::vector<int64_t> partition_numels(const core::Workload& workload, int ranks);

// Elements of each optimizer sub-group of one rank, in model order. ZeRO-3
// adds whole parameters to the current sub-group until it holds at least
// `sub_group_size` elements, then starts the next; a sub_group_size at least
// the total makes one sub-group (runtime/zero/stage3.py,
// _create_fp16_sub_groups). Assumes one parameter group (the Hugging Face
// weight-decay split into two groups makes the last sub-group of each
// group smaller; docs/deepspeed.md).
[[nodiscard]] std::vector<int64_t> sub_group_numels(const core::Workload& workload, int ranks,
                                                    int64_t sub_group_size);

// `numel` rounded up to whole aio alignment units of intra_op_parallelism x
// 1024 bytes (runtime/swap_tensor/optimizer_utils.py and
// partitioned_param_swapper.py, _io_aligned_numel).
[[nodiscard]] int64_t io_aligned_numel(int64_t numel, int64_t element_bytes, int intra_op_parallelism);

// Where a partial offload (offload_optimizer.ratio) puts each sub-group:
// sub-group i is offloaded to the CPU iff i >= int((1 - ratio) x n), so the
// ratio is realised in whole sub-groups, rounded in favour of the GPU
// (runtime/zero/stage3.py, _create_fp32_partitions).
struct PartialOffload {
  int gpu_sub_groups = 0;      // the first ones in parameter order
  int64_t gpu_elements = 0;    // per rank
  int64_t cpu_elements = 0;    // per rank
  [[nodiscard]] double realised_ratio() const;  // cpu_elements / all elements
};
[[nodiscard]] PartialOffload partial_offload(const std::vector<int64_t>& sub_groups, double ratio);

// The ratio that makes DeepSpeed keep exactly the first `gpu_sub_groups`
// sub-groups on the GPU: (n - k + 0.5) / n sits inside the interval that
// int((1 - ratio) x n) maps to k, so float rounding cannot move it.
[[nodiscard]] double ratio_keeping(int gpu_sub_groups, int sub_group_count);

// The least offload_param.buffer_size (elements) that lets the parameter
// swapper take every parameter: its largest per-rank partition, aligned
// (runtime/swap_tensor/partitioned_param_swapper.py asserts
// "More elements ... than buffer size", DeepSpeed issue #3506).
[[nodiscard]] int64_t least_param_buffer_size(const core::Workload& workload, int ranks, int intra_op_parallelism);

// The least offload_param.buffer_count: ZeRO-3 fetches a module's
// parameters together and the swapper asserts a free buffer for each one it
// reads ("Not enough buffers"), so a count below the most parameters one
// module owns cannot run its forward (runtime/zero/partitioned_param_coordinator.py
// fetch_sub_module with swap_tensor/partitioned_param_swapper.py swap_in).
[[nodiscard]] int least_param_buffer_count(const core::Workload& workload);

// stage3_max_reuse_distance for a configuration. With parameters on NVMe,
// DeepSpeed's parameter coordinator keeps a released parameter when it is
// reused within this many elements, and the next forward then asks the
// swapper for a buffer none is left for: "Not enough buffers 0 for swapping
// 1" (runtime/zero/partitioned_param_coordinator.py with
// swap_tensor/partitioned_param_swapper.py; open DeepSpeed issue #3062).
// 0 disables reuse; other configurations keep the default.
[[nodiscard]] int64_t max_reuse_distance(const DeepSpeedSettings& settings);

// A buffer DeepSpeed allocates for a configuration, per rank.
struct RuntimePool {
  std::string name;    // "optimizer swap buffers"
  std::string source;  // the DeepSpeed file and function that allocates it
  core::Tier tier = core::Tier::kCpu;
  core::Bytes bytes;   // per rank
  bool pinned = true;  // page-locked host memory (with pin_memory, or always for aio buffers)
  // Bytes Stowage's lowering already holds as states at rest (16-bit
  // parameters kept in CPU memory), so a schedule must not add them again.
  bool at_rest_in_stowage = false;
};

// The buffers beyond the fp32 master weights and Adam moments that DeepSpeed
// allocates for `settings` on `workload`, per rank, in the order DeepSpeed
// allocates them (16-bit elements are 2 B, fp16 and bf16 alike).
[[nodiscard]] std::vector<RuntimePool> runtime_pools(const DeepSpeedSettings& settings,
                                                     const core::Workload& workload);

// The sum of the pinned host pools, per rank.
[[nodiscard]] core::Bytes pinned_bytes(const std::vector<RuntimePool>& pools);

}  // namespace stowage::planner::deepspeed
