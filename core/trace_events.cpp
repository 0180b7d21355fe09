// The walk over the whole text (core/trace_walk.h), and the choice between
// it and the walk in pieces that big traces take (core/trace_event_pieces.h).
#include "core/trace_events.h"

#include <simdjson.h>

#include <algorithm>
#include <utility>

#include "core/text_file.h"
#include "core/trace_event_handoff.h"
#include "core/trace_event_pieces.h"
#include "core/trace_walk.h"

namespace stowage::core {

std::pair<int, int> LineCounter::at(size_t offset) {
  offset = std::min(offset, text_.size());
  if (offset < pos_) pos_ = 0, line_ = 1, line_start_ = 0;
  for (; pos_ < offset; ++pos_) {
    if (text_[pos_] == '\n') ++line_, line_start_ = pos_ + 1;
  }
  return {line_, static_cast<int>(offset - line_start_) + 1};
}

Result<void> walk_trace(std::string_view text, const std::string& file, TraceEventVisitor& visitor,
                        int max_depth) {
  if (text.size() > kTracePieceBytes) {
    return walk_trace_in_pieces(text, file, visitor, kTracePieceBytes, trace_ahead_threads(), max_depth);
  }
  return walk_whole_trace(text, file, visitor, max_depth);
}

Result<void> walk_whole_trace(std::string_view text, const std::string& file, TraceEventVisitor& visitor,
                              int max_depth, size_t already_delivered) {
  using namespace trace_walk;
  TraceEventHandoff handoff(visitor, text);
  Walk walk{.text = text,
            .file = file,
            .visitor = visitor,
            .handoff = handoff,
            .max_depth = max_depth,
            .suppress = already_delivered};
  od::parser parser(std::max<size_t>(text.size(), 1));
  if (text.size() > simdjson::SIMDJSON_MAXSIZE_BYTES) {
    return fail({{file, 0, 0},
                 "too large: " + std::to_string(text.size()) + " bytes",
                 "a trace under " + std::to_string(simdjson::SIMDJSON_MAXSIZE_BYTES) + " bytes"});
  }
  od::document doc;
  const simdjson::padded_string_view padded(text.data(), text.size(), text.size() + kTracePadding);
  if (const error_code e = parser.iterate(padded).get(doc)) {
    walk.fail_at(text.size(), std::string("not JSON: ") + simdjson::error_message(e),
                 "Chrome Trace Event JSON");
    return std::unexpected(Diagnostics{*walk.failure});
  }
  bool seen_events = false;
  const bool walked = walk.root(doc, seen_events);
  if (const std::exception_ptr thrown = handoff.finish()) std::rethrow_exception(thrown);
  if (!walked) return std::unexpected(Diagnostics{*walk.failure});
  // Past the root object, the iterator points at nothing (an error) unless
  // more text follows.
  if (const char* rest = nullptr; doc.current_location().get(rest) == simdjson::SUCCESS && rest != nullptr) {
    walk.fail_at(static_cast<size_t>(rest - text.data()), "text after the trace object", "one JSON object");
    return std::unexpected(Diagnostics{*walk.failure});
  }
  if (!seen_events) return fail({{file, 0, 0}, "no 'traceEvents' array", "a Chrome trace object"});
  return {};
}

Result<PaddedText> read_trace_text(const std::string& path) {
  Result<Bytes> max = input_limit(InputKind::kTrace);  // STOWAGE_MAX_TRACE_BYTES
  if (!max) return std::unexpected(max.error());
  return map_text_file(path, *max, kTracePadding);
}

PaddedText padded_trace_text(std::string_view text) {
  return PaddedText::copy_of(text, kTracePadding);
}

}  // namespace stowage::core
