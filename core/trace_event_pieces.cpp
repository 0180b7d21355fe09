// Why a successful piece is exactly a run of the array's elements: each
// piece starts where an element starts (the array's first, or the '{' after
// the last good cut), so simdjson reads its bytes as the whole walk would;
// the walk reaches the piece's own ']' only if every element it began was
// closed before the cut, and an object can only be closed by a '}' of the
// text. Whatever fails is walked again or left to the whole walk.
#include "core/trace_event_pieces.h"

#include <simdjson.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "core/trace_event_handoff.h"
#include "core/trace_walk.h"

namespace stowage::core {
namespace {

using namespace trace_walk;
constexpr size_t kNowhere = std::string_view::npos;

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// Where the '[' of a "traceEvents": [ within the first `within` bytes is:
// a guess, which the walk of the text before it confirms or refutes.
size_t events_array_at(std::string_view text, size_t within) {
  constexpr std::string_view kKey = "\"traceEvents\"";
  const std::string_view head = text.substr(0, within);
  for (size_t at = head.find(kKey); at != kNowhere; at = head.find(kKey, at + 1)) {
    size_t p = at + kKey.size();
    while (p < text.size() && is_space(text[p])) ++p;
    if (p == text.size() || text[p] != ':') continue;
    for (++p; p < text.size() && is_space(text[p]);) ++p;
    if (p < text.size() && text[p] == '[') return p;
  }
  return kNowhere;
}

// A place to cut the array in [from, before): just after a '}' that a ','
// and then a '{' follow (whitespace between), the last such; `next` is the
// '{'. In a Stowage trace every such place is between two events.
struct Cut {
  size_t end = 0, next = 0;
};

std::optional<Cut> last_cut(std::string_view text, size_t from, size_t before) {
  for (size_t q = before; q-- > from + 1;) {
    if (text[q] != '{') continue;
    size_t p = q;
    while (p > from && is_space(text[p - 1])) --p;
    if (p == from || text[p - 1] != ',') continue;
    for (--p; p > from && is_space(text[p - 1]);) --p;
    if (p == from || text[p - 1] != '}') continue;
    return Cut{.end = p, .next = q};
  }
  return std::nullopt;
}

// A reused buffer holding a document made of a few bytes, some of the
// text's and a few more, with the padding simdjson reads past its end.
class Copy {
 public:
  std::string_view fill(std::string_view before, std::string_view bytes, std::string_view after) {
    const size_t length = before.size() + bytes.size() + after.size();
    if (buffer_.size() < length + kTracePadding) buffer_.resize(length + kTracePadding);
    char* out = buffer_.data();
    std::memcpy(out, before.data(), before.size());
    std::memcpy(out + before.size(), bytes.data(), bytes.size());
    std::memcpy(out + before.size() + bytes.size(), after.data(), after.size());
    std::memset(out + length, 0, kTracePadding);
    return {out, length};
  }
  [[nodiscard]] simdjson::padded_string_view padded(std::string_view document) const {
    return simdjson::padded_string_view(document.data(), document.size(), buffer_.size());
  }

 private:
  std::vector<char> buffer_;
};

enum class Outcome { kCut, kEnded, kFailed };

// One piece at a time, by `walk` (the piece is its document meanwhile):
// copied, wrapped in '[' ']', parsed by a reused parser.
class PieceWalker {
 public:
  explicit PieceWalker(Walk& walk) : walk_(walk) {}

  // The elements in text[start, end), the first numbered `index`; `index`
  // ends past the last one walked and, for kEnded, `rest` at the first
  // token after the array's ']'.
  Outcome walk(size_t start, size_t end, size_t& index, size_t& rest, TracePieceStats& stats) {
    walk_.failure.reset();
    const Document outer = walk_.doc;
    const std::string_view document = copy_.fill("[", walk_.text.substr(start, end - start), "]");
    walk_.doc =
        Document{.begin = document.data(), .shift = static_cast<ptrdiff_t>(start) - 1, .copied = true};
    ++stats.pieces;
    stats.largest_document = std::max(stats.largest_document, document.size());
    const Outcome outcome = walk_elements(document, index, rest);
    walk_.doc = outer;
    return outcome;
  }

