#include "core/memory_by_class.h"

#include <algorithm>

#include "core/memory_replay.h"
#include "core/tensor_class.h"

namespace stowage::core {

std::string_view to_string(MemoryClass c) {
  switch (c) {
    case MemoryClass::kParam16:
      return "param16";
    case MemoryClass::kGrad16:
      return "grad16";
    case MemoryClass::kGrad32:
      return "grad32";
    case MemoryClass::kMaster32:
      return "master32";
    case MemoryClass::kAdamM:
      return "adam_m";
    case MemoryClass::kAdamV:
      return "adam_v";
    case MemoryClass::kOptimizerStates:
      return "optimizer_states";
    case MemoryClass::kActivation:
      return "activation";
    case MemoryClass::kWorkspace:
      return "workspace";
    case MemoryClass::kStaging:
      return "staging";
    case MemoryClass::kReserve:
      return "reserve";
    case MemoryClass::kCheckpoint:
      return "checkpoint";
    case MemoryClass::kOther:
      return "other";
  }
  return "other";
}

MemoryClass memory_class_of(std::string_view tensor) {
  // The names lowering gives (core/lower.cpp): a tensor class word where
  // there is one, else the word that says what the buffer is for.
  constexpr std::array<std::pair<std::string_view, MemoryClass>, 14> kWords = {{
      {"rollback", MemoryClass::kOptimizerStates},
      {"states", MemoryClass::kOptimizerStates},
      {"checkpoint", MemoryClass::kCheckpoint},
      {"param16", MemoryClass::kParam16},
      {"grad16", MemoryClass::kGrad16},
      {"grad32", MemoryClass::kGrad32},
      {"master32", MemoryClass::kMaster32},
      {"adam_m", MemoryClass::kAdamM},
      {"adam_v", MemoryClass::kAdamV},
      {"activations", MemoryClass::kActivation},
      {"recomputed", MemoryClass::kActivation},
      {"scratch", MemoryClass::kWorkspace},
      {"staging", MemoryClass::kStaging},
      {"reserve", MemoryClass::kReserve},
  }};
  for (const auto& [word, c] : kWords) {
    for (size_t at = tensor.find(word); at != std::string_view::npos; at = tensor.find(word, at + 1)) {
      const bool starts = at == 0 || tensor[at - 1] == ' ';
      const size_t end = at + word.size();
      if (starts && (end == tensor.size() || tensor[end] == ' ')) return c;
    }
  }
  return MemoryClass::kOther;
}

std::vector<ClassSample> memory_by_class(const Schedule& schedule, const Timeline& timeline) {
  std::array<ClassSample, 3> now{};
  for (const Tier t : kAllTiers) now[static_cast<size_t>(t)].tier = t;
  for (const MemoryEffect& e : schedule.resident_items)
    now[static_cast<size_t>(e.tier)].bytes[static_cast<size_t>(memory_class_of(e.tensor))] += e.bytes;
  std::vector<ClassSample> out;
  for (const ClassSample& s : now) {
    if (std::ranges::any_of(s.bytes, [](Bytes b) { return b.count() != 0; })) out.push_back(s);
  }
  const std::vector<MemoryEvent> events = memory_events(schedule, timeline);
  for (size_t k = 0; k < events.size();) {
    const SimTime t = events[k].time;
    std::array<bool, 3> changed{};
    for (; k < events.size() && events[k].time == t; ++k) {
      const bool starts = events[k].start;
      const Op& op = schedule.op(events[k].op);
      for (const MemoryEffect& e : starts ? op.allocs : op.frees) {
        Bytes& b = now[static_cast<size_t>(e.tier)].bytes[static_cast<size_t>(memory_class_of(e.tensor))];
        b = starts ? b + e.bytes : b - e.bytes;
        changed[static_cast<size_t>(e.tier)] = true;
      }
    }
    for (const Tier tier : kAllTiers) {
      if (!changed[static_cast<size_t>(tier)]) continue;
      ClassSample s = now[static_cast<size_t>(tier)];
      s.time = t;
      out.push_back(s);
    }
  }
  return out;
}

}  // namespace stowage::core
