// The trace walker's two ways through a text (core/trace_events.h chooses):
// the whole text as one simdjson document, or, for a big trace, its
// traceEvents array a piece at a time.
//
// Why pieces (issue 18: a million-op trace opens in under 2 s): simdjson's
// On-Demand parser indexes a whole document before the walk reads any of it,
// 4 bytes per structural character, so an 819 MB trace costs about a
// gigabyte of fresh pages that the kernel must zero and later unmap; perf
// put a third of an open there. In pieces, the parsers' buffers are a few
// MiB, reused, and warm in the cache.
//
// How: the text before the array is walked as one document (the array
// emptied: `...,"traceEvents":[` + `]}`); the array's elements are walked
// from copies of pieces of about `piece_bytes`, each cut just after a '}'
// that a ',' and a '{' follow and wrapped in '[' ']'; then the text after
// the array, behind a field that stands for what went before
// (`{"":0` + `,"otherData":...}`). A cut inside an element, or a string,
// shows as a piece that does not parse whole up to its own ']': that piece
// is walked again, twice as long, without handing the visitor what the
// failed try handed it. Views into a piece are mapped back to the text and
// unescaped strings kept, so the visitor sees what the whole walk would hand
// it, byte for byte and offset for offset.
//
// Threads walk the pieces ahead, each with its own parser, into events kept
// for the piece; this thread hands a piece's events to the visitor once every
// piece before it ended at its cut (so it began where an element begins).
// The first piece that did not is walked again as above, from its start,
// and so is the rest of the array: the visitor cannot tell the difference.
//
// Anything else (no root traceEvents near the start, or a failure that no
// cut explains) and the whole text is walked instead, skipping the visitor
// calls already made: diagnostics are always the whole walk's, and a visitor
// sees each event once. Internal to the walker; here for the tests.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/diagnostic.h"
#include "core/json_depth.h"
#include "core/trace_events.h"

namespace stowage::core {

// Traces longer than this are walked in pieces of about this size. 1, 4
// and 16 MiB measured alike on the bench's 819 MB trace (docs/gui.md);
// the smallest keeps a piece's structural index (about its own size) in a
// core's L2 cache.
inline constexpr size_t kTracePieceBytes = size_t{1} << 20;

struct TracePieceStats {
  size_t pieces = 0;  // documents parsed for the array, tries again included
  size_t tried_again =
      0;  // pieces walked again (or windows widened) after a cut that was not between elements
  size_t largest_document = 0;  // bytes of the longest document parsed
  size_t walked_ahead = 0;      // pieces whose events a thread ahead walked and this one handed over
  bool walked_whole = false;    // the pieces did not make up the text: the whole text was walked
};

// walk_trace() in pieces of about `piece_bytes`, whatever the text's size,
// `ahead_threads` threads walking the pieces ahead (0: this thread walks
// every piece; the visitor sees the same calls either way).
[[nodiscard]] Result<void> walk_trace_in_pieces(std::string_view text, const std::string& file,
                                                TraceEventVisitor& visitor, size_t piece_bytes,
                                                unsigned ahead_threads, int max_depth = kMaxJsonDepth,
                                                TracePieceStats* stats = nullptr);
// The threads walk_trace() walks ahead with: one per core, at least 2 (on
// two cores the visitor's thread is mostly idle), at most 4.
[[nodiscard]] unsigned trace_ahead_threads();

// walk_trace() over the whole text as one document; the first
// `already_delivered` visitor calls (events and headers, in file order) are
// not made again.
[[nodiscard]] Result<void> walk_whole_trace(std::string_view text, const std::string& file,
                                            TraceEventVisitor& visitor, int max_depth = kMaxJsonDepth,
                                            size_t already_delivered = 0);

}  // namespace stowage::core