 private:
  Outcome walk_elements(std::string_view document, size_t& index, size_t& rest) {
    od::document doc;
    if (parser_.iterate(copy_.padded(document)).get(doc) != simdjson::SUCCESS) return Outcome::kFailed;
    od::array array;
    if (doc.get_array().get(array) != simdjson::SUCCESS) return Outcome::kFailed;
    for (auto element : array) {
      od::value item;
      if (element.get(item) != simdjson::SUCCESS) return Outcome::kFailed;
      if (!walk_.one_event(item, index++)) return Outcome::kFailed;
    }
    // The piece's own ']' closed the array: the cut was between elements.
    // A ']' of the text closed it: the array ends in this piece.
    const char* after = nullptr;
    if (doc.current_location().get(after) != simdjson::SUCCESS || after == nullptr) return Outcome::kCut;
    rest = walk_.offset_of(after);
    return Outcome::kEnded;
  }

  Walk& walk_;
  od::parser parser_;
  Copy copy_;
};

class Pieces {
 public:
  Pieces(Walk& walk, size_t piece_bytes, unsigned ahead_threads, TracePieceStats& stats)
      : walk_(walk),
        text_(walk.text),
        piece_bytes_(std::max<size_t>(piece_bytes, 1)),
        ahead_threads_(ahead_threads),
        stats_(stats),
        pieces_(walk) {
    walk_.events_in_pieces = [this] { return events(); };
  }

  // The text before the array, the array in pieces, the text after it;
  // false when they do not make up the text (the whole walk decides).
  bool walk_root() {
    Copy head_copy;
    od::parser head_parser;
    const std::string_view head = head_copy.fill("", text_.substr(0, walk_.events_at + 1), "]}");
    bool seen_events = false;
    if (!walk_document(head_parser, head_copy, head, 0, seen_events)) return false;
    if (rest_ == kNowhere) return false;  // the '[' found was not the root's traceEvents
    walk_.events_in_pieces = nullptr;
    constexpr std::string_view kBefore = "{\"\":0";  // stands for the fields walked already
    Copy tail_copy;
    od::parser tail_parser;
    const std::string_view tail = tail_copy.fill(kBefore, text_.substr(rest_), "");
    const ptrdiff_t shift = static_cast<ptrdiff_t>(rest_) - static_cast<ptrdiff_t>(kBefore.size());
    return walk_document(tail_parser, tail_copy, tail, shift, seen_events) && seen_events;
  }

 private:
  // A root object: `document` of `copy`, whose byte k is the text's k + shift.
  bool walk_document(od::parser& parser, const Copy& copy, std::string_view document, ptrdiff_t shift,
                     bool& seen_events) {
    stats_.largest_document = std::max(stats_.largest_document, document.size());
    walk_.doc = Document{.begin = document.data(), .shift = shift, .copied = true};
    od::document doc;
    if (parser.iterate(copy.padded(document)).get(doc) != simdjson::SUCCESS) return false;
    if (!walk_.root(doc, seen_events)) return false;
    const char* after = nullptr;
    return !(doc.current_location().get(after) == simdjson::SUCCESS && after != nullptr);
  }

  // The piece that starts at `start`: where it is cut, widened until some
  // element ends in it; false past the end of the text.
  struct Bounds {
    size_t end = 0, next = 0;
    bool last = false;
  };
  Bounds bounds(size_t start, size_t& window, size_t& widened) const {
    for (;;) {
      if (text_.size() - start <= window) return {.end = text_.size(), .next = text_.size(), .last = true};
      if (const std::optional<Cut> cut = last_cut(text_, start, start + window)) {
        return {.end = cut->end, .next = cut->next, .last = false};
      }
      window *= 2, ++widened;  // no element ends in the window: a wider one
    }
  }

