// core's trace walker (simdjson On-Demand): fields in any order, the depth
// limit anywhere in the file at the bracket's line and column, syntax errors
// at their line, and the cases that are no trace.
#include "core/trace_events.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>
#include <vector>

namespace stowage::core {
namespace {

struct Seen final : TraceEventVisitor {
  TraceHeader head;
  int headers = 0;
  std::vector<TraceEvent> events;  // string views copied out below
  std::vector<std::string> names;
  void header(const TraceHeader& h) override { head = h, ++headers; }
  void event(const TraceEvent& e) override {
    events.push_back(e);
    names.emplace_back(e.name);
  }
};

Result<void> walk(std::string_view text, Seen& seen) {
  const PaddedText padded = padded_trace_text(text);
  return walk_trace(padded.text(), "t.json", seen);
}

TEST(TraceEvents, FieldsComeInAnyOrderAndOtherDataMayFollowTheEvents) {
  Seen seen;
  const auto r = walk(R"({"traceEvents":[{"args":{"deps":[2,"x",3.5,4],"id":7,"kind":"forward","q":9},)"
                      R"("dur":1.5,"name":"a\"b","ph":"X","ts":2,"tid":1002,"pid":1}],)"
                      R"("otherData":{"steps":3,"format":"stowage/trace/v1","source":"measured"}})",
                      seen);
  ASSERT_TRUE(r.has_value()) << to_string(r.error());
  ASSERT_EQ(seen.events.size(), 1u);
  const TraceEvent& e = seen.events[0];
  EXPECT_EQ(seen.names[0], "a\"b");
  EXPECT_EQ(e.ts, 2.0);
  EXPECT_EQ(e.dur, 1.5);
  EXPECT_EQ(e.id, 7);
  EXPECT_EQ(e.tid, 1002);
  EXPECT_EQ(e.deps, (std::vector<int64_t>{2, 4}));  // integers only, as both readers took them before
  ASSERT_EQ(e.other_args.size(), 1u);
  EXPECT_EQ(e.other_args[0].second, 9);
  EXPECT_EQ(seen.headers, 1);
  EXPECT_EQ(seen.head.steps, 3);
  EXPECT_EQ(seen.head.source, "measured");
}

// otherData.warnings: its strings in order, escapes read; other elements
// passed over; a value that is no array gives none; nesting in it is held
// to the limit (root 1, otherData 2, warnings 3: 61 arrays more reach 64).
TEST(TraceEvents, OtherDataWarningsAreItsStringsInOrder) {
  Seen seen;
  const auto r = walk(R"({"otherData":{"warnings":["a \"b\"",3,["x"],{"y":1},"c\nd"]},"traceEvents":[]})", seen);
  ASSERT_TRUE(r.has_value()) << to_string(r.error());
  EXPECT_EQ(seen.head.warnings, (std::vector<std::string>{"a \"b\"", "c\nd"}));
  Seen not_array;
  ASSERT_TRUE(walk(R"({"otherData":{"warnings":"one"},"traceEvents":[]})", not_array).has_value());
  EXPECT_TRUE(not_array.head.warnings.empty());
  const auto nested = [](int arrays) {
    return R"({"otherData":{"warnings":[)" + std::string(static_cast<size_t>(arrays), '[') +
           std::string(static_cast<size_t>(arrays), ']') + R"(]},"traceEvents":[]})";
  };
  Seen deep, fine;
  const auto too_deep = walk(nested(62), deep);
  ASSERT_FALSE(too_deep.has_value());
  EXPECT_NE(too_deep.error()[0].what.find("nested deeper than 64"), std::string::npos) << to_string(too_deep.error());
  EXPECT_TRUE(walk(nested(61), fine).has_value());
}

TEST(TraceEvents, NestingPastTheLimitInsideAnIgnoredFieldIsADiagnosticAtItsBracket) {
  // Level 1 the root, 2 traceEvents, 3 the event, 4 args (line 2, column
  // 1), 5 the array of "x" (column 6); 60 more arrays in it, the last
  // opening level 65 at column 6 + 60.
  const std::string text = "{\"traceEvents\":[{\"ph\":\"X\",\"args\":\n{\"x\":[" + std::string(60, '[') +
                           std::string(61, ']') + "}}]}";
  Seen seen;
  const auto r = walk(text, seen);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error()[0].what.find("nested deeper than 64"), std::string::npos) << to_string(r.error());
  EXPECT_EQ(r.error()[0].where.line, 2);
  EXPECT_EQ(r.error()[0].where.column, 6 + 60);
  // One level less is fine.
  const std::string ok = "{\"traceEvents\":[{\"ph\":\"X\",\"args\":\n{\"x\":[" + std::string(59, '[') +
                         std::string(60, ']') + "}}]}";
  Seen fine;
  EXPECT_TRUE(walk(ok, fine).has_value());
}

