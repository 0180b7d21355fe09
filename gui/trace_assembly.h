// What both trace readers (the exact JSON one and the fast line reader) fill
// in before a TraceModel is final: process and thread names, which thread
// each op sits on, and the problems found. finish_assembly() turns threads
// into tracks in display order. Internal to the trace loader.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"
#include "core/trace_events.h"
#include "gui/trace_model.h"

namespace stowage::gui {

inline constexpr size_t kMaxTraceProblems = 20;  // reported at once, at most

struct ThreadKey {
  int64_t pid = 0, tid = 0;
  auto operator<=>(const ThreadKey&) const = default;
};

struct ThreadInfo {
  std::string name;
  int64_t sort_index = 0;
  std::vector<int32_t> ops;  // indices into the model's ops, in file order
};

struct TraceAssembly {
  std::string file;
  TraceModel model;
  core::Diagnostics problems;
  std::map<int64_t, std::string> process_names;
  std::map<ThreadKey, ThreadInfo> threads;

  // "traceEvents[<event>]: <what>"; `line` (1-based) when the reader knows it.
  void problem(size_t event, std::string what, std::string expected = {}, int line = 0);
};

// Microseconds as the trace writes them to whole nanoseconds, rounded.
[[nodiscard]] SimTime micros_to_ns(double micros);
// The tier a counter event samples: "gpu memory" -> gpu; nullopt for others.
[[nodiscard]] std::optional<core::Tier> tier_of_counter(std::string_view name);
// The tier whose bytes by class a counter breaks down: "classes in gpu
// memory" -> gpu; nullopt for others (docs/formats/trace.md).
[[nodiscard]] std::optional<core::Tier> tier_of_class_counter(std::string_view name);
// One such counter event: each numeric arg is a class's bytes.
void read_class_sample(TraceAssembly& a, core::Tier tier, SimTime at,
                       std::span<const std::pair<std::string_view, int64_t>> values);

// Reads otherData: the format version (an unknown one is a problem), title,
// source, ranks and steps.
void read_header(TraceAssembly& a, const core::TraceHeader& header);

// Threads with ops become tracks (ranks, then sort index, then tid); memory
// is put in time order and the model finished. Returns the problems instead
// when there are any.
[[nodiscard]] core::Result<TraceModel> finish_assembly(TraceAssembly&& a);

}  // namespace stowage::gui
