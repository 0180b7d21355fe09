// Loading traces: the golden small trace (tests/data/golden/small_trace.json,
// written by core's trace writer) gives the tracks, ops, dependencies and
// memory it holds; bad files give diagnostics naming file, line and column.
#include "gui/trace_loader.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "gui_test_data.h"

namespace stowage::gui {
namespace {

const std::string kSmallTrace = std::string(STOWAGE_TEST_DATA_DIR) + "/golden/small_trace.json";

TEST(TraceLoader, SmallTraceGivesItsTracksOpsAndMemory) {
  const core::Result<TraceModel> m = load_trace(kSmallTrace);
  ASSERT_TRUE(m.has_value()) << core::to_string(m.error());
  // Four threads with ops, in sort_index order; six complete events.
  ASSERT_EQ(m->tracks.size(), 4u);
  EXPECT_EQ(m->tracks[0].name, "gpu.compute");
  EXPECT_EQ(m->tracks[1].name, "pcie.h2d");
  EXPECT_EQ(m->tracks[2].name, "nvme.read");
  EXPECT_EQ(m->tracks[3].name, "nvme.read #2");
  EXPECT_EQ(m->tracks[3].lane, core::Lane::kNvmeRead);
  EXPECT_EQ(m->ops.size(), 6u);
  EXPECT_EQ(m->tracks[0].ops.size(), 2u);
  EXPECT_EQ(m->info.source, "predicted");
  EXPECT_EQ(m->info.title, "predicted: tiny on test-box");
}

TEST(TraceLoader, OpsKeepTheirArgumentsAndExactTimes) {
  const TraceModel m = *load_trace(kSmallTrace);
  const TraceOp& upload = m.ops[static_cast<size_t>(*m.index_of_id(2))];
  EXPECT_EQ(m.text(upload.name), "upload param16 layers.0");
  EXPECT_EQ(upload.kind, core::OpKind::kUploadParams);
  EXPECT_EQ(upload.category, OpCategory::kH2d);
  EXPECT_EQ(upload.tensor_class, core::TensorClass::kParam16);
  EXPECT_EQ(upload.bytes, core::Bytes(4000));
  EXPECT_EQ(upload.start, 2000);  // "ts":2.000 µs
  EXPECT_EQ(upload.end, 3500);    // + "dur":1.500
  const TraceOp& fwd = m.ops[static_cast<size_t>(*m.index_of_id(5))];
  EXPECT_EQ(fwd.duration(), 1234567);  // "dur":1234.567 µs, to the nanosecond
  EXPECT_EQ(fwd.flops, core::Flops(6000000));
  EXPECT_FALSE(fwd.tensor_class.has_value());
}

TEST(TraceLoader, DependenciesComeFromArgsDeps) {
  const TraceModel m = *load_trace(kSmallTrace);
  const int32_t fwd1 = *m.index_of_id(5);  // "deps":[3,4]
  ASSERT_EQ(m.deps(fwd1).size(), 2u);
  EXPECT_EQ(m.ops[static_cast<size_t>(m.deps(fwd1)[0])].id, 3);
  EXPECT_EQ(m.ops[static_cast<size_t>(m.deps(fwd1)[1])].id, 4);
  const int32_t read0 = *m.index_of_id(0);  // upload 2 lists it
  ASSERT_EQ(m.consumers(read0).size(), 1u);
  EXPECT_EQ(m.ops[static_cast<size_t>(m.consumers(read0)[0])].id, 2);
}

TEST(TraceLoader, MemoryCountersBecomeSeriesPerTier) {
  const TraceModel m = *load_trace(kSmallTrace);
  const auto& gpu = m.memory[static_cast<size_t>(core::Tier::kGpu)];
  ASSERT_EQ(gpu.size(), 4u);  // 0, 2.000, 3.500 and the closing sample at 1239.567
  EXPECT_EQ(gpu[2].time, 3500);
  EXPECT_EQ(gpu[2].bytes, core::Bytes(9000));
  EXPECT_EQ(m.memory[static_cast<size_t>(core::Tier::kCpu)].size(), 3u);
  EXPECT_EQ(m.end_time(), 1239567);
  EXPECT_FALSE(m.capacity[0].has_value());  // traces do not record capacity
}

TEST(TraceLoader, ModelFromTheWrittenTraceMatchesTheSimulatedTimeline) {
  const testing::Simulated s = testing::tiny_simulated();
  const core::Result<TraceModel> m = parse_trace(testing::trace_text(s), "tiny.json");
  ASSERT_TRUE(m.has_value()) << core::to_string(m.error());
  EXPECT_EQ(m->ops.size(), s.schedule.ops.size());
  for (const TraceOp& op : m->ops) {
    const core::OpSpan& span = s.timeline.spans[static_cast<size_t>(op.id)];
    EXPECT_EQ(op.start, span.start) << m->text(op.name);
    EXPECT_EQ(op.end, std::max(span.start, span.end)) << m->text(op.name);
    EXPECT_EQ(op.lane, s.schedule.ops[static_cast<size_t>(op.id)].lane);
  }
}

TEST(TraceLoader, JsonSyntaxErrorNamesFileLineAndColumn) {
  // The second comma on line 2 is where the parser gives up (column 11).
  const core::Result<TraceModel> m =
      parse_trace("{\"traceEvents\": [\n{\"ph\":\"X\",,\"ts\":1}\n]}", "bad.json");
  ASSERT_FALSE(m.has_value());
  ASSERT_EQ(m.error().size(), 1u);
  EXPECT_EQ(m.error()[0].where.line, 2);
  EXPECT_EQ(m.error()[0].where.column, 11);
  EXPECT_TRUE(m.error()[0].to_string().starts_with("bad.json:2:11: ")) << m.error()[0].to_string();
}

TEST(TraceLoader, EveryBadEventIsReportedAtOnce) {
  const core::Result<TraceModel> m = parse_trace(
      R"({"traceEvents":[{"ph":"X","ts":1},{"ph":"X","dur":2},{"ph":"X","ts":0,"dur":1}]})", "two.json");
  ASSERT_FALSE(m.has_value());
  ASSERT_EQ(m.error().size(), 2u);
  EXPECT_NE(m.error()[0].to_string().find("traceEvents[0]"), std::string::npos);
  EXPECT_NE(m.error()[1].to_string().find("traceEvents[1]"), std::string::npos);
}

TEST(TraceLoader, UnknownFormatVersionListsTheKnownOne) {
  const core::Result<TraceModel> m =
      parse_trace(R"({"otherData":{"format":"stowage/trace/v9"},"traceEvents":[]})", "v9.json");
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.error()[0].to_string().find("stowage/trace/v1"), std::string::npos);
}

TEST(TraceLoader, NotATraceAndMissingFileAreDiagnostics) {
  EXPECT_FALSE(parse_trace("[1, 2]", "array.json").has_value());
  const core::Result<TraceModel> missing = load_trace("/nonexistent/trace.json");
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error()[0].to_string().find("/nonexistent/trace.json"), std::string::npos);
}

}  // namespace
}  // namespace stowage::gui

