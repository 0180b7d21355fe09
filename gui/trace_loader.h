// Reads a Chrome Trace Event JSON file as Stowage writes it
// (docs/formats/trace.md) into a TraceModel. Other Chrome traces open too:
// missing Stowage arguments take their defaults. Bad input is a diagnostic,
// never a crash; JSON syntax errors carry file:line:column.
//
// Two readers give the same model. Stowage's own traces (one event per
// line, core/chrome_trace.cpp) go through a fast line reader that parses
// chunks of lines on all cores into compact storage: a million-op trace
// opens in well under the time and memory a JSON tree of it takes. Any
// other layout, and any line outside the subset the line reader knows,
// goes through the exact reader (a full JSON parse).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "core/diagnostic.h"
#include "gui/trace_model.h"

namespace stowage::gui {

enum class TraceReader {
  kAuto,   // the line reader when the text is in Stowage's line layout, else the exact one
  kLines,  // only the line reader: text in another layout is a diagnostic (for tests, benches)
  kJson,   // only the exact reader
};

// Parses `text`; `file` names it in diagnostics and in TraceInfo::file. All
// problems with events are reported at once (the first 20); the line
// reader adds the line. Runs on any thread (the line reader starts its own
// worker threads and joins them before returning); touches no Qt.
[[nodiscard]] core::Result<TraceModel> parse_trace(std::string_view text, const std::string& file,
                                                   TraceReader reader = TraceReader::kAuto);

// Maps (or reads) the file at `path` and parses it; an unreadable file is a
// diagnostic.
[[nodiscard]] core::Result<TraceModel> load_trace(const std::filesystem::path& path,
                                                  TraceReader reader = TraceReader::kAuto);

}  // namespace stowage::gui