  // traceEvents, from the element after its '[' to its ']'; sets rest_.
  bool events() {
    if (2 > walk_.max_depth) return false;
    size_t start = walk_.events_at + 1, index = 0;
    if (ahead_threads_ > 0) {
      switch (walk_ahead(start, index)) {
        case Stop::kEnded:
          return true;
        case Stop::kVisitorThrew:
          return false;
        case Stop::kOneByOne:
          break;
      }
    }
    return events_one_by_one(start, index);
  }

  bool events_one_by_one(size_t start, size_t index) {
    size_t window = piece_bytes_;
    // The visitor calls made before the element at `start`, kept across
    // tries of it: a try that fails hands over again what it handed already.
    size_t delivered_before = walk_.delivered;
    for (;;) {
      const Bounds piece = bounds(start, window, stats_.tried_again);
      const size_t index_before = index;
      const Outcome outcome = pieces_.walk(start, piece.end, index, rest_, stats_);
      if (outcome == Outcome::kFailed) {
        if (piece.last || walk_.handoff.failed()) return false;
        // Again from the same element, twice as far: what this try handed
        // the visitor, the next hands it again, so it is not passed on.
        walk_.suppress = walk_.delivered - delivered_before;
        index = index_before;
        window *= 2, ++stats_.tried_again;
        continue;
      }
      if (walk_.suppress != 0) return false;  // cannot be: a wider try reads past the narrower's elements
      if (outcome == Outcome::kEnded) return true;
      if (piece.last) return false;  // the text ended inside the array
      start = piece.next, window = piece_bytes_, delivered_before = walk_.delivered;
    }
  }

  // Walking ahead: `ahead_threads_` workers walk the pieces that follow,
  // each into a slot of its own, while this thread hands the visitor the
  // events of each piece in turn once every piece before it ended at its cut
  // (so the piece began where an element begins: see the top of the file).
  // The first piece that did not is walked again one by one, from its
  // start, and so is everything after it.
  enum class Stop { kEnded, kOneByOne, kVisitorThrew };

  struct Slot {
    size_t start = 0;
    Bounds piece;
    size_t elements = 0, rest = kNowhere;
    Outcome outcome = Outcome::kFailed;
    TraceEventRun run;
    std::exception_ptr thrown;
    bool ready = false;
  };

  struct Worker {
    explicit Worker(Walk&& w) : walk(std::move(w)), pieces(walk) {}
    Walk walk;
    PieceWalker pieces;  // walks with `walk`: built in place, never moved
    TracePieceStats stats;
  };

  Stop walk_ahead(size_t& start, size_t& index) {
    const size_t slot_count = 2 * size_t{ahead_threads_} + 2;  // at most this many pieces' events wait
    std::vector<Slot> slots(slot_count);
    std::mutex mutex;
    std::condition_variable changed;
    size_t claimed = 0, committed = 0, next_start = start;
    bool no_more = false, stop = false;

    auto work = [&](Worker& worker) {
      for (;;) {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return stop || no_more || claimed - committed < slot_count; });
        if (stop || no_more) return;
        Slot& slot = slots[claimed++ % slot_count];
        size_t window = piece_bytes_;
        slot.start = next_start;
        slot.piece = bounds(next_start, window, worker.stats.tried_again);
        next_start = slot.piece.next;
        no_more = slot.piece.last;
        lock.unlock();

        slot.run.size = 0;
        worker.walk.ahead = &slot.run;
        size_t elements = 0;
        try {
          slot.outcome = worker.pieces.walk(slot.start, slot.piece.end, elements, slot.rest, worker.stats);
        } catch (...) {
          slot.thrown = std::current_exception(), slot.outcome = Outcome::kFailed;
        }
        slot.elements = elements;
        lock.lock();
        slot.ready = true;
        changed.notify_all();
      }
    };

