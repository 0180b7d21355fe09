// Memory accounting: bytes per tier for every tensor class under a
// placement, plus what runtimes really need beyond model states
// (activations, pinned staging buffers, NVMe swap buffers, the largest layer
// gathered on the GPU, framework reserves), against each tier's capacity.
//
// GPU figures are per GPU (each rank holds its own); CPU and NVMe figures are
// per machine (all ranks share the host and its drives).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "core/machine_spec.h"
#include "core/placement.h"
#include "core/training_spec.h"
#include "core/workload.h"

namespace stowage::core {

// Whose bookkeeping to follow. kStowage is what Stowage's executor does
// (fused Adam reads grad16; layer-sized buffers). kDeepSpeedEstimator
// reproduces DeepSpeed's published estimate_zero2/zero3_model_states_mem_needs:
// an fp32 gradient partition, module-sized "largest layer", construction
// peaks, and its 1.5x additional_buffer_factor on CPU.
enum class Convention { kStowage, kDeepSpeedEstimator };

enum class Scope { kModelStates, kEverything };

struct RuntimeBuffers {
  Bytes gpu_reserve{int64_t{1} << 30};   // CUDA context, cuBLAS workspace, allocator slack
  Bytes host_reserve{int64_t{8} << 30};  // OS, Python and data loader on the host
  int staging_buffers = 4;     // pinned buffers per rank, one layer of param16 each
  int nvme_swap_buffers = 4;   // fp32 buffers per rank for optimizer-state swap (DeepSpeed buffer_count)
  int param_swap_buffers = 5;  // 16-bit buffers per rank for NVMe-resident params
};

struct MemoryOptions {
  Convention convention = Convention::kStowage;
  Scope scope = Scope::kEverything;
  bool zero_init = true;  // stage 3 builds the model a layer at a time (deepspeed.zero.Init)
  RuntimeBuffers buffers;
};

// One row of the account: `bytes` of `item` resting on `tier`.
struct MemoryLine {
  Tier tier;
  std::string item;                         // "param16", "activations", "staging buffers"
  std::optional<TensorClass> tensor_class;  // absent for buffers and reserves
  Bytes bytes;
};

struct TierBudget {
  Tier tier;
  Bytes used;
  Bytes capacity;
  [[nodiscard]] bool fits() const { return used <= capacity; }
  [[nodiscard]] Bytes overflow() const { return fits() ? Bytes(0) : used - capacity; }
};

struct MemoryEstimate {
  Placement placement;
  std::vector<MemoryLine> lines;
  std::array<TierBudget, 3> tiers;  // indexed by Tier

  [[nodiscard]] const TierBudget& tier(Tier t) const { return tiers[static_cast<size_t>(t)]; }
  [[nodiscard]] bool fits() const;
  // The first tier (gpu, cpu, nvme order) whose use exceeds its capacity.
  [[nodiscard]] std::optional<Tier> first_overflow() const;
  // Sum of lines on `t` of one tensor class.
  [[nodiscard]] Bytes bytes_of(Tier t, TensorClass c) const;
};

// Whether DeepSpeed's estimator has a formula for the placement:
// estimate_zero2_model_states_mem_needs covers stages 1 and 2 with or
// without CPU offload; estimate_zero3_model_states_mem_needs covers stage 3
// without offload, with the optimizer on the CPU, and with both optimizer
// and parameters on the CPU. Neither covers stage 0, NVMe, parameters
// offloaded without the optimizer, or a partial offload ratio.
[[nodiscard]] bool deepspeed_estimator_covers(const Placement& placement);

[[nodiscard]] MemoryEstimate estimate_memory(const Workload& workload, const MachineSpec& machine,
                                             const TrainingSpec& training, const Placement& placement,
                                             const MemoryOptions& options = {});

}  // namespace stowage::core
