// The fast line reader against the exact JSON reader: on traces written by
// core's trace writer from simulated plans they give the same model, field
// by field, whether the events are read as one chunk or split over several
// threads; a corrupt line is reported with its line and column, as the
// exact reader reports it; anything outside the line reader's subset still
// opens, through the exact reader.
#include "gui/trace_line_reader.h"

#include <gtest/gtest.h>

#include <sstream>

#include "gui/trace_loader.h"
#include "gui_test_data.h"

namespace stowage::gui {
namespace {

void expect_same_model(const TraceModel& a, const TraceModel& b) {
  EXPECT_EQ(a.info.title, b.info.title);
  EXPECT_EQ(a.info.source, b.info.source);
  EXPECT_EQ(a.info.ranks, b.info.ranks);
  EXPECT_EQ(a.info.steps, b.info.steps);
  ASSERT_EQ(a.ops.size(), b.ops.size());
  for (size_t i = 0; i < a.ops.size(); ++i) {
    const TraceOp &x = a.ops[i], &y = b.ops[i];
    const auto i32 = static_cast<int32_t>(i);
    ASSERT_EQ(a.text(x.name), b.text(y.name)) << i;
    EXPECT_EQ(x.id, y.id) << a.text(x.name);
    EXPECT_EQ(x.track, y.track) << a.text(x.name);
    EXPECT_EQ(x.category, y.category) << a.text(x.name);
    EXPECT_EQ(x.kind, y.kind) << a.text(x.name);
    EXPECT_EQ(x.lane, y.lane) << a.text(x.name);
    EXPECT_EQ(x.start, y.start) << a.text(x.name);
    EXPECT_EQ(x.end, y.end) << a.text(x.name);
    EXPECT_EQ(x.partition, y.partition) << a.text(x.name);
    EXPECT_EQ(x.layer, y.layer) << a.text(x.name);
    EXPECT_EQ(x.step, y.step) << a.text(x.name);
    EXPECT_EQ(x.micro_step, y.micro_step) << a.text(x.name);
    EXPECT_EQ(x.tensor_class, y.tensor_class) << a.text(x.name);
    EXPECT_EQ(x.bytes, y.bytes) << a.text(x.name);
    EXPECT_EQ(x.flops.count(), y.flops.count()) << a.text(x.name);
    EXPECT_TRUE(std::ranges::equal(a.deps(i32), b.deps(i32))) << a.text(x.name);
    EXPECT_TRUE(std::ranges::equal(a.consumers(i32), b.consumers(i32))) << a.text(x.name);
  }
  ASSERT_EQ(a.tracks.size(), b.tracks.size());
  for (size_t t = 0; t < a.tracks.size(); ++t) {
    EXPECT_EQ(a.tracks[t].name, b.tracks[t].name);
    EXPECT_EQ(a.tracks[t].rank, b.tracks[t].rank);
    EXPECT_EQ(a.tracks[t].lane, b.tracks[t].lane);
    EXPECT_EQ(a.tracks[t].ops, b.tracks[t].ops) << a.tracks[t].name;
  }
  for (size_t tier = 0; tier < a.memory.size(); ++tier) {
    ASSERT_EQ(a.memory[tier].size(), b.memory[tier].size());
    for (size_t k = 0; k < a.memory[tier].size(); ++k) {
      EXPECT_EQ(a.memory[tier][k].time, b.memory[tier][k].time);
      EXPECT_EQ(a.memory[tier][k].bytes, b.memory[tier][k].bytes);
    }
  }
  EXPECT_EQ(a.begin_time(), b.begin_time());
  EXPECT_EQ(a.end_time(), b.end_time());
}

TraceModel must(core::Result<TraceModel> m) {
  EXPECT_TRUE(m.has_value()) << (m ? "" : core::to_string(m.error()));
  return m ? std::move(*m) : TraceModel{};
}

// Line `line` (1-based) of `text`.
std::string& line_of(std::vector<std::string>& lines, int line) {
  return lines[static_cast<size_t>(line - 1)];
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

// The first line holding a complete event, 1-based.
int first_op_line(const std::vector<std::string>& lines) {
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].starts_with(R"({"ph":"X")")) return static_cast<int>(i) + 1;
  }
  return 0;
}

