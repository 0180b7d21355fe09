#include "core/trace_reader.h"

#include <gtest/gtest.h>

#include <sstream>

#include "core/chrome_trace.h"

namespace stowage::core {
namespace {

// What write_chrome_trace writes, read_recorded_trace reads back: ids,
// kinds, lanes, sizes, dependencies and spans, to the nanosecond, and the
// slots of a lane that ran two ops at once.
TEST(TraceReader, ReadsBackWhatTheWriterWrote) {
  Schedule s;
  s.steps = 2;
  s.tokens_per_step = 512;
  s.ops = {{.id = 0, .kind = OpKind::kForward, .lane = Lane::kGpuCompute, .name = "fwd", .layer = 0,
            .bytes = Bytes(100), .flops = Flops(12345678901.0)},
           {.id = 1, .kind = OpKind::kReadStates, .lane = Lane::kNvmeRead, .name = "read a", .partition = 0,
            .tensor_class = TensorClass::kMaster32, .bytes = Bytes(4096), .deps = {0}},
           {.id = 2, .kind = OpKind::kReadStates, .lane = Lane::kNvmeRead, .name = "read b", .partition = 1,
            .step = 1, .bytes = Bytes(8192), .deps = {0}},
           {.id = 3, .kind = OpKind::kOptimizer, .lane = Lane::kCpuOptim, .name = "adam", .params = 77,
            .deps = {1, 2}}};
  s.lane_slots[static_cast<size_t>(Lane::kNvmeRead)] = 4;
  const Timeline t{.spans = {{0, 1001, 0}, {1001, 5003, 0}, {1500, 4000, 1}, {5003, 9999, 0}}, .memory = {}};
  std::ostringstream text;
  write_chrome_trace(s, t, {.title = "measured: x", .source = "measured"}, text);
  const RecordedTrace r = parse_recorded_trace(text.str(), "t.json").value();
  EXPECT_EQ(r.source, "measured");
  EXPECT_EQ(r.title, "measured: x");
  EXPECT_EQ(r.schedule.steps, 2);
  EXPECT_EQ(r.schedule.tokens_per_step, 512);
  ASSERT_EQ(r.schedule.ops.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(r.schedule.ops[i].id, s.ops[i].id);
    EXPECT_EQ(r.schedule.ops[i].kind, s.ops[i].kind);
    EXPECT_EQ(r.schedule.ops[i].lane, s.ops[i].lane);
    EXPECT_EQ(r.schedule.ops[i].name, s.ops[i].name);
    EXPECT_EQ(r.schedule.ops[i].bytes, s.ops[i].bytes);
    EXPECT_EQ(r.schedule.ops[i].params, s.ops[i].params);
    EXPECT_EQ(r.schedule.ops[i].deps, s.ops[i].deps);
    EXPECT_EQ(r.schedule.ops[i].step, s.ops[i].step);
    EXPECT_EQ(r.timeline.spans[i].start, t.spans[i].start);
    EXPECT_EQ(r.timeline.spans[i].end, t.spans[i].end);
  }
  EXPECT_DOUBLE_EQ(r.schedule.ops[0].flops.count(), 12345678901.0);
  EXPECT_EQ(r.schedule.ops[1].tensor_class, TensorClass::kMaster32);
  EXPECT_EQ(r.timeline.spans[2].slot, 1);
  EXPECT_EQ(r.schedule.lane_slots[static_cast<size_t>(Lane::kNvmeRead)], 2);  // as many as were used
}

TEST(TraceReader, BadInputIsADiagnostic) {
  EXPECT_FALSE(parse_recorded_trace("{", "a.json").has_value());
  EXPECT_FALSE(parse_recorded_trace("[]", "a.json").has_value());
  EXPECT_FALSE(parse_recorded_trace(R"({"traceEvents":[]})", "a.json").has_value());
  // Op 1 missing: ids must be 0..n-1.
  const auto gap = parse_recorded_trace(
      R"({"traceEvents":[{"ph":"X","pid":1,"cat":"gpu.compute","ts":0,"dur":1,"args":{"id":0,"kind":"forward"}},)"
      R"({"ph":"X","pid":1,"cat":"gpu.compute","ts":1,"dur":1,"args":{"id":2,"kind":"forward"}}]})",
      "gap.json");
  ASSERT_FALSE(gap.has_value());
  EXPECT_NE(to_string(gap.error()).find("op id 1 is missing"), std::string::npos) << to_string(gap.error());
  const auto self = parse_recorded_trace(
      R"({"traceEvents":[{"ph":"X","pid":1,"cat":"gpu.compute","ts":0,"dur":1,"args":{"id":0,"kind":"forward","deps":[0]}}]})",
      "self.json");
  EXPECT_FALSE(self.has_value());
  EXPECT_FALSE(parse_recorded_trace(std::string(1000, '['), "deep.json").has_value());
}

// Found by the sweep under AddressSanitizer (issue 12): `args.step: -1`
// read before the summary's per-step table (heap-buffer-overflow in
// sim::summarize); a step past otherData.steps read after it.
TEST(TraceReader, AStepOutsideTheTracesStepsIsADiagnostic) {
  const auto op = [](const std::string& step) {
    return R"({"ph":"X","pid":1,"cat":"gpu.compute","ts":0,"dur":1,"args":{"id":0,"kind":"forward","step":)" + step +
           "}}";
  };
  const auto negative = parse_recorded_trace(R"({"traceEvents":[)" + op("-1") + "]}", "neg.json");
  ASSERT_FALSE(negative.has_value());
  EXPECT_NE(to_string(negative.error()).find("neg.json:1: traceEvents[0]: args.step -1, args.micro_step 0 out of range"),
            std::string::npos)
      << to_string(negative.error());
  const auto past = parse_recorded_trace(R"({"otherData":{"steps":2},"traceEvents":[)" + op("5") + "]}", "past.json");
  ASSERT_FALSE(past.has_value());
  EXPECT_NE(to_string(past.error()).find("past.json: an op of step 5 in a trace of 2 steps"), std::string::npos)
      << to_string(past.error());
  const auto many = parse_recorded_trace(R"({"otherData":{"steps":2000000000},"traceEvents":[)" + op("0") + "]}",
                                         "many.json");
  ASSERT_FALSE(many.has_value());
  EXPECT_NE(to_string(many.error()).find("otherData.steps 2000000000 is too many"), std::string::npos);
  // Without otherData.steps, the ops' own steps count.
  const auto counted = parse_recorded_trace(R"({"traceEvents":[)" + op("3") + "]}", "counted.json");
  ASSERT_TRUE(counted.has_value()) << to_string(counted.error());
  EXPECT_EQ(counted->schedule.steps, 4);
}

}  // namespace
}  // namespace stowage::core
