// The fast reader for traces in Stowage's own layout (core/chrome_trace.cpp,
// docs/formats/trace.md): a small JSON header, a line `"traceEvents":[`,
// one event per line, and a line `]}`. The events are split into chunks of
// whole lines and each chunk is scanned on its own thread by a small
// hand-written JSON scanner that builds compact ops (names in one arena,
// dependencies in one array); the chunks are then joined in file order.
// It gives the same model as the exact reader (trace_loader.cpp): anything
// it does not reproduce exactly (escaped keys, huge integers, a layout it
// does not recognise) makes it step aside for the exact reader.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/diagnostic.h"
#include "gui/trace_model.h"

namespace stowage::gui {

struct LineReaderOptions {
  size_t min_chunk_bytes = size_t{4} << 20;  // a worker thread gets at least this much text
  unsigned threads = 0;                      // at most; 0: std::thread::hardware_concurrency()
};

// nullopt: not in the line layout, or a line outside what this reader
// handles; the caller parses `text` with the exact reader. Otherwise the
// model, or the diagnostics: a line that is not JSON is reported at
// file:line:column with the JSON parser's message, and bad events as the
// exact reader words them, with their line. Starts up to
// std::thread::hardware_concurrency() threads and joins them; touches no Qt.
[[nodiscard]] std::optional<core::Result<TraceModel>> read_trace_lines(std::string_view text,
                                                                       const std::string& file,
                                                                       const LineReaderOptions& options = {});

}  // namespace stowage::gui
