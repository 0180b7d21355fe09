// The one reader of trace JSON (docs/formats/trace.md): a single pass of
// simdjson's On-Demand API over a Chrome trace that hands each event's fields
// to a visitor, for the GUI's trace model and for `stowage compare` and
// calibration (core/trace_reader.h) alike. No JSON tree is built, so a trace
// of a million ops costs its text and what the visitor keeps. The visitor
// runs on a second thread, fed in batches (core/trace_event_handoff.h), so
// its work overlaps the parse; it is called from one thread at a time.
// A trace of more than a few MiB is parsed a piece of its traceEvents at a
// time (core/trace_event_pieces.h), so that the parser's buffers stay a few
// MiB whatever the trace's size; the visitor cannot tell the difference.
//
// Bounded input (issue 12): nesting deeper than kMaxJsonDepth anywhere is a
// diagnostic at the line and column of the bracket that opens the level too
// many (simdjson's On-Demand parser leaves the limit to its caller, through
// the depth it reports); the text must fit simdjson's 4 GiB document limit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/diagnostic.h"
#include "core/json_depth.h"
#include "core/padded_file.h"
#include "core/trace_origin.h"

namespace stowage::core {

// otherData, where present. Strings are empty and numbers nullopt when
// absent or of another JSON type.
struct TraceHeader {
  std::string format, title, source;
  std::optional<int64_t> ranks, steps, tokens_per_step;
  // A predicted trace's step time as the simulator gave it, in ns, and the
  // lane that fell behind when that is longer than the last steps measured
  // (sim/step_floor.h); empty when none did.
  std::optional<int64_t> steady_step_ns;
  std::string falls_behind;
  // otherData.warnings' strings, in order (elements of another type are
  // passed over).
  std::vector<std::string> warnings;
  // otherData.machine, .gpu and .device_names (a prediction), .backend and
  // .device (a measurement): where the times come from.
  TraceOrigin origin;
};

// 1-based line and column of a byte offset in a text. Successive calls with
// growing offsets cost the text once in all (events are visited in order).
class LineCounter {
 public:
  explicit LineCounter(std::string_view text) : text_(text) {}
  [[nodiscard]] std::pair<int, int> at(size_t offset);

 private:
  std::string_view text_;
  size_t pos_ = 0, line_start_ = 0;
  int line_ = 1;
};

// One element of traceEvents, as its fields were found. Strings view the
// text or the parser's buffer and last until walk_trace() returns. Numbers are nullopt
// when absent or not a JSON number; an integer field given as a real keeps
// its integer part, as a C++ cast would.
struct TraceEvent {
  size_t index = 0;   // position in traceEvents
  size_t offset = 0;  // byte where the event starts in the text
  LineCounter* lines = nullptr;
  // 1-based line where the event starts; counted only when asked (for problems).
  [[nodiscard]] int line() const { return lines != nullptr ? lines->at(offset).first : 0; }
  bool is_object = true;
  std::string_view ph, name, cat;
  std::optional<double> ts, dur;  // microseconds
  std::optional<int64_t> pid, tid;
  // args
  std::optional<int64_t> id, partition, layer, step, micro_step, bytes, params, sort_index;
  std::optional<double> flops;
  std::string_view kind, tensor_class, arg_name;
  bool has_deps = false;             // args.deps is an array
  std::vector<int64_t> deps;         // its integer elements, in order
  // Other numeric args (a counter's per-class keys, bytes_per_s, ...) in
  // file order; integers as int64, reals converted.
  std::vector<std::pair<std::string_view, int64_t>> other_args;
};

class TraceEventVisitor {
 public:
  virtual ~TraceEventVisitor() = default;
  virtual void header(const TraceHeader& header) = 0;  // once, when otherData is read (if it is)
  virtual void event(const TraceEvent& event) = 0;     // each element of traceEvents, in order
  // Once, when a root "deviceProperties" array is read (a PyTorch profiler
  // trace's: the GPUs it profiled, by the names their driver gives them).
  virtual void devices(const std::vector<std::string>& names) { static_cast<void>(names); }
  // Whether events of phase `ph` ("X", "M", ...) matter. Once an event's
  // "ph" names one that does not, the rest of it is skipped unread (still
  // depth-checked) and event() is not called for it: most of a Stowage
  // trace is flow events that no reader uses (issue 18: opening speed).
  // Called from the threads that walk pieces ahead, several at once: it
  // must not depend on what event() or header() change.
  [[nodiscard]] virtual bool wants_phase(std::string_view ph) const {
    static_cast<void>(ph);
    return true;
  }
};

// Walks `text`, a whole trace file; `file` names it in diagnostics. The text
// must be followed in memory by at least kTracePadding readable bytes
// (read_trace_text() gives such a buffer; simdjson reads ahead in blocks).
// Returns a diagnostic at file:line:column for JSON that is not well formed
// (in the parts read: values the walk skips are checked only for balance),
// too deep, or no object with a traceEvents array. The visitor may have
// seen events before an error.
inline constexpr size_t kTracePadding = 64;
[[nodiscard]] Result<void> walk_trace(std::string_view text, const std::string& file,
                                      TraceEventVisitor& visitor, int max_depth = kMaxJsonDepth);

// A trace file mapped with kTracePadding zero bytes after it, with
// read_text_file()'s checks (a regular file, at most the trace limit,
// STOWAGE_MAX_TRACE_BYTES: text_file.h).
[[nodiscard]] Result<PaddedText> read_trace_text(const std::string& path);
// `text` copied into a padded buffer, for callers holding text in memory.
[[nodiscard]] PaddedText padded_trace_text(std::string_view text);

}  // namespace stowage::core
