// Reads a Chrome Trace Event JSON file as Stowage writes it
// (docs/formats/trace.md) into a TraceModel. Other Chrome traces open too:
// missing Stowage arguments take their defaults. Bad input is a diagnostic,
// never a crash; JSON syntax errors carry file:line:column.
#pragma once

#include <filesystem>
#include <string>

#include "core/diagnostic.h"
#include "gui/trace_model.h"

namespace stowage::gui {

// Parses `text`; `file` names it in diagnostics and in TraceInfo::file. All
// problems with events are reported at once (the first 20). Runs on any
// thread; touches no Qt.
[[nodiscard]] core::Result<TraceModel> parse_trace(const std::string& text, const std::string& file);

// Reads and parses the file at `path`; an unreadable file is a diagnostic.
[[nodiscard]] core::Result<TraceModel> load_trace(const std::filesystem::path& path);

}  // namespace stowage::gui
