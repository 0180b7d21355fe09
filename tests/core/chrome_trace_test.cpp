// Tests for core/chrome_trace.h: a hand-made six-op timeline written as
// Chrome Trace Event JSON, read back with nlohmann::json and checked against
// what Perfetto and chrome://tracing need (named threads, slices that never
// overlap on one thread, one "bytes" key per counter, paired flows), plus a
// golden file reviewed like code.
#include "core/chrome_trace.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <tuple>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace stowage::core {
namespace {

using nlohmann::json;

// Two layers whose param16 come from NVMe (two reads in flight at once, on
// slots 0 and 1), go to the GPU over PCIe and feed the forward passes:
//
//   nvme.read    [0 read p0 .. 2000]  (slot 0)
//                   [500 read p1 .. 2500]  (slot 1, overlaps op 0)
//   pcie.h2d                        [2000 up p0 .. 3500][3500 up p1 .. 5000]
//   gpu.compute                                  [3500 fwd 0 .. 4700] [5000 fwd 1 .. 1239567]
//
// Times in ns. Arrows: 0->2, 1->3, 2->4, 3->5; none for 4->5 (compute).
Schedule small_schedule() {
  Schedule s;
  s.steps = 1;
  s.ranks = 1;
  s.tokens_per_step = 2048;
  const auto read = [](OpId id, int layer) {
    return Op{.id = id,
              .kind = OpKind::kReadParams,
              .lane = Lane::kNvmeRead,
              .name = "read param16 layers." + std::to_string(layer),
              .partition = layer,
              .layer = layer,
              .tensor_class = TensorClass::kParam16,
              .bytes = Bytes(4000)};
  };
  const auto upload = [](OpId id, int layer, OpId read_op) {
    return Op{.id = id,
              .kind = OpKind::kUploadParams,
              .lane = Lane::kPcieH2d,
              .name = "upload param16 layers." + std::to_string(layer),
              .partition = layer,
              .layer = layer,
              .tensor_class = TensorClass::kParam16,
              .bytes = Bytes(4000),
              .deps = {read_op}};
  };
  const auto forward = [](OpId id, int layer, std::vector<OpId> deps) {
    return Op{.id = id,
              .kind = OpKind::kForward,
              .lane = Lane::kGpuCompute,
              .name = "fwd layers." + std::to_string(layer) + " s0 m0",
              .layer = layer,
              .bytes = Bytes(8000),
              .flops = Flops(6e6),
              .deps = std::move(deps)};
  };
  s.ops = {read(0, 0),      read(1, 1),         upload(2, 0, 0),
           upload(3, 1, 1), forward(4, 0, {2}), forward(5, 1, {3, 4})};
  return s;
}

Timeline small_timeline() {
  Timeline t;
  t.spans = {{.start = 0, .end = 2000, .slot = 0},    {.start = 500, .end = 2500, .slot = 1},
             {.start = 2000, .end = 3500, .slot = 0}, {.start = 3500, .end = 5000, .slot = 0},
             {.start = 3500, .end = 4700, .slot = 0}, {.start = 5000, .end = 1239567, .slot = 0}};
  t.memory = {{.time = 0, .tier = Tier::kGpu, .bytes = Bytes(1000)},
              {.time = 0, .tier = Tier::kCpu, .bytes = Bytes(16000)},
              {.time = 0, .tier = Tier::kNvme, .bytes = Bytes(8000)},
              {.time = 2000, .tier = Tier::kGpu, .bytes = Bytes(5000)},
              {.time = 3500, .tier = Tier::kGpu, .bytes = Bytes(9000)},
              {.time = 5000, .tier = Tier::kCpu, .bytes = Bytes(8000)}};
  return t;
}

std::string write(const Schedule& schedule, const Timeline& timeline) {
  std::ostringstream out;
  write_chrome_trace(schedule, timeline, {.title = "predicted: tiny on test-box", .source = "predicted"},
                     out);
  return out.str();
}

std::string small_trace() {
  return write(small_schedule(), small_timeline());
}

std::vector<json> events(const json& doc, std::string_view phase) {
  std::vector<json> found;
  for (const json& e : doc.at("traceEvents")) {
    if (e.at("ph") == phase) found.push_back(e);
  }
  return found;
}

// Thread names of pid 1 by tid.
std::map<int, std::string> thread_names(const json& doc) {
  std::map<int, std::string> names;
  for (const json& e : events(doc, "M")) {
    if (e.at("name") == "thread_name") names[e.at("tid").get<int>()] = e.at("args").at("name");
  }
  return names;
}

// A time in µs as read back, in integer ns.
int64_t ns(const json& micros) {
  return std::llround(micros.get<double>() * 1000);
}

// The X event of an op, found by its id.
json slice(const json& doc, OpId id) {
  for (const json& e : events(doc, "X")) {
    if (e.at("args").at("id") == id) return e;
  }
  ADD_FAILURE() << "no slice for op " << id;
  return {};
}

TEST(ChromeTrace, NamesTheRankTheMemoryAndOneThreadPerLaneAndSlot) {
  const json doc = json::parse(small_trace());
  std::map<int, std::string> processes;
  std::map<int, int> sort_index;
  for (const json& e : events(doc, "M")) {
    if (e.at("name") == "process_name") processes[e.at("pid").get<int>()] = e.at("args").at("name");
    if (e.at("name") == "thread_sort_index")
      sort_index[e.at("tid").get<int>()] = e.at("args").at("sort_index");
  }
  EXPECT_EQ(processes, (std::map<int, std::string>{{1, "rank 0"}, {2, "memory"}}));

  // Lanes without ops (pcie.d2h, nvme.write, cpu.optim, gpu.comm) get no
  // thread; nvme.read's slot 1 gets its own.
  const std::map<int, std::string> names = thread_names(doc);
  std::vector<std::string> by_sort_index;
  for (const auto& [tid, index] : sort_index) by_sort_index.push_back(names.at(tid));
  EXPECT_EQ(by_sort_index,
            (std::vector<std::string>{"gpu.compute", "pcie.h2d", "nvme.read", "nvme.read #2"}));

  EXPECT_EQ(names.at(slice(doc, 0).at("tid")), "nvme.read");
  EXPECT_EQ(names.at(slice(doc, 1).at("tid")), "nvme.read #2");
  EXPECT_EQ(names.at(slice(doc, 2).at("tid")), "pcie.h2d");
  EXPECT_EQ(names.at(slice(doc, 5).at("tid")), "gpu.compute");

  // Perfetto treats a tid equal to a pid as that process's main thread.
  for (const auto& [tid, name] : names) EXPECT_TRUE(tid != 1 && tid != 2) << name << " has tid " << tid;
}

TEST(ChromeTrace, WritesTimesAsExactMicrosecondsWithThreeDecimals) {
  const std::string text = small_trace();
  // Op 2 runs 2000..3500 ns: ts 2.000, dur 1.500. Op 5 runs 5000..1239567:
  // dur 1234567 ns = 1234.567 µs.
  EXPECT_NE(text.find(R"("ts":2.000,"dur":1.500)"), std::string::npos);
  EXPECT_NE(text.find(R"("ts":5.000,"dur":1234.567)"), std::string::npos);
  EXPECT_EQ(text.find("e+"), std::string::npos) << "scientific notation";

  const json doc = json::parse(text);
  const Timeline timeline = small_timeline();
  ASSERT_EQ(events(doc, "X").size(), 6u);
  for (OpId id = 0; id < 6; ++id) {
    const json e = slice(doc, id);
    EXPECT_EQ(ns(e.at("ts")), timeline.spans[static_cast<size_t>(id)].start) << id;
    EXPECT_EQ(ns(e.at("ts")) + ns(e.at("dur")), timeline.spans[static_cast<size_t>(id)].end) << id;
  }
}

TEST(ChromeTrace, SlicesOnOneThreadNeverOverlap) {
  const json doc = json::parse(small_trace());
  const std::vector<json> slices = events(doc, "X");
  for (size_t a = 0; a < slices.size(); ++a) {
    for (size_t b = a + 1; b < slices.size(); ++b) {
      if (slices[a].at("pid") != slices[b].at("pid") || slices[a].at("tid") != slices[b].at("tid")) continue;
      const int64_t a_start = ns(slices[a].at("ts")), a_end = a_start + ns(slices[a].at("dur"));
      const int64_t b_start = ns(slices[b].at("ts")), b_end = b_start + ns(slices[b].at("dur"));
      EXPECT_TRUE(a_end <= b_start || b_end <= a_start)
          << slices[a].at("name") << " and " << slices[b].at("name");
    }
  }
}

TEST(ChromeTrace, ArgsDescribeTheOpAndTheRateItAchieved) {
  const json doc = json::parse(small_trace());
  // 4000 B in 1500 ns = 2.667e9 B/s, rounded to a whole byte per second.
  const json upload = slice(doc, 2);
  EXPECT_EQ(upload.at("name"), "upload param16 layers.0");
  EXPECT_EQ(upload.at("cat"), "pcie.h2d");
  const json& args = upload.at("args");
  EXPECT_EQ(args.at("kind"), "upload_params");
  EXPECT_EQ(args.at("partition"), 0);
  EXPECT_EQ(args.at("layer"), 0);
  EXPECT_EQ(args.at("step"), 0);
  EXPECT_EQ(args.at("micro_step"), 0);
  EXPECT_EQ(args.at("tensor_class"), "param16");
  EXPECT_EQ(args.at("bytes"), 4000);
  EXPECT_EQ(args.at("bytes_per_s"), 2666666667);
  EXPECT_FALSE(args.contains("flops_per_s"));
  EXPECT_EQ(args.at("deps"), json::array({0}));

  // 6e6 FLOP in 1200 ns = 5e12 FLOP/s; compute moves no tensor class.
  const json fwd = slice(doc, 4).at("args");
  EXPECT_EQ(fwd.at("kind"), "forward");
  EXPECT_EQ(fwd.at("flops"), 6000000);
  EXPECT_EQ(fwd.at("flops_per_s"), 5000000000000);
  EXPECT_EQ(fwd.at("partition"), -1);
  EXPECT_FALSE(fwd.contains("tensor_class"));
  EXPECT_FALSE(fwd.contains("bytes_per_s"));
  EXPECT_EQ(slice(doc, 5).at("args").at("deps"), json::array({3, 4}));
}

TEST(ChromeTrace, AMeasuredNvmeOpCarriesTheQueueDepthItKept) {
  // The executor measured read 0 with 8 requests in flight at most and
  // 5.4567 on average: written as 8 and 5.46 (two decimals). Read 1 and
  // every other op carry no depth (a predicted timeline has none).
  Timeline timeline = small_timeline();
  timeline.spans[0].queue_depth = QueueDepth{.max = 8, .mean = 5.4567};
  const json doc = json::parse(write(small_schedule(), timeline));
  const json read0 = slice(doc, 0).at("args");
  EXPECT_EQ(read0.at("queue_depth_max"), 8);
  EXPECT_DOUBLE_EQ(read0.at("queue_depth_mean").get<double>(), 5.46);
  for (int op = 1; op < 6; ++op) {
    EXPECT_FALSE(slice(doc, op).at("args").contains("queue_depth_max")) << "op " << op;
  }
}

TEST(ChromeTrace, OneCounterPerTierWithASingleBytesKeyAndAFinalSample) {
  const json doc = json::parse(small_trace());
  std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> series;  // name -> (ns, bytes)
  for (const json& e : events(doc, "C")) {
    EXPECT_EQ(e.at("pid"), 2);
    ASSERT_EQ(e.at("args").size(), 1u);
    series[e.at("name")].emplace_back(ns(e.at("ts")), e.at("args").at("bytes").get<int64_t>());
  }
  // Every sample, then the last value again at the trace's end (1239567 ns,
  // when op 5 ends).
  using Samples = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(series["gpu memory"], (Samples{{0, 1000}, {2000, 5000}, {3500, 9000}, {1239567, 9000}}));
  EXPECT_EQ(series["cpu memory"], (Samples{{0, 16000}, {5000, 8000}, {1239567, 8000}}));
  EXPECT_EQ(series["nvme memory"], (Samples{{0, 8000}, {1239567, 8000}}));
  EXPECT_EQ(series.size(), 3u);
}

TEST(ChromeTrace, MemoryByClassIsASecondCounterPerTierThatSumsToItsBytes) {
  // The small schedule with memory effects: 1000 B of param16 resident on
  // the GPU; upload 2 (2000..3500 ns) fetches 4000 B of param16 there,
  // forward 4 (3500..4700 ns) holds 2000 B of activations and frees the
  // fetched copy at its end.
  Schedule s = small_schedule();
  s.resident = {Bytes(1000), Bytes(0), Bytes(0)};
  s.resident_items = {{Tier::kGpu, Bytes(1000), "param16 at rest"}};
  s.ops[2].allocs = {{Tier::kGpu, Bytes(4000), "fetched param16 layers.0"}};
  s.ops[4].allocs = {{Tier::kGpu, Bytes(2000), "activations layers.0 s0 m0"}};
  s.ops[4].frees = {{Tier::kGpu, Bytes(4000), "fetched param16 layers.0"}};
  Timeline t = small_timeline();
  t.memory = {{.time = 0, .tier = Tier::kGpu, .bytes = Bytes(1000)},
              {.time = 2000, .tier = Tier::kGpu, .bytes = Bytes(5000)},
              {.time = 3500, .tier = Tier::kGpu, .bytes = Bytes(7000)},
              {.time = 4700, .tier = Tier::kGpu, .bytes = Bytes(3000)}};
  const json doc = json::parse(write(s, t));
  using Sample = std::tuple<int64_t, int64_t, int64_t>;  // ns, param16, activation
  std::vector<Sample> classes;
  for (const json& e : events(doc, "C")) {
    if (e.at("name") != "classes in gpu memory") {
      EXPECT_EQ(e.at("name"), "gpu memory");  // no other tier is sampled, so none gets classes
      continue;
    }
    ASSERT_EQ(e.at("args").size(), 2u) << e.dump();  // the classes the tier ever holds, in every event
    classes.emplace_back(ns(e.at("ts")), e.at("args").at("param16"), e.at("args").at("activation"));
  }
  // Resident at 0; the upload's fetch at 2000; the forward's activations at
  // 3500; its free at 4700; the last value again at the end (1239567 ns).
  EXPECT_EQ(classes, (std::vector<Sample>{{0, 1000, 0}, {2000, 5000, 0}, {3500, 5000, 2000}, {4700, 1000, 2000},
                                          {1239567, 1000, 2000}}));
}

TEST(ChromeTrace, FlowsRunFromEachTransferToTheOpsThatWaitForIt) {
  const json doc = json::parse(small_trace());
  std::map<int64_t, json> starts, ends;
  for (const json& e : events(doc, "s")) EXPECT_TRUE(starts.emplace(e.at("id").get<int64_t>(), e).second);
  for (const json& e : events(doc, "f")) EXPECT_TRUE(ends.emplace(e.at("id").get<int64_t>(), e).second);
  ASSERT_EQ(starts.size(), 4u);  // 0->2, 1->3, 2->4, 3->5; 4->5 is compute to compute
  ASSERT_EQ(ends.size(), 4u);

  const Schedule schedule = small_schedule();
  std::set<std::pair<OpId, OpId>> arrows;
  for (const auto& [id, s] : starts) {
    ASSERT_TRUE(ends.contains(id)) << id;
    const json& f = ends.at(id);
    EXPECT_EQ(s.at("cat"), "flow");
    EXPECT_EQ(f.at("cat"), "flow");
    EXPECT_EQ(s.at("name"), "data");
    EXPECT_EQ(f.at("name"), "data");
    EXPECT_EQ(f.at("bp"), "e");
    // The start lies inside its producer's slice, the end at its consumer's start.
    OpId from = -1, to = -1;
    for (const json& x : events(doc, "X")) {
      const int64_t start = ns(x.at("ts")), end = start + ns(x.at("dur"));
      if (x.at("tid") == s.at("tid") && start <= ns(s.at("ts")) && ns(s.at("ts")) < end)
        from = x.at("args").at("id");
      if (x.at("tid") == f.at("tid") && start == ns(f.at("ts"))) to = x.at("args").at("id");
    }
    arrows.emplace(from, to);
  }
  EXPECT_EQ(arrows, (std::set<std::pair<OpId, OpId>>{{0, 2}, {1, 3}, {2, 4}, {3, 5}}));
}

TEST(ChromeTrace, OtherDataNamesTheFormatAndTheRun) {
  const json doc = json::parse(small_trace());
  EXPECT_EQ(doc.at("displayTimeUnit"), "ns");
  const json& other = doc.at("otherData");
  EXPECT_EQ(other.at("format"), "stowage/trace/v1");
  EXPECT_EQ(other.at("title"), "predicted: tiny on test-box");
  EXPECT_EQ(other.at("source"), "predicted");
  EXPECT_EQ(other.at("ranks"), 1);
  EXPECT_EQ(other.at("steps"), 1);
  EXPECT_EQ(other.at("tokens_per_step"), 2048);
}

// A predicted trace may carry the simulator's step and the lane that fell
// behind (sim/summary.h); a trace without them has neither key.
TEST(ChromeTrace, OtherDataCarriesTheSimulatorsStepWhenGiven) {
  std::ostringstream text;
  write_chrome_trace(small_schedule(), small_timeline(),
                     {.title = "t", .source = "predicted", .steady_step = 1500, .falls_behind = Lane::kNvmeWrite}, text);
  const json other = json::parse(text.str()).at("otherData");
  EXPECT_EQ(other.at("steady_step_ns"), 1500);
  EXPECT_EQ(other.at("falls_behind"), "nvme.write");
  const json plain = json::parse(small_trace()).at("otherData");
  EXPECT_FALSE(plain.contains("steady_step_ns"));
  EXPECT_FALSE(plain.contains("falls_behind"));
}

// A predicted trace carries its simulation's warnings, escaped as JSON
// strings, in order; a trace without any has no key.
TEST(ChromeTrace, OtherDataCarriesTheWarningsWhenThereAreAny) {
  std::ostringstream text;
  write_chrome_trace(small_schedule(), small_timeline(),
                     {.title = "t", .source = "predicted", .warnings = {"a \"quoted\" rate", "two\nlines"}}, text);
  const json other = json::parse(text.str()).at("otherData");
  EXPECT_EQ(other.at("warnings"), json::array({"a \"quoted\" rate", "two\nlines"}));
  EXPECT_FALSE(json::parse(small_trace()).at("otherData").contains("warnings"));
}

TEST(ChromeTrace, SameInputsGiveIdenticalBytes) {
  EXPECT_EQ(small_trace(), small_trace());
}

// A timeline that puts two overlapping ops on one slot is a bug upstream,
// but the trace must still open: the later op moves to an extra track.
TEST(ChromeTrace, OpsOverlappingOnOneSlotMoveToAnExtraTrack) {
  Schedule schedule = small_schedule();
  Timeline timeline = small_timeline();
  timeline.spans[1].slot = 0;  // op 1 (500..2500) now collides with op 0 (0..2000)
  const json doc = json::parse(write(schedule, timeline));
  const std::map<int, std::string> names = thread_names(doc);
  EXPECT_EQ(names.at(slice(doc, 0).at("tid")), "nvme.read");
  EXPECT_EQ(names.at(slice(doc, 1).at("tid")), "nvme.read #2");
}

TEST(ChromeTrace, EscapesOpNamesAndWritesZeroLengthOps) {
  Schedule schedule = small_schedule();
  Timeline timeline = small_timeline();
  schedule.ops[4].name = "fwd \"quoted\" back\\slash\nnewline \xff";
  timeline.spans[4].end = timeline.spans[4].start;  // took no time: no rate
  const json doc = json::parse(write(schedule, timeline));
  const json fwd = slice(doc, 4);
  EXPECT_EQ(fwd.at("name"), "fwd \"quoted\" back\\slash\nnewline \xEF\xBF\xBD");  // invalid byte -> U+FFFD
  EXPECT_EQ(fwd.at("dur"), 0);
  EXPECT_FALSE(fwd.at("args").contains("flops_per_s"));
}

// The golden file shows what the writer produces, reviewed like code.
// Regenerate it with STOWAGE_UPDATE_GOLDEN=1 after an intended change.
TEST(ChromeTrace, MatchesTheGoldenFile) {
  const std::filesystem::path path =
      std::filesystem::path(STOWAGE_TEST_DATA_DIR) / "golden" / "small_trace.json";
  const std::string text = small_trace();
  if (const char* update = std::getenv("STOWAGE_UPDATE_GOLDEN");
      update != nullptr && std::string_view(update) == "1") {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
    GTEST_SKIP() << "wrote " << path;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "cannot read " << path << "; write it with STOWAGE_UPDATE_GOLDEN=1";
  const std::string golden{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_EQ(text, golden) << "differs from " << path << "; if the change is intended, rerun with "
                          << "STOWAGE_UPDATE_GOLDEN=1 and review the diff";
}

}  // namespace
}  // namespace stowage::core