    std::vector<std::jthread> threads;
    for (unsigned i = 0; i < ahead_threads_; ++i) {
      if (workers_.size() <= i) workers_.push_back(worker_walk());
      threads.emplace_back(work, std::ref(*workers_[i]));
    }
    // Every way out stops and joins the workers, a throw on this thread too.
    const auto stop_workers = [&] {
      if (threads.empty()) return;
      {
        const std::scoped_lock lock(mutex);
        stop = true;
      }
      changed.notify_all();
      threads.clear();  // joins
      for (const auto& worker : workers_) merge(worker->stats);
    };
    struct Guard {
      const decltype(stop_workers)& finish;
      ~Guard() { finish(); }
    } guard{stop_workers};

    for (;;) {
      Slot& slot = slots[committed % slot_count];
      {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return slot.ready; });
      }
      if (slot.thrown) {
        stop_workers();
        std::rethrow_exception(slot.thrown);
      }
      const bool good =
          slot.outcome == Outcome::kEnded || (slot.outcome == Outcome::kCut && !slot.piece.last);
      if (!good) {  // one by one from here: tried again, widened, or left to the whole walk
        stop_workers();
        start = slot.start;
        return Stop::kOneByOne;
      }
      walk_.delivered += slot.run.size;
      if (!walk_.handoff.add_run(slot.run, index)) {
        stop_workers();
        return Stop::kVisitorThrew;
      }
      index += slot.elements, ++stats_.walked_ahead;
      if (slot.outcome == Outcome::kEnded) {
        rest_ = slot.rest;
        stop_workers();
        return Stop::kEnded;
      }
      {
        const std::scoped_lock lock(mutex);
        slot.ready = false;
        ++committed;
      }
      changed.notify_all();
    }
  }

  std::unique_ptr<Worker> worker_walk() const {
    return std::make_unique<Worker>(Walk{.text = walk_.text,
                                         .file = walk_.file,
                                         .visitor = walk_.visitor,
                                         .handoff = walk_.handoff,
                                         .max_depth = walk_.max_depth,
                                         .locate_failures = false});
  }

  void merge(TracePieceStats& worker) {
    stats_.pieces += worker.pieces, stats_.tried_again += worker.tried_again;
    stats_.largest_document = std::max(stats_.largest_document, worker.largest_document);
    worker = {};
  }

  Walk& walk_;
  std::string_view text_;
  size_t piece_bytes_;
  unsigned ahead_threads_;
  TracePieceStats& stats_;
  PieceWalker pieces_;  // this thread's
  // The workers' walks, kept to the end: events view their unescaped strings.
  std::vector<std::unique_ptr<Worker>> workers_;
  size_t rest_ = kNowhere;  // where the text goes on after the array's ']'
};

}  // namespace

unsigned trace_ahead_threads() {
  return std::clamp(std::thread::hardware_concurrency(), 2u, 4u);
}

Result<void> walk_trace_in_pieces(std::string_view text, const std::string& file, TraceEventVisitor& visitor,
                                  size_t piece_bytes, unsigned ahead_threads, int max_depth,
                                  TracePieceStats* stats) {
  TracePieceStats ignored;
  TracePieceStats& counted = stats != nullptr ? *stats : ignored;
  counted = {};
  const size_t events_at = events_array_at(text, std::max<size_t>(piece_bytes, 4096));
  size_t delivered = 0;
  if (events_at != kNowhere && text.size() <= simdjson::SIMDJSON_MAXSIZE_BYTES) {
    TraceEventHandoff handoff(visitor, text);
    Walk walk{.text = text,
              .file = file,
              .visitor = visitor,
              .handoff = handoff,
              .max_depth = max_depth,
              .locate_failures = false,
              .events_at = events_at};
    Pieces pieces(walk, piece_bytes, ahead_threads, counted);
    const bool walked = pieces.walk_root();
    if (const std::exception_ptr thrown = handoff.finish()) std::rethrow_exception(thrown);
    if (walked) return {};
    delivered = walk.delivered;
  }
  counted.walked_whole = true;
  return walk_whole_trace(text, file, visitor, max_depth, delivered);
}

}  // namespace stowage::core
