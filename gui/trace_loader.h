// Reads a Chrome Trace Event JSON file as Stowage writes it
// (docs/formats/trace.md) into a TraceModel. Other Chrome traces open too:
// missing Stowage arguments take their defaults. Bad input is a diagnostic,
// never a crash; JSON syntax errors carry file:line:column.
//
// The text goes through core's trace walker (core/trace_events.h), the one
// simdjson On-Demand reader every trace Stowage reads passes through, into
// compact storage (names in one arena, dependencies in one array): no JSON
// tree of the file is built.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "core/diagnostic.h"
#include "gui/trace_model.h"

namespace stowage::gui {

// Parses `text`; `file` names it in diagnostics and in TraceInfo::file. All
// problems with events are reported at once (the first 20), with their
// line. Runs on any thread; touches no Qt.
[[nodiscard]] core::Result<TraceModel> parse_trace(std::string_view text, const std::string& file);

// Reads the file at `path` (a regular file of at most 4 GiB) and parses it;
// an unreadable file is a diagnostic.
[[nodiscard]] core::Result<TraceModel> load_trace(const std::filesystem::path& path);

}  // namespace stowage::gui
