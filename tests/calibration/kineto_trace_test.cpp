// PyTorch profiler traces as the measured side (issue 14 item 7): events
// map to lanes by category and name, a CPU accelerator's compute is its
// training thread's outermost operators, steps are ProfilerStep#N, bad
// traces are diagnostics; and a real DeepSpeed ZeRO-Offload trace reads
// as what it recorded.
#include "calibration/kineto_trace.h"

#include <gtest/gtest.h>

#include <string>

#include "calibration/lane_compare.h"
#include "calibration/trace_metrics.h"

namespace stowage::calibration {
namespace {

using core::Lane;

std::string event(const std::string& cat, const std::string& name, double ts, double dur, int tid = 1) {
  return R"({"ph":"X","cat":")" + cat + R"(","name":")" + name + R"(","pid":1,"tid":)" + std::to_string(tid) +
         R"(,"ts":)" + std::to_string(ts) + R"(,"dur":)" + std::to_string(dur) + "}";
}

std::string trace_of(const std::vector<std::string>& events) {
  std::string s = R"({"schemaVersion":1,"traceEvents":[)";
  for (size_t i = 0; i < events.size(); ++i) s += (i ? ",\n" : "\n") + events[i];
  return s + "\n]}";
}

KinetoTrace must(const std::string& text) {
  auto t = parse_kineto_trace(text, "t.json");
  EXPECT_TRUE(t) << (t ? "" : core::to_string(t.error()));
  return t ? *t : KinetoTrace{};
}

TEST(KinetoTrace, EventsMapToLanesByCategoryAndName) {
  EXPECT_EQ(kineto_lane("kernel", "ampere_bf16_s16816gemm"), Lane::kGpuCompute);
  EXPECT_EQ(kineto_lane("kernel", "ncclDevKernel_AllReduce_Sum_bf16"), Lane::kGpuComm);
  EXPECT_EQ(kineto_lane("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)"), Lane::kPcieH2d);
  EXPECT_EQ(kineto_lane("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)"), Lane::kPcieD2h);
  EXPECT_EQ(kineto_lane("gpu_memcpy", "Memcpy DtoD (Device -> Device)"), std::nullopt);
  EXPECT_EQ(kineto_lane("user_annotation", "Optimizer.step#DeepSpeedCPUAdam.step"), Lane::kCpuOptim);
  EXPECT_EQ(kineto_lane("user_annotation", "gloo:all_reduce"), Lane::kGpuComm);
  EXPECT_EQ(kineto_lane("python_function", "async_pread"), Lane::kNvmeRead);
  EXPECT_EQ(kineto_lane("python_function", "async_pwrite"), Lane::kNvmeWrite);
  EXPECT_EQ(kineto_lane("cpu_op", "aten::mm"), std::nullopt);
}

// A GPU trace: kernels and copies are lanes; CPU operators are not.
TEST(KinetoTrace, AGpuTraceTakesKernelsAndCopies) {
  const KinetoTrace t = must(trace_of({
      event("user_annotation", "ProfilerStep#3", 1000, 100), event("cpu_op", "aten::mm", 1001, 5),
      event("kernel", "gemm", 1010, 20, 7),
      event("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 1030, 10, 8),
      event("user_annotation", "ProfilerStep#4", 1100, 50), event("kernel", "gemm", 1110, 30, 7),
      event("kernel", "late", 2000, 1, 7),  // after the last step: left out
  }));
  EXPECT_TRUE(t.has_kernels);
  ASSERT_EQ(t.step_times, (std::vector<core::SimTime>{100'000, 50'000}));
  EXPECT_EQ(t.events_per_lane[static_cast<size_t>(Lane::kGpuCompute)], 2);
  EXPECT_EQ(t.events_per_lane[static_cast<size_t>(Lane::kPcieH2d)], 1);
  ASSERT_EQ(t.schedule.ops.size(), 3u);
  EXPECT_EQ(t.schedule.ops[2].step, 1);
  EXPECT_EQ(t.timeline.spans[2].start, 110'000);
  EXPECT_EQ(t.timeline.spans[2].end, 140'000);
  // Lanes cover 20 + 10 + 30 µs of the steps' 150: 45 µs a step in none.
  EXPECT_EQ(no_lane_per_step(kineto_metrics(t)), 45'000);
}

// On a GPU, Kineto copies each host annotation onto every stream that ran
// work inside it ("gpu_user_annotation"): as in the H200 trace of
// DeepSpeed's OPT-1.3B run, whose 2 profiled steps read as 6 before. The
// copies are neither steps nor ops.
TEST(KinetoTrace, AGpuStreamsCopiesOfHostAnnotationsAreNeitherStepsNorOps) {
  const KinetoTrace t = must(trace_of({
      event("user_annotation", "ProfilerStep#1", 1000, 100),
      event("gpu_user_annotation", "ProfilerStep#1", 1001, 99, 7),
      event("gpu_user_annotation", "ProfilerStep#1", 1020, 70, 20),
      event("kernel", "gemm", 1010, 20, 7),
      event("user_annotation", "Optimizer.step#DeepSpeedCPUAdam.step", 1050, 30),
      event("gpu_user_annotation", "Optimizer.step#DeepSpeedCPUAdam.step", 1060, 10, 7),
      event("user_annotation", "ProfilerStep#2", 1100, 50),
      event("gpu_user_annotation", "ProfilerStep#2", 1102, 48, 7),
  }));
  ASSERT_EQ(t.step_times, (std::vector<core::SimTime>{100'000, 50'000}));
  EXPECT_EQ(t.schedule.steps, 2);
  EXPECT_EQ(t.events_per_lane[static_cast<size_t>(Lane::kCpuOptim)], 1);
  EXPECT_EQ(t.events_per_lane[static_cast<size_t>(Lane::kGpuCompute)], 1);
  EXPECT_EQ(kineto_lane("gpu_user_annotation", "Optimizer.step#DeepSpeedCPUAdam.step"), std::nullopt);
}

// Without kernels the training thread's outermost operators in a step are
// the compute, and what nests inside them or inside the optimizer step is not.
// deviceProperties, wherever it comes in the root object: the GPUs by
// name, in order, elements without a string one passed over; its first GPU is the
// origin (core/trace_origin.h). None listed, or not a list: no origin.
TEST(KinetoTrace, TheGpusItProfiledAreItsDevices) {
  const std::string steps = event("user_annotation", "ProfilerStep#1", 0, 10);
  for (const std::string& text :
       {R"({"schemaVersion":1,"deviceProperties":[{"id":0,"name":"NVIDIA H200","numSms":132},7,{"id":1},)"
        R"({"name":"NVIDIA H100 80GB HBM3"}],"traceEvents":[)" +
            steps + "]}",
        R"({"schemaVersion":1,"traceEvents":[)" + steps +
            R"(],"deviceProperties":[{"id":0,"name":"NVIDIA H200","numSms":132},7,{"id":1},)"
            R"({"name":"NVIDIA H100 80GB HBM3"}]})"}) {
    const KinetoTrace t = must(text);
    EXPECT_EQ(t.devices, (std::vector<std::string>{"NVIDIA H200", "NVIDIA H100 80GB HBM3"})) << text;
    EXPECT_EQ(kineto_origin(t), core::measured_on("PyTorch profiler", "NVIDIA H200"));
  }
  for (const std::string& text :
       {R"({"schemaVersion":1,"deviceProperties":[],"traceEvents":[)" + steps + "]}",
        R"({"schemaVersion":1,"deviceProperties":{"name":"x"},"traceEvents":[)" + steps + "]}"}) {
    const KinetoTrace t = must(text);
    EXPECT_TRUE(t.devices.empty()) << text;
    EXPECT_TRUE(kineto_origin(t).empty()) << text;
  }
  // A name that is not a string is passed over, as an element without one.
  EXPECT_TRUE(must(R"({"schemaVersion":1,"deviceProperties":[{"name":7}],"traceEvents":[)" + steps + "]}")
                  .devices.empty());
}

TEST(KinetoTrace, ACpuAcceleratorsComputeIsItsOutermostOperators) {
  const KinetoTrace t = must(trace_of({
      event("user_annotation", "ProfilerStep#1", 0, 100), event("cpu_op", "aten::linear", 10, 20),
      event("cpu_op", "aten::mm", 12, 15),  // nested
      event("cpu_op", "autograd::engine::evaluate_function: MmBackward0", 40, 20),
      event("user_annotation", "Optimizer.step#DeepSpeedCPUAdam.step", 70, 20),
      event("cpu_op", "aten::add_", 75, 5),    // in the optimizer
      event("cpu_op", "aten::mm", 10, 50, 2),  // another thread
  }));
  EXPECT_FALSE(t.has_kernels);
  EXPECT_EQ(t.events_per_lane[static_cast<size_t>(Lane::kGpuCompute)], 2);
  EXPECT_EQ(t.events_per_lane[static_cast<size_t>(Lane::kCpuOptim)], 1);
  const TraceMetrics m = trace_metrics(t.schedule, t.timeline);
  EXPECT_EQ(m.lanes[static_cast<size_t>(Lane::kGpuCompute)].busy, 40'000);
  EXPECT_EQ(m.lanes[static_cast<size_t>(Lane::kCpuOptim)].busy, 20'000);
  int backward = 0;
  for (const core::Op& op : t.schedule.ops) backward += op.kind == core::OpKind::kBackward;
  EXPECT_EQ(backward, 1);
}

TEST(KinetoTrace, BadTracesAreDiagnosticsWithTheirPlace) {
  auto text_of = [](const std::string& t) {
    auto r = parse_kineto_trace(t, "t.json");
    return r ? std::string("parsed") : core::to_string(r.error());
  };
  EXPECT_NE(text_of(trace_of({event("cpu_op", "aten::mm", 0, 1)})).find("no 'ProfilerStep#N' annotations"),
            std::string::npos);
  const std::string negative = text_of(
      trace_of({event("user_annotation", "ProfilerStep#1", 0, 10), event("cpu_op", "aten::mm", 1, -4)}));
  EXPECT_NE(negative.find("t.json:3: traceEvents[1]: ts 1.000000, dur -4.000000 is not a span"),
            std::string::npos)
      << negative;
  std::vector<std::string> bad{event("user_annotation", "ProfilerStep#1", 0, 10)};
  for (int i = 0; i < 25; ++i) bad.push_back(event("cpu_op", "aten::mm", 1, -1));
  const std::string many = text_of(trace_of(bad));
  EXPECT_NE(many.find("traceEvents[20]"), std::string::npos) << many;
  EXPECT_EQ(many.find("traceEvents[21]"), std::string::npos) << many;
  EXPECT_NE(many.find("and 5 more events that are not spans"), std::string::npos) << many;
  EXPECT_NE(text_of(R"({"traceEvents":[{"ph":"X",)").find("t.json:1:"), std::string::npos);
  EXPECT_NE(text_of(R"({"other":1})").find("no 'traceEvents' array"), std::string::npos);
  // 100,000 levels of nesting, read or skipped: refused at the level too
  // many, never a stack overflow.
  std::string nested(100'000, '[');
  nested += std::string(100'000, ']');
  const std::string deep_args =
      text_of(R"({"traceEvents":[{"ph":"X","name":"ProfilerStep#1","ts":0,"dur":1,"args":)" + nested + "}]}");
  EXPECT_NE(deep_args.find("t.json:1:"), std::string::npos) << deep_args;
  EXPECT_NE(deep_args.find("nested deeper than 64 levels"), std::string::npos) << deep_args;
  const std::string deep_name = text_of(R"({"traceEvents":[{"ph":"X","name":)" + nested + "}]}");
  EXPECT_NE(deep_name.find("t.json:1:"), std::string::npos) << deep_name;
}

TEST(KinetoTrace, OnlyProfilerTracesLookLikeKineto) {
  EXPECT_TRUE(looks_like_kineto(R"({"schemaVersion":1,"traceEvents":[]})"));
  EXPECT_FALSE(looks_like_kineto(R"({"otherData":{"format":"stowage/trace/v1"},"traceEvents":[]})"));
}

// The committed trace of a real DeepSpeed ZeRO-Offload run on the CPU
// accelerator (tests/data/kineto/README.md): two steps of 1.037 and 1.077 s,
// one DeepSpeedCPUAdam step in each, and compute covering most of a step.
// The same kind of run on a GPU (tests/data/kineto/README.md): DeepSpeed's
// ZeRO-Offload of tiny-gpt on an H200, 2 profiled steps of 64.3 and 62.7 ms,
// each mirrored on the GPU's streams (gpu_user_annotation) as well.
TEST(KinetoTrace, ARealGpuTraceOfDeepSpeedOnAnH200ReadsAsRecorded) {
  auto t = load_kineto_trace(STOWAGE_TEST_DATA_DIR "/kineto/deepspeed-zero-offload-h200.json");
  ASSERT_TRUE(t) << core::to_string(t.error());
  EXPECT_TRUE(t->has_kernels);
  EXPECT_EQ(t->devices, std::vector<std::string>{"NVIDIA H200"});
  ASSERT_EQ(t->step_times.size(), 2u);
  EXPECT_NEAR(static_cast<double>(t->step_times[0]) * 1e-9, 0.064297, 1e-6);
  EXPECT_NEAR(static_cast<double>(t->step_times[1]) * 1e-9, 0.062670, 1e-6);
  EXPECT_EQ(t->events_per_lane[static_cast<size_t>(Lane::kCpuOptim)], 2);
  EXPECT_GT(t->events_per_lane[static_cast<size_t>(Lane::kGpuCompute)], 2000);
  EXPECT_GT(t->events_per_lane[static_cast<size_t>(Lane::kPcieH2d)], 0);
  EXPECT_GT(t->events_per_lane[static_cast<size_t>(Lane::kPcieD2h)], 0);
  const TraceMetrics m = kineto_metrics(*t);
  // A small model on a big GPU: the step is the host's, the GPU mostly idle,
  // and most of each step is in no lane at all.
  EXPECT_LT(busy_per_step(m, Lane::kGpuCompute), 0.1 * static_cast<double>(m.steady_step_time()));
  EXPECT_GT(no_lane_per_step(m), 0.8 * static_cast<double>(m.steady_step_time()));
  const LaneComparison self = compare_lanes(m, m);
  EXPECT_EQ(self.step_error, 0);
  EXPECT_FALSE(self.most_wrong_lane);
}

TEST(KinetoTrace, ARealDeepSpeedZeroOffloadTraceReadsAsRecorded) {
  auto t = load_kineto_trace(STOWAGE_TEST_DATA_DIR "/kineto/deepspeed-zero-offload-cpu.json");
  ASSERT_TRUE(t) << core::to_string(t.error());
  EXPECT_FALSE(t->has_kernels);
  EXPECT_TRUE(t->devices.empty());  // "deviceProperties": []
  ASSERT_EQ(t->step_times.size(), 2u);
  EXPECT_NEAR(static_cast<double>(t->step_times[0]) * 1e-9, 1.037044, 1e-6);
  EXPECT_NEAR(static_cast<double>(t->step_times[1]) * 1e-9, 1.076856, 1e-6);
  EXPECT_EQ(t->events_per_lane[static_cast<size_t>(Lane::kCpuOptim)], 2);
  const TraceMetrics m = kineto_metrics(*t);
  const double compute = busy_per_step(m, Lane::kGpuCompute),
               step = static_cast<double>(m.steady_step_time());
  EXPECT_GT(compute, 0.8 * step);
  EXPECT_LT(compute, step);
  // Against itself, lane by lane: no error anywhere.
  const LaneComparison self = compare_lanes(m, m);
  EXPECT_EQ(self.step_error, 0);
  EXPECT_FALSE(self.most_wrong_lane);
}

}  // namespace
}  // namespace stowage::calibration
