// A schedule: one or more training steps as a DAG of ops, each bound to a
// lane, with the bytes or FLOPs it moves or computes and the memory it
// allocates and frees. The simulator and the executor interpret the very
// same schedule (ARCHITECTURE.md). One schedule describes one representative
// data-parallel rank; resources shared by the ranks are divided by `ranks`.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor_class.h"
#include "core/units.h"

namespace stowage::core {

// A resource that runs ops in issue order, like a CUDA stream or a disk queue.
enum class Lane : uint8_t { kGpuCompute, kPcieH2d, kPcieD2h, kNvmeRead, kNvmeWrite, kCpuOptim, kGpuComm };
inline constexpr int kLaneCount = 7;
inline constexpr std::array<Lane, kLaneCount> kAllLanes = {Lane::kGpuCompute, Lane::kPcieH2d, Lane::kPcieD2h,
                                                           Lane::kNvmeRead,   Lane::kNvmeWrite, Lane::kCpuOptim,
                                                           Lane::kGpuComm};

[[nodiscard]] constexpr std::string_view to_string(Lane lane) {
  switch (lane) {
    case Lane::kGpuCompute: return "gpu.compute";
    case Lane::kPcieH2d: return "pcie.h2d";
    case Lane::kPcieD2h: return "pcie.d2h";
    case Lane::kNvmeRead: return "nvme.read";
    case Lane::kNvmeWrite: return "nvme.write";
    case Lane::kCpuOptim: return "cpu.optim";
    case Lane::kGpuComm: return "gpu.comm";
  }
  return "";
}

enum class OpKind : uint8_t {
  kForward,        // a layer's forward pass
  kRecompute,      // a checkpointed layer's forward again, before its backward
  kBackward,       // a layer's backward pass
  kUploadParams,   // param16 of a partition, CPU -> GPU
  kOffloadGrads,   // grad16 of a partition, GPU -> CPU
  kOptimizer,      // Adam/AdamW on a partition (on the CPU or the GPU); one that
                   // allocates a rollback copy is speculative (kAcceptUpdate)
  kReadStates,     // master32, adam_m, adam_v of a partition, NVMe -> CPU
  kWriteStates,    // the same, CPU -> NVMe
  kReadParams,     // param16 of a partition, NVMe -> CPU
  kWriteParams,    // updated param16, CPU -> NVMe
  kAllGather,      // ZeRO-3 parameter gather across ranks
  kReduceScatter,  // gradient reduction across ranks, each keeping its shard (stage >= 2)
  kAllReduce,      // gradient reduction across ranks, each keeping all (stages 0 and 1)
  // The step's gradients reduced to one verdict before any optimizer op
  // may use them: non-finite (fp16 overflow: the step is skipped) and the
  // global L2 norm (gradient clipping). One op per lane whose tier holds
  // gradients: on gpu.compute over device gradients, on cpu.optim over host
  // gradients (the latter also waits for the former).
  kGradCheck,
  // A checkpoint after a step: with a partition, a snapshot of that
  // partition's state into host memory once the step's update of it has
  // landed (the next step's update of it waits for the snapshot); without
  // one, the commit that writes every snapshot to the checkpoint folder.
  // The simulator gives both no duration (their I/O goes to the checkpoint
  // folder, outside the plan's lanes); the snapshots' host memory counts.
  kCheckpoint,
  // Speculative updates (Policy::speculative_update): once the step's
  // gradient check is known, accepts its optimizer ops' results and frees
  // their rollback copies, or restores the copies and replays the step
  // with the check's verdict (skip, or clip). The next use of the step's
  // parameters and states waits for it. The simulator prices acceptance
  // (no duration); a replay is the rare path and is not predicted.
  kAcceptUpdate,
  // Updated param16 from a GPU optimizer, GPU -> CPU, for parameters that
  // rest off the GPU: into their CPU home, or into a host buffer that a
  // kWriteParams then stores on NVMe.
  kOffloadParams,
};
inline constexpr int kOpKindCount = static_cast<int>(OpKind::kOffloadParams) + 1;

// A layer's forward, recompute or backward: the ops whose FLOPs the compute
// rate prices (the device optimizer and the gradient check are priced by
// their bytes).
[[nodiscard]] constexpr bool is_layer_pass(OpKind k) {
  return k == OpKind::kForward || k == OpKind::kRecompute || k == OpKind::kBackward;
}

[[nodiscard]] std::string_view to_string(OpKind kind);

using OpId = int32_t;

// Bytes allocated (at an op's start) or freed (at its end) on one tier.
struct MemoryEffect {
  Tier tier;
  Bytes bytes;
  std::string tensor;  // "param16 layers.3" - who holds the memory
};

// A point where an op's memory effects apply: its allocations as it
// starts, or its frees as it ends.
struct MemoryStep {
  OpId op = 0;
  bool start = false;
  friend bool operator==(const MemoryStep&, const MemoryStep&) = default;
};

struct Op {
  OpId id = 0;
  OpKind kind = OpKind::kForward;
  Lane lane = Lane::kGpuCompute;
  std::string name;     // "fwd layers.3 s0 m0"
  int partition = -1;   // index into the policy's partitions; -1 for whole-layer compute
  int layer = -1;       // index into Workload::layers()
  int step = 0;         // training step within the schedule
  int micro_step = 0;   // gradient-accumulation micro-step
  std::optional<TensorClass> tensor_class;  // what a transfer moves
  Bytes bytes;          // moved by a transfer, or touched in HBM by compute
  Flops flops;          // computed by a compute op
  int64_t params = 0;   // updated by an optimizer op
  std::vector<OpId> deps;            // ops that must finish before this starts
  std::vector<MemoryEffect> allocs;  // applied at start
  std::vector<MemoryEffect> frees;   // applied at end
  std::vector<std::string> reads;    // named data this op consumes (validated)
  std::vector<std::string> writes;   // named data this op produces
};

// The rollback copy a speculative optimizer op allocates (kAcceptUpdate),
// or null: what makes an optimizer op speculative.
inline constexpr std::string_view kRollbackCopy = "rollback copy ";
[[nodiscard]] inline const MemoryEffect* rollback_copy(const Op& op) {
  for (const MemoryEffect& e : op.allocs) {
    if (e.tensor.starts_with(kRollbackCopy)) return &e;
  }
  return nullptr;
}

// The resident items that are the partitions' homes (parameters and
// optimizer states where they rest); every other resident item is a
// buffer the runtime holds for the whole run (staging buffers, reserves).
inline constexpr std::string_view kParamsAtRest = "param16 at rest";
inline constexpr std::string_view kStatesAtRest = "optimizer states at rest (master32, adam_m, adam_v)";

struct Schedule {
  std::vector<Op> ops;  // in issue order; ops[i].id == i
  int steps = 1;
  int ranks = 1;                    // data-parallel ranks the machine runs
  int64_t tokens_per_step = 0;      // all ranks together
  Flops model_flops_per_step;       // 6·N·T, all ranks together
  std::array<Bytes, 3> resident;    // per rank, resident at the start, by Tier
  std::vector<MemoryEffect> resident_items;  // what makes up `resident`, per rank
  std::array<Bytes, 3> capacity;    // per rank: GPU memory, host DRAM / ranks, NVMe / ranks
  std::vector<std::string> initial_data;  // named data present before the first op
  // Ops a lane may run at once: 1 for streams, the queue depth for NVMe.
  std::array<int, kLaneCount> lane_slots{1, 1, 1, 1, 1, 1, 1};
  // Is the step's compute in bf16 (else fp16)? Picks the GPU's matmul rate.
  bool bf16 = true;
  // The order in which the ops' memory effects apply, tier by tier, when
  // the schedule fixes one: an allocation waits for every effect before it
  // on its tier, and a free is held until they have applied, so a tier's
  // peak is the same however the lanes race (core/memory_gate.h, which
  // both interpreters follow). Empty: allocations apply as ops start and
  // frees as they end. A run takes the order of its prediction
  // (core::memory_order_of), so its measured peaks are the predicted ones.
  std::vector<MemoryStep> memory_order;
  // Are host buffers page-locked? Pageable copies go through a bounce
  // buffer at about half the rate.
  bool pinned = true;

  [[nodiscard]] const Op& op(OpId id) const { return ops[static_cast<size_t>(id)]; }
};

}  // namespace stowage::core
