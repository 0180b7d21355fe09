// Who holds a tier's bytes over a timeline, by memory class: the tensor
// classes and the buffers that are none (workspaces, reserves, staging).
// Replayed from the schedule's memory effects alone (the rule of
// core/memory_replay.h), so the simulator's and the executor's traces, both
// written by core/chrome_trace.cpp, break their memory down by the same code.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/schedule.h"
#include "core/timeline.h"

namespace stowage::core {

enum class MemoryClass : uint8_t {
  kParam16,
  kGrad16,
  kGrad32,
  kMaster32,
  kAdamM,
  kAdamV,
  kOptimizerStates,  // master32 + adam_m + adam_v held as one (at rest, a rollback copy)
  kActivation,       // saved and recomputed activations
  kWorkspace,        // an op's own scratch
  kStaging,          // pinned staging buffers for PCIe
  kReserve,          // runtime and host reserves
  kCheckpoint,       // checkpoint snapshots
  kOther,            // a name none of the above matches (a test keeps lowering clear of it)
};
inline constexpr size_t kMemoryClassCount = 13;

// "param16", "optimizer_states", ... as traces name them.
[[nodiscard]] std::string_view to_string(MemoryClass c);
// The class of a memory effect from its tensor name ("fetched param16
// layers.3" -> param16, "activations layers.2 s0 m0" -> activation).
[[nodiscard]] MemoryClass memory_class_of(std::string_view tensor);

struct ClassSample {
  SimTime time = 0;
  Tier tier = Tier::kGpu;
  std::array<Bytes, kMemoryClassCount> bytes{};  // by MemoryClass, in use from `time` on, per rank
};

// The resident items at time 0, then, for each tier and instant at which an
// op with a span starts or ends and changes that tier, its classes after
// every change of that instant; in time order (tiers in Tier order within
// an instant). Ops past timeline.spans are left out, as the trace writer
// leaves them out.
[[nodiscard]] std::vector<ClassSample> memory_by_class(const Schedule& schedule, const Timeline& timeline);

}  // namespace stowage::core
