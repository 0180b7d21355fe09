#include "core/memory_at_peak.h"

#include <algorithm>

#include "core/memory_replay.h"

namespace stowage::core {
namespace {

// Name prefixes lowering gives memory effects (core/lower.cpp), by item.
struct NamePrefix {
  std::string_view prefix;
  MemoryItem item;
};
constexpr std::array<NamePrefix, 14> kPrefixes = {{
    {kParamsAtRest, MemoryItem::kParam16},
    {kStatesAtRest, MemoryItem::kOptimizerStates},
    {"fetched param16 ", MemoryItem::kParam16},
    {"gathered param16 ", MemoryItem::kParam16},
    {"staged param16 ", MemoryItem::kParam16},
    {"updated param16 ", MemoryItem::kParam16},
    {"grad16 ", MemoryItem::kGrad16},
    {"states ", MemoryItem::kOptimizerStates},  // "states layers.3 staged": read from NVMe
    {kRollbackCopy, MemoryItem::kRollbackCopies},
    {"activations ", MemoryItem::kActivations},
    {"recomputed ", MemoryItem::kActivations},
    {"scratch ", MemoryItem::kScratch},
    {"checkpoint snapshot ", MemoryItem::kCheckpointSnapshots},
    {"pinned staging buffers", MemoryItem::kStagingBuffers},
}};

using Totals = std::array<Bytes, kMemoryItemCount + 1>;  // the last: unknown names
constexpr size_t kUnknown = kMemoryItemCount;

size_t slot_of(std::string_view tensor, const std::vector<std::string>& pools) {
  if (std::find(pools.begin(), pools.end(), tensor) != pools.end())
    return static_cast<size_t>(MemoryItem::kRuntimePools);
  const std::optional<MemoryItem> item = memory_item_of(tensor);
  return item ? static_cast<size_t>(*item) : kUnknown;
}

TierPeak peak_of(Tier tier, Bytes peak, SimTime at, const Totals& totals) {
  TierPeak out{.tier = tier, .peak = peak, .at = at, .unknown = totals[kUnknown]};
  for (int i = 0; i < kMemoryItemCount; ++i) {
    if (totals[static_cast<size_t>(i)].count() != 0)
      out.held.push_back({static_cast<MemoryItem>(i), totals[static_cast<size_t>(i)]});
  }
  std::stable_sort(out.held.begin(), out.held.end(),
                   [](const HeldItem& a, const HeldItem& b) { return a.bytes > b.bytes; });
  return out;
}

}  // namespace

std::string_view to_string(MemoryItem item) {
  switch (item) {
    case MemoryItem::kParam16:
      return "param16";
    case MemoryItem::kGrad16:
      return "grad16";
    case MemoryItem::kOptimizerStates:
      return "optimizer states (master32 + adam_m + adam_v)";
    case MemoryItem::kRollbackCopies:
      return "rollback copies of optimizer states";
    case MemoryItem::kActivations:
      return "activations";
    case MemoryItem::kScratch:
      return "fp32 scratch";
    case MemoryItem::kCheckpointSnapshots:
      return "checkpoint snapshots";
    case MemoryItem::kStagingBuffers:
      return "pinned staging buffers";
    case MemoryItem::kReserve:
      return "reserve";
    case MemoryItem::kRuntimePools:
      return "runtime buffer pools";
  }
  return "";
}

std::optional<TensorClass> tensor_class_of(MemoryItem item) {
  switch (item) {
    case MemoryItem::kParam16:
      return TensorClass::kParam16;
    case MemoryItem::kGrad16:
      return TensorClass::kGrad16;
    case MemoryItem::kActivations:
      return TensorClass::kActivation;
    default:
      return std::nullopt;
  }
}

std::optional<MemoryItem> memory_item_of(std::string_view tensor) {
  if (tensor == "runtime reserve" || tensor == "host reserve") return MemoryItem::kReserve;
  for (const NamePrefix& p : kPrefixes) {
    if (tensor.starts_with(p.prefix)) return p.item;
  }
  return std::nullopt;
}

std::array<TierPeak, 3> memory_at_peak(const Schedule& schedule, const Timeline& timeline,
                                       const std::vector<std::string>& runtime_pool_names) {
  std::array<Totals, 3> now{};
  std::array<Bytes, 3> in_use{};
  for (const MemoryEffect& e : schedule.resident_items) {
    now[static_cast<size_t>(e.tier)][slot_of(e.tensor, runtime_pool_names)] += e.bytes;
    in_use[static_cast<size_t>(e.tier)] += e.bytes;
  }
  std::array<Totals, 3> at_peak = now;
  std::array<Bytes, 3> peak = in_use;
  std::array<SimTime, 3> when{};
  for (const MemoryEvent& event : memory_events(schedule, timeline)) {
    const bool starts = event.start;
    const Op& op = schedule.op(event.op);
    for (const MemoryEffect& e : starts ? op.allocs : op.frees) {
      const size_t t = static_cast<size_t>(e.tier);
      Bytes& held = now[t][slot_of(e.tensor, runtime_pool_names)];
      held = starts ? held + e.bytes : held - e.bytes;
      in_use[t] = starts ? in_use[t] + e.bytes : in_use[t] - e.bytes;
      if (in_use[t] > peak[t]) {
        peak[t] = in_use[t];
        at_peak[t] = now[t];
        when[t] = event.time;
      }
    }
  }
  std::array<TierPeak, 3> out;
  for (Tier t : kAllTiers) {
    const size_t i = static_cast<size_t>(t);
    out[i] = peak_of(t, peak[i], when[i], at_peak[i]);
  }
  return out;
}

}  // namespace stowage::core