namespace stowage::gui {
namespace {

// Issue 12 item 6: the GUI accepted `ts: 1e308`, negative durations, cycles
// and dangling entries in deps, and skipped unknown phases; each is now a
// diagnostic naming the event's index and line.
std::string problems_of(const std::string& events) {
  const core::Result<TraceModel> m = parse_trace("{\"traceEvents\": [\n" + events + "\n]}", "t.json");
  return m ? std::string("loaded") : core::to_string(m.error());
}

std::string op(int id, const std::string& times, const std::string& deps = "[]") {
  return R"({"ph": "X", "pid": 1, "tid": 1, "name": "op", "cat": "gpu.compute", )" + times +
         R"(, "args": {"id": )" + std::to_string(id) + R"(, "kind": "forward", "deps": )" + deps + "}}";
}

TEST(TraceLoaderRefuses, ImpossibleTimesAtTheirEvent) {
  for (const std::string& times :
       {std::string(R"("ts": 1e308, "dur": 1)"), std::string(R"("ts": 0, "dur": -5)"),
        std::string(R"("ts": 0, "dur": 1e300)"), std::string(R"("ts": -1e16, "dur": 1)")}) {
    const std::string p = problems_of(op(0, R"("ts": 0, "dur": 1)") + ",\n" + op(1, times, "[0]"));
    EXPECT_NE(p.find("t.json:3: traceEvents[1]: impossible time"), std::string::npos) << times << ": " << p;
    EXPECT_NE(p.find("dur not negative"), std::string::npos) << p;
  }
  EXPECT_EQ(problems_of(op(0, R"("ts": 0, "dur": 0)")), "loaded");  // an instant is possible
}

TEST(TraceLoaderRefuses, ACycleASelfDependencyAndADependencyOnALaterOp) {
  const std::string t = R"("ts": 0, "dur": 1)";
  const std::string cycle = problems_of(op(0, t, "[1]") + ",\n" + op(1, t, "[0]"));
  EXPECT_NE(cycle.find("t.json:2: traceEvents[0]: args.deps names op 1, which is not earlier than this op (0)"),
            std::string::npos)
      << cycle;
  const std::string self = problems_of(op(0, t) + ",\n" + op(1, t, "[1]"));
  EXPECT_NE(self.find("traceEvents[1]: args.deps names op 1, which is not earlier"), std::string::npos) << self;
}

TEST(TraceLoaderRefuses, ADependencyTheTraceLacks) {
  const std::string t = R"("ts": 0, "dur": 1)";
  const std::string p = problems_of(op(0, t) + ",\n" + op(2, t, "[1, 0]") + ",\n" + op(3, t, "[-4]"));
  EXPECT_NE(p.find("t.json:3: traceEvents[1]: args.deps names op 1, which the trace lacks"), std::string::npos) << p;
  EXPECT_NE(p.find("t.json:4: traceEvents[2]: args.deps names op -4, which the trace lacks"), std::string::npos)
      << p;
  // Listed out of id order, a dependency on an earlier op is found all the same.
  EXPECT_EQ(problems_of(op(1, t, "[0]") + ",\n" + op(0, t)), "loaded");
}

// Issue 12: a trace nested 100,000 deep overflowed the GUI's stack.
TEST(TraceLoaderRefuses, NestingAHundredThousandDeep) {
  for (const std::string& text : {std::string(100'000, '['), "{\"traceEvents\": [" + std::string(100'000, '['),
                                  "{\"traceEvents\": [{\"ph\": \"X\", \"args\": " + std::string(100'000, '[')}) {
    const core::Result<TraceModel> m = parse_trace(text, "deep.json");
    ASSERT_FALSE(m.has_value());
    EXPECT_NE(core::to_string(m.error()).find("deep.json:1:"), std::string::npos) << core::to_string(m.error());
  }
}

TEST(TraceLoaderRefuses, AnUnknownPhaseAndAnOutOfRangeId) {
  const std::string p = problems_of(op(0, R"("ts": 0, "dur": 1)") + R"(,
{"ph": "Q", "name": "what"},
{"name": "no phase"})");
  EXPECT_NE(p.find("t.json:3: traceEvents[1]: unknown phase 'Q'"), std::string::npos) << p;
  EXPECT_NE(p.find("t.json:4: traceEvents[2]: event without a phase ('ph')"), std::string::npos) << p;
  EXPECT_NE(problems_of(op(200'000'000, R"("ts": 0, "dur": 1)")).find("args.id 200000000 is out of range"),
            std::string::npos);
  // Flow, instant and metadata events are phases of the format: read or skipped, not refused.
  EXPECT_EQ(problems_of(op(0, R"("ts": 0, "dur": 1)") + R"(,
{"ph": "s", "id": 1, "ts": 0, "pid": 1, "tid": 1}, {"ph": "f", "id": 1, "ts": 1, "pid": 1, "tid": 1},
{"ph": "i", "ts": 0, "name": "mark"}, {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "x"}})"),
            "loaded");
}

}  // namespace
}  // namespace stowage::gui
