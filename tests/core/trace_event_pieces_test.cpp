// The walk in pieces (core/trace_event_pieces.h) against the walk of the
// whole text, on real traces (Stowage's golden ones and a Kineto trace) and
// on texts made to trip it: cuts that land inside an element or a string,
// escapes, elements that are not objects, keys in any order, every
// truncation and corruption of a trace. Valid texts: the visitor sees the
// same calls, byte for byte and offset for offset. Invalid ones: the same
// diagnostic, and the whole walk's calls as a prefix of the pieces' (the
// whole walk may stop before its first event where pieces already handed
// some over). And the memory it was for: no document larger than a piece.
#include "core/trace_event_pieces.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/trace_events.h"

namespace stowage::core {
namespace {

// Every visitor call as a line of text, and every string view it was handed,
// checked again in later calls (views last until walk_trace() returns, so
// past the parse of later pieces): at every call while there are few, then
// at every 256th, so that a view into a reused buffer cannot go unseen.
struct Recorder final : TraceEventVisitor {
  std::vector<std::string> calls;
  std::vector<std::pair<std::string_view, std::string>> views;
  std::optional<std::string> stale_view;  // the first view that changed

  void check_views() {
    if (stale_view || (calls.size() >= 256 && calls.size() % 256 != 0)) return;
    for (const auto& [view, copy] : views)
      if (view != copy) stale_view = "'" + copy + "' became '" + std::string(view) + "'";
  }

  void header(const TraceHeader& h) override {
    check_views();
    calls.push_back("header " + h.format + "|" + h.title + "|" + h.source + "|" + number(h.ranks) + "|" +
                    number(h.steps) + "|" + number(h.tokens_per_step));
  }

  void devices(const std::vector<std::string>& names) override {
    check_views();
    std::string line = "devices";
    for (const std::string& n : names) line += "|" + n;
    calls.push_back(std::move(line));
  }

  void event(const TraceEvent& e) override {
    check_views();
    std::string line = "event " + std::to_string(e.index) + " @" + std::to_string(e.offset) + " line " +
                       std::to_string(e.line()) + (e.is_object ? " {" : " not-object");
    for (const std::string_view s : {e.ph, e.name, e.cat, e.kind, e.tensor_class, e.arg_name}) {
      line += "|" + std::string(s);
      views.emplace_back(s, std::string(s));
    }
    for (const auto& r : {e.ts, e.dur, e.flops}) line += "|" + number(r);
    for (const auto& i :
         {e.pid, e.tid, e.id, e.partition, e.layer, e.step, e.micro_step, e.bytes, e.params, e.sort_index})
      line += "|" + number(i);
    line += e.has_deps ? "|deps" : "|-";
    for (const int64_t d : e.deps) line += " " + std::to_string(d);
    for (const auto& [key, value] : e.other_args) {
      line += "|" + std::string(key) + "=" + std::to_string(value);
      views.emplace_back(key, std::string(key));
    }
    calls.push_back(std::move(line));
  }