TEST(TraceLineReader, GivesTheExactReadersModelOnSimulatedPlans) {
  // ZeRO-Offload (PCIe, CPU optimizer) and ZeRO-Infinity (NVMe queues with
  // several slots, so extra tracks) on the workstation.
  for (const core::StandardPlacement which :
       {core::StandardPlacement::kZeroOffload, core::StandardPlacement::kZeroInfinity}) {
    const std::string text = testing::trace_text(testing::tiny_simulated(which));
    const TraceModel exact = must(parse_trace(text, "tiny.json", TraceReader::kJson));
    const TraceModel lines = must(parse_trace(text, "tiny.json", TraceReader::kLines));
    ASSERT_GT(exact.ops.size(), 50u);
    expect_same_model(lines, exact);
  }
}

TEST(TraceLineReader, ChunksOnSeveralThreadsJoinToTheSameModel) {
  const std::string text =
      testing::trace_text(testing::tiny_simulated(core::StandardPlacement::kZeroInfinity));
  const TraceModel exact = must(parse_trace(text, "tiny.json", TraceReader::kJson));
  // About 2 kB per chunk: dozens of chunks, dependencies across them.
  std::optional<core::Result<TraceModel>> chunked =
      read_trace_lines(text, "tiny.json", {.min_chunk_bytes = 2000, .threads = 64});
  ASSERT_TRUE(chunked.has_value());
  expect_same_model(must(std::move(*chunked)), exact);
}

TEST(TraceLineReader, TheGoldenSmallTraceReadsTheSame) {
  const std::string file = std::string(STOWAGE_TEST_DATA_DIR) + "/golden/small_trace.json";
  expect_same_model(must(load_trace(file, TraceReader::kLines)), must(load_trace(file, TraceReader::kJson)));
}

TEST(TraceLineReader, CorruptLineIsReportedWithItsLineAndColumn) {
  std::vector<std::string> lines = split(testing::trace_text(testing::tiny_simulated()));
  const int bad = first_op_line(lines) + 7;
  std::string& l = line_of(lines, bad);
  const size_t ts = l.find(R"("ts":)");
  ASSERT_NE(ts, std::string::npos);
  l.erase(ts + 4, 1);  // "ts"2.000: no colon after the key
  const std::string text = join(lines);
  const core::Result<TraceModel> fast = parse_trace(text, "bad.json", TraceReader::kLines);
  ASSERT_FALSE(fast.has_value());
  ASSERT_EQ(fast.error().size(), 1u);
  EXPECT_EQ(fast.error()[0].where.line, bad);
  EXPECT_GT(fast.error()[0].where.column, static_cast<int>(ts) + 4);  // past the key, at the number
  // The same words, line and column as the exact reader's.
  const core::Result<TraceModel> exact = parse_trace(text, "bad.json", TraceReader::kJson);
  ASSERT_FALSE(exact.has_value());
  EXPECT_EQ(fast.error()[0].to_string(), exact.error()[0].to_string());
  EXPECT_TRUE(fast.error()[0].to_string().starts_with("bad.json:" + std::to_string(bad) + ":"));
}

TEST(TraceLineReader, TruncatedLineInTheMiddleIsReportedWithItsLine) {
  std::vector<std::string> lines = split(testing::trace_text(testing::tiny_simulated()));
  const int bad = first_op_line(lines) + 3;
  line_of(lines, bad).resize(40);  // cut inside the event
  const core::Result<TraceModel> m =
      *read_trace_lines(join(lines), "cut.json", {.min_chunk_bytes = 2000, .threads = 8});
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error()[0].where.line, bad) << core::to_string(m.error());
}

