// Reads a trace Stowage wrote (docs/formats/trace.md) back into the
// schedule's ops and their timeline, for the compare report and
// calibration: every op with its id, kind, lane, bytes, FLOPs, parameters
// and dependencies, and its span. Memory effects are not in a trace and
// come back empty; a lane's slots are as many as the trace shows in use.
// Bad input is a diagnostic (file:line:column for JSON syntax), never a crash.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"
#include "core/schedule.h"
#include "core/timeline.h"
#include "core/trace_origin.h"

namespace stowage::core {

struct RecordedTrace {
  Schedule schedule;  // ops by id; deps, sizes and lanes as the trace gives them
  Timeline timeline;  // spans by op id
  std::string title;
  std::string source;  // "predicted" or "measured"
  std::vector<std::string> warnings;  // otherData.warnings: what a prediction rests on
  TraceOrigin origin;                 // the machine predicted, or the device measured on
};

// `file` names the text in diagnostics. Op ids must be 0..n-1, each once.
[[nodiscard]] Result<RecordedTrace> parse_recorded_trace(std::string_view text, const std::string& file);
[[nodiscard]] Result<RecordedTrace> load_recorded_trace(const std::filesystem::path& path);

}  // namespace stowage::core