TEST(TraceEvents, DeepTextThatIsNoObjectNeverRecurses) {
  Seen seen;
  EXPECT_FALSE(walk(std::string(100'000, '['), seen).has_value());
  EXPECT_FALSE(walk("{\"traceEvents\":" + std::string(100'000, '['), seen).has_value());
}

TEST(TraceEvents, SyntaxErrorIsReportedAtItsLine) {
  Seen seen;
  const auto r = walk("{\"traceEvents\":[\n{\"ph\":\"X\",\"ts\":1},\n{\"ph\":\"X\",,\"ts\":1}\n]}", seen);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error()[0].where.line, 3) << to_string(r.error());
  EXPECT_EQ(seen.events.size(), 1u);  // the first event was visited before the error
}

TEST(TraceEvents, NoTraceObjectAndTrailingTextAreDiagnostics) {
  Seen a, b, c;
  EXPECT_FALSE(walk("[1, 2]", a).has_value());
  EXPECT_FALSE(walk(R"({"otherData":{}})", b).has_value());
  const auto r = walk("{\"traceEvents\":[]}\n{}", c);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error()[0].where.line, 2) << to_string(r.error());
}

// Phases a reader does not want are left unread: their events never reach
// it, yet a bracket too deep inside one is still a diagnostic.
struct OnlyOps final : TraceEventVisitor {
  std::vector<std::string> phases;
  void header(const TraceHeader&) override {}
  void event(const TraceEvent& e) override { phases.emplace_back(e.ph); }
  [[nodiscard]] bool wants_phase(std::string_view ph) const override { return ph == "X"; }
};

TEST(TraceEvents, EventsOfUnwantedPhasesAreSkippedButStillDepthChecked) {
  OnlyOps seen;
  const PaddedText text = padded_trace_text(
      R"({"traceEvents":[{"ph":"s","id":1,"ts":"x"},{"ph":"X","ts":1},{"ph":"f","args":{"a":[1]}},"x"]})");
  ASSERT_TRUE(walk_trace(text.text(), "t.json", seen).has_value());
  EXPECT_EQ(seen.phases, (std::vector<std::string>{"X", ""}));  // a non-object still arrives, to be diagnosed

  const std::string deep = "{\"traceEvents\":[{\"ph\":\"s\",\"args\":\n{\"x\":[" + std::string(60, '[') +
                           std::string(61, ']') + "}}]}";
  OnlyOps skipped;
  const PaddedText deep_text = padded_trace_text(deep);
  const auto r = walk_trace(deep_text.text(), "t.json", skipped);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error()[0].where.line, 2);
  EXPECT_EQ(r.error()[0].where.column, 6 + 60);
}

// The visitor runs on a thread of its own, batch by batch: every event
// arrives once and in order across batches, the header keeps its place
// among the events, and problems may still ask for an event's line.
struct Ordered final : TraceEventVisitor {
  std::vector<size_t> order;  // event indices; kHeader marks the header
  std::vector<int> lines;
  std::thread::id thread;
  static constexpr size_t kHeader = static_cast<size_t>(-1);
  void header(const TraceHeader&) override { order.push_back(kHeader); }
  void event(const TraceEvent& e) override {
    order.push_back(e.index);
    lines.push_back(e.line());
    thread = std::this_thread::get_id();
  }
};

TEST(TraceEvents, EveryEventReachesTheVisitorOnceInOrderWithTheHeaderInPlace) {
  constexpr size_t kEvents = 10'000;  // several batches
  std::string text = "{\"traceEvents\":[\n";
  for (size_t i = 0; i < kEvents; ++i) text += std::string(i > 0 ? ",\n" : "") + R"({"ph":"X","ts":1})";
  text += "],\n\"otherData\":{}}";
  Ordered seen;
  const PaddedText padded = padded_trace_text(text);
  ASSERT_TRUE(walk_trace(padded.text(), "t.json", seen).has_value());
  ASSERT_EQ(seen.order.size(), kEvents + 1);
  for (size_t i = 0; i < kEvents; ++i) {
    ASSERT_EQ(seen.order[i], i);
    ASSERT_EQ(seen.lines[i], static_cast<int>(i) + 2);
  }
  EXPECT_EQ(seen.order.back(), Ordered::kHeader);
  EXPECT_NE(seen.thread, std::this_thread::get_id());

  Ordered first;  // otherData before the events: the header comes first
  const PaddedText before = padded_trace_text(R"({"otherData":{},"traceEvents":[{"ph":"X"},{"ph":"X"}]})");
  ASSERT_TRUE(walk_trace(before.text(), "t.json", first).has_value());
  EXPECT_EQ(first.order, (std::vector<size_t>{Ordered::kHeader, 0, 1}));
}

TEST(TraceEvents, WhatTheVisitorThrowsReachesTheCallerAndStopsTheWalk) {
  struct Throws final : TraceEventVisitor {
    size_t seen = 0;
    void header(const TraceHeader&) override {}
    void event(const TraceEvent&) override {
      if (++seen == 3000) throw std::length_error("visitor full");
    }
  } visitor;
  std::string text = "{\"traceEvents\":[";
  for (size_t i = 0; i < 100'000; ++i) text += std::string(i > 0 ? "," : "") + R"({"ph":"X"})";
  text += "]}";
  const PaddedText padded = padded_trace_text(text);
  EXPECT_THROW(static_cast<void>(walk_trace(padded.text(), "t.json", visitor)), std::length_error);
  EXPECT_LT(visitor.seen, 100'000u);  // the walk stopped early; nothing after the throw was visited
  EXPECT_EQ(visitor.seen, 3000u);
}

}  // namespace
}  // namespace stowage::core