  template <class T>
  static std::string number(const std::optional<T>& n) {
    return n ? std::to_string(*n) : "-";
  }
};

struct Walked {
  std::vector<std::string> calls;
  std::string result;
  TracePieceStats stats;
};

std::string result_of(const Result<void>& r) {
  return r ? "ok" : to_string(r.error());
}

void expect_views_last(const Recorder& recorder, std::string_view what) {
  EXPECT_FALSE(recorder.stale_view) << what << ": " << recorder.stale_view.value_or("");
}

Walked whole(std::string_view text) {
  const PaddedText padded = padded_trace_text(text);
  Recorder recorder;
  Walked w;
  w.result = result_of(walk_whole_trace(padded.text(), "t.json", recorder));
  expect_views_last(recorder, "whole");
  w.calls = std::move(recorder.calls);
  return w;
}

Walked in_pieces(std::string_view text, size_t piece_bytes, unsigned ahead = 0) {
  const PaddedText padded = padded_trace_text(text);
  Recorder recorder;
  Walked w;
  w.result = result_of(
      walk_trace_in_pieces(padded.text(), "t.json", recorder, piece_bytes, ahead, kMaxJsonDepth, &w.stats));
  expect_views_last(recorder,
                    "in pieces of " + std::to_string(piece_bytes) + ", " + std::to_string(ahead) + " ahead");
  w.calls = std::move(recorder.calls);
  return w;
}

constexpr size_t kPieceSizes[] = {1, 2, 5, 17, 64, 300, 4096};
// Threads walking ahead: none (this thread walks every piece), one, more
// than pieces wait for in some of the texts.
constexpr unsigned kAheadThreads[] = {0, 1, 3};

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::filesystem::path> real_traces() {
  std::vector<std::filesystem::path> paths;
  for (const char* folder : {"golden", "kineto"}) {
    for (const auto& entry :
         std::filesystem::directory_iterator(std::filesystem::path(STOWAGE_TEST_DATA_DIR) / folder))
      if (entry.path().extension() == ".json") paths.push_back(entry.path());
  }
  return paths;
}

void expect_same_walk(std::string_view text, std::string_view what, size_t piece_bytes, unsigned ahead) {
  const Walked a = whole(text);
  const Walked b = in_pieces(text, piece_bytes, ahead);
  EXPECT_EQ(b.result, a.result) << what << " in pieces of " << piece_bytes << ", " << ahead << " ahead";
  ASSERT_EQ(b.calls.size(), a.calls.size())
      << what << " in pieces of " << piece_bytes << ", " << ahead << " ahead";
  for (size_t i = 0; i < a.calls.size(); ++i) {
    ASSERT_EQ(b.calls[i], a.calls[i]) << what << " call " << i << ", " << ahead << " ahead";
  }
}

TEST(TraceEventPieces, RealTracesWalkAsTheWholeTextDoes) {
  const std::vector<std::filesystem::path> paths = real_traces();
  ASSERT_GE(paths.size(), 4u);  // three golden Stowage traces and a Kineto one
  for (const auto& path : paths) {
    const std::string text = read_file(path);
    ASSERT_EQ(whole(text).result, "ok") << path;
    for (const size_t piece : kPieceSizes) {
      for (const unsigned ahead : kAheadThreads) {
        expect_same_walk(text, path.filename().string(), piece, ahead);
        EXPECT_FALSE(in_pieces(text, piece, ahead).stats.walked_whole) << path << " in pieces of " << piece;
      }
    }
  }
}

// Texts where a cut that looks right ("}" "," "{") is inside an element or
// a string, with escapes, elements that are no objects, otherData after the
// events, a second traceEvents, and "traceEvents" where it is no root key.
const char* const kTrickyTraces[] = {
    R"({"traceEvents":[{"ph":"X","name":"},{","ts":1},{"ph":"X","name":"a","args":{"x":[{"a":1},{"b":2}],"id":3}},)"
    R"([{"a":1},{"b":2}],7,"s",{"ph":"X","n\u0061me":"esc\"aped","ts":2.5,"args":{"k\u0065y":4,"deps":[1,2]}}],)"
    R"("otherData":{"format":"stowage/trace/v1","steps":2}})",
    "{\n  \"otherData\": {\"title\": \"pretty\"},\n  \"traceEvents\": [\n  {\n    \"ph\": \"X\",\n    "
    "\"args\": {\n"
    "      \"id\": 1\n    }\n  },\n  {\n    \"ph\": \"M\", \"name\": \"thread_name\"\n  }\n  ]\n}\n",
    R"({"traceEvents":[]})",
    R"({"traceEvents":[{"ph":"X"}],"traceEvents":[{"ph":"Y"},{"ph":"Z"}]})",
    R"({"note":"\"traceEvents\":[","traceEvents":[{"ph":"X","ts":1},{"ph":"X","ts":2}]})",
    R"({"a":{"traceEvents":[{"ph":"no"}]},"traceEvents":[{"ph":"X","ts":1},{"ph":"X","ts":2}]})",
    R"({"traceEvents":{"not":"an array"},"x":{"traceEvents":[1]},"traceEvents":[{"ph":"X"},{"ph":"X"}]})",
    R"({"x\"traceEvents":[{"ph":"X"},{"ph":"X"}],"traceEvents":[{"ph":"B"}]})",
    R"({"traceEvents":[{"ph":"X","args":{"name":"\u00e9t\u00e9"}} , {"ph":"X"}  ,  {"ph":"X","ts":3}]   }  )",
    // A PyTorch profiler's GPUs before the events and a second list after them.
    R"({"deviceProperties":[{"name":"NVIDIA H200"},1,{"id":2}],"traceEvents":[{"ph":"X","ts":1},{"ph":"X"}],)"
    R"("deviceProperties":[{"name":"G\u0050U \"2\""}]})",
};