TEST(TraceLineReader, EventWithoutTimesNamesItsIndexAndLine) {
  std::vector<std::string> lines = split(testing::trace_text(testing::tiny_simulated()));
  const int bad = first_op_line(lines) + 2;
  std::string& l = line_of(lines, bad);
  const size_t dur = l.find(R"("dur":)");
  l.replace(dur, 2, R"("x)");  // "xur": valid JSON, no 'dur'
  const core::Result<TraceModel> m = parse_trace(join(lines), "nodur.json", TraceReader::kLines);
  ASSERT_FALSE(m.has_value());
  ASSERT_EQ(m.error().size(), 1u);
  EXPECT_EQ(m.error()[0].where.line, bad);
  // Events start on line 4 (after the header's three lines): event index = line - 4.
  EXPECT_NE(m.error()[0].what.find("traceEvents[" + std::to_string(bad - 4) + "]"), std::string::npos)
      << m.error()[0].to_string();
  EXPECT_NE(m.error()[0].what.find("without numeric 'ts' and 'dur'"), std::string::npos);
}

TEST(TraceLineReader, OtherLayoutsAndUnusualLinesGoToTheExactReader) {
  const std::string compact = R"({"traceEvents":[{"ph":"X","name":"a","ts":1,"dur":2}]})";
  EXPECT_FALSE(read_trace_lines(compact, "c.json").has_value());
  EXPECT_FALSE(parse_trace(compact, "c.json", TraceReader::kLines).has_value());
  EXPECT_EQ(must(parse_trace(compact, "c.json")).ops.size(), 1u);

  // An escaped key is valid JSON the line reader leaves alone ("\u0074s" is "ts").
  std::vector<std::string> lines = split(testing::trace_text(testing::tiny_simulated()));
  std::string& l = line_of(lines, first_op_line(lines));
  l.replace(l.find(R"("ts":)"), 4, R"("\u0074s")");
  const std::string text = join(lines);
  EXPECT_FALSE(read_trace_lines(text, "esc.json").has_value());
  expect_same_model(must(parse_trace(text, "esc.json")),
                    must(parse_trace(text, "esc.json", TraceReader::kJson)));
}

TEST(TraceLineReader, EscapedNamesAndNumbersOfEveryShapeMatchTheExactReader) {
  const std::string text =
      "{\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"format\":\"stowage/trace/"
      "v1\",\"source\":\"measured\"},\n"
      "\"traceEvents\":[\n"
      R"({"ph":"M","pid":1,"tid":1001,"name":"thread_name","args":{"name":"nvme.read #2"}},)"
      "\n"
      R"({"ph":"X","pid":1,"tid":1001,"name":"caf\u00e9 \"q\"","cat":"nvme.read","ts":1.5,"dur":2,"args":{"id":7,"flops":1.25e3,"bytes":12,"deps":[7,1.5,"x",3]}},)"
      "\n\n"
      R"({"ph":"X","pid":1,"tid":1001,"name":"n\u00e4me","ts":12345.6789,"dur":0.0001,"args":{"kind":"read_states","tensor_class":"adam_m","partition":2.9}},)"
      "\n"
      R"({"ph":"C","pid":2,"name":"cpu memory","ts":-0.001,"args":{"bytes":5}})"
      "\n]}\n";
  const TraceModel lines = must(parse_trace(text, "shapes.json", TraceReader::kLines));
  const TraceModel exact = must(parse_trace(text, "shapes.json", TraceReader::kJson));
  expect_same_model(lines, exact);
  ASSERT_EQ(lines.ops.size(), 2u);
  EXPECT_EQ(lines.text(lines.ops[0].name), "caf\xC3\xA9 \"q\"");
  EXPECT_EQ(lines.ops[0].start, 1500);
  EXPECT_EQ(lines.ops[1].id, 1);  // no id: its index
  EXPECT_EQ(lines.ops[1].partition, 2);
}

}  // namespace
}  // namespace stowage::gui
