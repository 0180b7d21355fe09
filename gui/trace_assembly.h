// What both trace readers (the exact JSON one and the fast line reader) fill
// in before a TraceModel is final: process and thread names, which thread
// each op sits on, and the problems found. finish_assembly() turns threads
// into tracks in display order. Internal to the trace loader.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"
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
// nlohmann's parse_error message without its "[json.exception...] parse
// error at line 1, column 2:" prefix (the diagnostic carries line and column).
[[nodiscard]] std::string json_parse_message(const std::string& what);

// Reads otherData: the format version (an unknown one is a problem), title,
// source, ranks and steps.
void read_header(TraceAssembly& a, const nlohmann::json& root);

// Threads with ops become tracks (ranks, then sort index, then tid); memory
// is put in time order and the model finished. Returns the problems instead
// when there are any.
[[nodiscard]] core::Result<TraceModel> finish_assembly(TraceAssembly&& a);

}  // namespace stowage::gui