TEST(TraceEventPieces, CutsInsideElementsAndStringsAreTriedAgainAndChangeNothing) {
  for (const char* text : kTrickyTraces) {
    ASSERT_EQ(whole(text).result, "ok") << text;
    for (const size_t piece : kPieceSizes) {
      for (const unsigned ahead : kAheadThreads) expect_same_walk(text, text, piece, ahead);
    }
  }
  // The first one's decoys ("},{" in a string, an args array of objects, an
  // element that is an array of objects) do make the walk try again, and
  // end the walk ahead.
  EXPECT_GT(in_pieces(kTrickyTraces[0], 17).stats.tried_again, 0u);
  const TracePieceStats ahead = in_pieces(kTrickyTraces[0], 17, 2).stats;
  EXPECT_GT(ahead.tried_again, 0u);
  EXPECT_LT(ahead.walked_ahead, ahead.pieces);
}

// Invalid texts: the whole walk's diagnostic, and no visitor call twice.
void expect_same_failure(std::string_view text, std::string_view what, size_t piece_bytes,
                         unsigned ahead = 0) {
  const Walked a = whole(text);
  const Walked b = in_pieces(text, piece_bytes, ahead);
  ASSERT_EQ(b.result, a.result) << what;
  ASSERT_GE(b.calls.size(), a.calls.size()) << what;
  for (size_t i = 0; i < a.calls.size(); ++i) {
    ASSERT_EQ(b.calls[i], a.calls[i]) << what << " call " << i;
  }
  if (b.calls.size() > a.calls.size()) {
    EXPECT_NE(a.result, "ok") << what;
  }
}

TEST(TraceEventPieces, EveryTruncationAndCorruptionGivesTheWholeWalksDiagnostic) {
  const std::string text =
      read_file(std::filesystem::path(STOWAGE_TEST_DATA_DIR) / "golden" / "small_trace.json");
  ASSERT_GT(text.size(), 1000u);
  for (size_t end = 0; end < text.size(); ++end) {
    expect_same_failure(text.substr(0, end), "cut at " + std::to_string(end), 64);
    if (end % 3 == 0)
      expect_same_failure(text.substr(0, end), "cut at " + std::to_string(end) + ", 2 ahead", 64, 2);
  }
  for (size_t at = 0; at < text.size(); at += 3) {
    for (const char c : {']', '}', '"', ',', '\xff'}) {
      std::string bad = text;
      bad[at] = c;
      expect_same_failure(bad, "byte " + std::to_string(at) + " made " + std::to_string(c), 100);
      if (at % 2 == 0) {
        expect_same_failure(bad, "byte " + std::to_string(at) + " made " + std::to_string(c) + ", 2 ahead",
                            100, 2);
      }
    }
  }
  for (const char* tricky : kTrickyTraces) {
    const std::string t = tricky;
    for (size_t end = 0; end < t.size(); ++end) {
      expect_same_failure(t.substr(0, end), t.substr(0, end), 5);
      expect_same_failure(t.substr(0, end), t.substr(0, end), 5, 3);
    }
  }
  const std::string deep = "{\"traceEvents\":[{\"ph\":\"X\"},{\"args\":{\"x\":" + std::string(70, '[') +
                           std::string(70, ']') + "}}]}";
  expect_same_failure(deep, "too deep", 8);
  expect_same_failure(deep, "too deep, 2 ahead", 8, 2);
  EXPECT_NE(whole(deep).result, "ok");
}

