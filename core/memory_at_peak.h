// What each tier holds at the moment of its peak, replayed from a schedule
// and a timeline of it (the simulator's or the executor's) by the rule both
// interpreters apply (core/memory_replay.h), and grouped by what the bytes
// are: a tensor class, or a buffer the runtime holds. `stowage memory`
// reports this for a placement's schedule, so its figures are the
// simulator's peak and cannot disagree with `stowage simulate` (issue 11).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/schedule.h"
#include "core/timeline.h"

namespace stowage::core {

// What a memory effect holds, from the tensor name lowering gives it
// ("fetched param16 layers.3", "optimizer states at rest (...)").
enum class MemoryItem {
  kParam16,           // 16-bit weights: at rest, fetched, gathered, staged or updated
  kGrad16,            // 16-bit gradients, on the GPU or landed on the host
  kOptimizerStates,   // master32 + adam_m + adam_v: at rest or staged from NVMe
  kRollbackCopies,    // a speculative update's copies of the states (kAcceptUpdate)
  kActivations,       // saved for backward, and recomputed under checkpointing
  kScratch,           // fp32 workspaces an op holds while it runs
  kCheckpointSnapshots,
  kStagingBuffers,    // pinned host buffers for PCIe transfers
  kReserve,           // CUDA context and allocator slack on the GPU, OS and loader on the host
  kRuntimePools,      // buffers a target runtime allocates (DeepSpeed's swap pools)
};
inline constexpr int kMemoryItemCount = static_cast<int>(MemoryItem::kRuntimePools) + 1;

[[nodiscard]] std::string_view to_string(MemoryItem item);

// The tensor class of an item that is one (optimizer states are three, of
// 4 bytes per parameter each; see split_states), else none.
[[nodiscard]] std::optional<TensorClass> tensor_class_of(MemoryItem item);

// What the effect named `tensor` holds; none for a name lowering does not
// give (a test lowers every bundled case and checks that none is left).
// Names of runtime pools are not recognised here: callers that add pools
// (planner::evaluate) pass them in `runtime_pool_names` of memory_at_peak.
[[nodiscard]] std::optional<MemoryItem> memory_item_of(std::string_view tensor);

struct HeldItem {
  MemoryItem item;
  Bytes bytes;  // per rank
};

struct TierPeak {
  Tier tier = Tier::kGpu;
  Bytes peak;               // per rank; the timeline's peak on the tier (replay_peak)
  SimTime at = 0;           // the first moment the tier held `peak`
  std::vector<HeldItem> held;  // what made up `peak` then, by item, largest first; sums to `peak`
  Bytes unknown;            // bytes of names memory_item_of does not know (0 for Stowage's own schedules)
};

// Per tier (indexed by Tier), the peak over `timeline` (one span per op of
// `schedule`) and what the tier held at that moment. Items in
// schedule.resident_items named in `runtime_pool_names` count as kRuntimePools.
[[nodiscard]] std::array<TierPeak, 3> memory_at_peak(const Schedule& schedule, const Timeline& timeline,
                                                     const std::vector<std::string>& runtime_pool_names = {});

}  // namespace stowage::core
