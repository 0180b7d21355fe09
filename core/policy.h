// A policy: the decisions of an offload plan, partition by partition. The
// planner chooses one; lowering turns it into a schedule (core/lower.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/placement.h"
#include "core/tensor_class.h"
#include "core/workload.h"

namespace stowage::core {

enum class OptimizerDevice { kCpu, kGpu };

// Where one partition's tensors rest and where its optimizer runs.
struct PartitionPolicy {
  Tier param16 = Tier::kGpu;            // where 16-bit weights rest between uses
  Tier optimizer_states = Tier::kGpu;   // master32, adam_m, adam_v
  OptimizerDevice optimizer = OptimizerDevice::kGpu;
  Tier gradients = Tier::kGpu;          // where grad16 goes after backward
  bool operator==(const PartitionPolicy&) const = default;
};

// A partition: a layer, or a fixed-size sub-group of a big layer's
// parameters (elements [first_param, first_param + params) of the layer).
struct Partition {
  int layer = 0;            // index into Workload::layers()
  int64_t first_param = 0;  // offset within the layer
  int64_t params = 0;
  bool operator==(const Partition&) const = default;
};

struct Policy {
  ZeroStage stage = ZeroStage::k0;
  // Layers bigger than this are split into sub-groups of at most this many
  // parameters for the optimizer and its I/O; 0 keeps whole layers.
  int64_t sub_group_params = 0;
  // Gathering by parameter (core/gather_pieces.h): layers with more
  // parameters than this are fetched, computed and released in pieces of
  // at most this many (whole modules, a larger module tiled into row
  // blocks), so the GPU never holds a whole layer; 0 gathers whole layers.
  int64_t gather_params = 0;
  std::vector<PartitionPolicy> partitions;  // one per partition, in order
  int nvme_prefetch_depth = 2;  // partitions ahead whose NVMe reads are issued
  int h2d_prefetch_depth = 2;   // partitions ahead whose CPU->GPU uploads are issued
  int staging_buffers = 4;      // pinned host buffers for PCIe transfers
  Bytes staging_buffer_size;    // each; 0 = the largest partition's param16
  bool pinned_memory = true;    // pinned host buffers (full-rate DMA) or pageable
  // NVMe I/O as the executor issues it: the unit of transfer and checksum,
  // and the block requests in flight per direction (DeepSpeed aio's
  // block_size and queue_depth).
  Bytes nvme_block_size = Bytes(int64_t{1} << 20);
  int nvme_queue_depth = 8;
  bool delayed_update = false;  // one-step delayed parameter update (ZeRO-Offload DPU)
  // Optimizer ops start as their gradients arrive instead of waiting for
  // the step's gradient check (overflow, clipping); each keeps a rollback
  // copy of its states until the check has passed, and a failed check
  // rolls the step back and replays it (DeepSpeed SuperOffload's
  // speculation-then-validation). Only matters when the step has a check.
  bool speculative_update = false;
  bool activation_checkpointing = true;
  // Adam moments in fp32 or bf16 (core/tensor_class.h, StatePrecision), for
  // every partition; the planner chooses bf16 only when the user allows it.
  StatePrecision optimizer_state_precision = StatePrecision::kFp32;
  // The training shape the plan chose: sequences per micro-batch and
  // micro-steps per optimizer step; 0 keeps the training profile's.
  int64_t micro_batch = 0;
  int64_t gradient_accumulation = 0;
  bool operator==(const Policy&) const = default;
};

// The training as the policy runs it: its micro-batch, accumulation and
// checkpointing override the profile's.
[[nodiscard]] TrainingSpec effective_training(const TrainingSpec& training, const Policy& policy);

// The partitions a policy's sub-group size makes of a workload's layers.
[[nodiscard]] std::vector<Partition> partitions_of(const Workload& workload, int64_t sub_group_params);

// A partition's name in op names, traces and checkpoints: its layer's
// ("layers.3"), or a slice of it ("layers.3[0+300000]").
[[nodiscard]] std::string partition_name(const Workload& workload, const Partition& partition);
// The same for any range of a layer's parameters (a gathered piece).
[[nodiscard]] std::string range_name(const Layer& layer, int64_t first_param, int64_t params);

// Training steps to lower so that the last two intervals show the steady
// state (the summary averages them): a delayed update reads parameters two
// steps old, so its pipeline fills only by the fourth step and may then
// alternate between two periods (measured: OPT-13B on a Gen3 workstation,
// 34.3 s at the fifth step, then 35.8 / 34.5 / 35.7 s, mean 35.1 s); without
// it, the third step is steady.
[[nodiscard]] inline int steady_state_steps(const Policy& policy) { return policy.delayed_update ? 7 : 4; }

// A uniform policy realising a standard placement for every partition.
[[nodiscard]] Policy policy_for(const Placement& placement, const Workload& workload,
                                const TrainingSpec& training);

}  // namespace stowage::core