// What the pieces are for: on a Stowage trace no document is larger than a
// piece (and its two brackets), the walk never widens a window, and it
// never falls back to the whole text.
TEST(TraceEventPieces, NoDocumentIsLargerThanAPiece) {
  const std::string text =
      read_file(std::filesystem::path(STOWAGE_TEST_DATA_DIR) / "golden" / "tiny_llama_zero_infinity.json");
  constexpr size_t kPiece = 2048;
  ASSERT_GT(text.size(), 20 * kPiece);
  for (const unsigned ahead : kAheadThreads) {
    const Walked w = in_pieces(text, kPiece, ahead);
    EXPECT_EQ(w.result, "ok");
    EXPECT_FALSE(w.stats.walked_whole);
    EXPECT_EQ(w.stats.tried_again, 0u);
    EXPECT_LE(w.stats.largest_document, kPiece + 2);
    EXPECT_GE(w.stats.pieces, text.size() / kPiece);
    // With threads ahead, they walked every piece: this thread only handed
    // their events over.
    EXPECT_EQ(w.stats.walked_ahead, ahead > 0 ? w.stats.pieces : 0) << ahead << " ahead";
  }
}

// A text past kTracePieceBytes takes the pieces by default, with the same
// result as the whole walk.
TEST(TraceEventPieces, WalkTraceTakesPiecesForABigTrace) {
  std::string text = R"({"otherData":{"format":"stowage/trace/v1"},"traceEvents":[)";
  for (int i = 0; text.size() <= kTracePieceBytes + 1000; ++i) {
    text += (i == 0 ? "\n" : ",\n") + std::string(R"({"ph":"X","name":"op )") + std::to_string(i) +
            R"(","ts":)" + std::to_string(i) + R"(,"dur":1,"pid":1,"tid":2,"args":{"id":)" +
            std::to_string(i) + "}}";
  }
  text += "\n]}\n";
  const PaddedText padded = padded_trace_text(text);
  Recorder by_default;
  ASSERT_EQ(result_of(walk_trace(padded.text(), "t.json", by_default)), "ok");
  const Walked w = whole(text);
  EXPECT_EQ(by_default.calls, w.calls);
  const Walked p = in_pieces(text, kTracePieceBytes, trace_ahead_threads());
  EXPECT_EQ(p.calls, w.calls);
  EXPECT_FALSE(p.stats.walked_whole);
  EXPECT_GE(p.stats.pieces, 2u);
  EXPECT_LE(p.stats.largest_document, kTracePieceBytes + 2);
}

// What the visitor throws reaches the caller, once, and the text is not
// walked again.
TEST(TraceEventPieces, AVisitorsThrowStopsTheWalk) {
  struct Thrower final : TraceEventVisitor {
    int events = 0;
    void header(const TraceHeader&) override {}
    void event(const TraceEvent&) override {
      if (++events == 10) throw std::runtime_error("enough");
    }
  };
  const std::string text =
      read_file(std::filesystem::path(STOWAGE_TEST_DATA_DIR) / "golden" / "tiny_llama_zero_infinity.json");
  const PaddedText padded = padded_trace_text(text);
  for (const unsigned ahead : kAheadThreads) {
    Thrower thrower;
    EXPECT_THROW(static_cast<void>(walk_trace_in_pieces(padded.text(), "t.json", thrower, 512, ahead)),
                 std::runtime_error);
    EXPECT_EQ(thrower.events, 10) << ahead << " ahead";
  }
}

}  // namespace
}  // namespace stowage::core
