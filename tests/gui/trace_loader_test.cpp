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
