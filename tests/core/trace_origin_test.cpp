#include "core/trace_origin.h"

#include <gtest/gtest.h>

#include <sstream>

#include "core/chrome_trace.h"
#include "core/trace_reader.h"
#include "tests/core/test_profiles.h"

namespace stowage::core {
namespace {

using testing::bundled;
using testing::must;

// A CUDA run is of its prediction's GPU when the driver's name is one the
// GPU's profile lists; a CPU-backend run never is of a bundled GPU.
TEST(TraceOrigin, AMeasuredDeviceIsThePredictionsGpuOnlyWhenItsProfileNamesIt) {
  const TraceOrigin rtx4090 = predicted_on(must(bundled().machine("workstation-24gb-1nvme")));
  ASSERT_EQ(rtx4090.device_names, std::vector<std::string>{"NVIDIA GeForce RTX 4090"});
  EXPECT_EQ(same_device(rtx4090, measured_on("cuda", "NVIDIA GeForce RTX 4090")), SameDevice::kYes);
  EXPECT_EQ(same_device(rtx4090, measured_on("cuda", "NVIDIA H200")), SameDevice::kNo);
  EXPECT_EQ(same_device(rtx4090, measured_on("cpu", std::string(kCpuBackendDeviceName))), SameDevice::kNo);
  EXPECT_FALSE(machine_difference(rtx4090, measured_on("cuda", "NVIDIA GeForce RTX 4090")).has_value());
  const std::optional<std::string> note =
      machine_difference(rtx4090, measured_on("cpu", "Stowage CPU backend"));
  ASSERT_TRUE(note.has_value());
  EXPECT_NE(note->find("(NVIDIA GeForce RTX 4090 24GB)"), std::string::npos) << *note;
  EXPECT_NE(note->find("stowage compare --machine M MEASURED.json"), std::string::npos) << *note;
}

// Nothing is claimed where a trace does not say: a profile naming no
// device, a trace from before these fields, a run naming no device.
TEST(TraceOrigin, WhereEitherSideDoesNotSayNothingIsClaimed) {
  MachineSpec unnamed = must(bundled().machine("workstation-24gb-1nvme"));
  unnamed.gpu.device_names.clear();
  const TraceOrigin cpu = measured_on("cpu", std::string(kCpuBackendDeviceName));
  EXPECT_EQ(same_device(predicted_on(unnamed), cpu), SameDevice::kUnknown);
  EXPECT_EQ(same_device(TraceOrigin{}, cpu), SameDevice::kUnknown);
  EXPECT_EQ(same_device(predicted_on(must(bundled().machine("h100-node"))), TraceOrigin{}),
            SameDevice::kUnknown);
  EXPECT_EQ(same_device(predicted_on(must(bundled().machine("h100-node"))), measured_on("cuda", "")),
            SameDevice::kUnknown);
  EXPECT_FALSE(machine_difference(predicted_on(unnamed), cpu).has_value());
}

TEST(TraceOrigin, DescribesEachSideInItsOwnWords) {
  EXPECT_EQ(describe(predicted_on(must(bundled().machine("workstation-24gb-1nvme")))),
            "workstation-24gb-1nvme, GPU NVIDIA GeForce RTX 4090 24GB");
  EXPECT_EQ(describe(measured_on("cuda", "NVIDIA H200")), "NVIDIA H200 (cuda backend)");
  EXPECT_EQ(describe(measured_on("cpu", "")), "an unnamed device (cpu backend)");
  // Another program's trace by that program's name (a PyTorch profiler's:
  // calibration/kineto_trace.h).
  EXPECT_EQ(describe(measured_on("PyTorch profiler", "NVIDIA H200")), "NVIDIA H200 (PyTorch profiler)");
  EXPECT_EQ(describe(TraceOrigin{}), "");
}

// A run recorded by another program on another GPU is a machines'
// difference too, but its trace has no Stowage ops to re-simulate: the
// note says to predict its placement for that machine instead.
TEST(TraceOrigin, AnotherProgramsRunOnAnotherGpuIsToBePredictedForItsMachine) {
  const TraceOrigin rtx4090 = predicted_on(must(bundled().machine("workstation-24gb-1nvme")));
  const std::optional<std::string> note =
      machine_difference(rtx4090, measured_on("PyTorch profiler", "NVIDIA H200"));
  ASSERT_TRUE(note.has_value());
  EXPECT_NE(note->find("(NVIDIA GeForce RTX 4090 24GB): the errors are mostly"), std::string::npos) << *note;
  EXPECT_NE(note->find("stowage simulate --machine M --model X --placement P --trace PREDICTED.json"),
            std::string::npos)
      << *note;
  EXPECT_EQ(note->find("compare --machine"), std::string::npos) << *note;
  EXPECT_FALSE(machine_difference(rtx4090, measured_on("PyTorch profiler", "NVIDIA GeForce RTX 4090")));
}

// Written into otherData and read back as it was, escapes included; a
// trace written without it has none of its keys (older traces read alike).
TEST(TraceOrigin, TravelsInTheTraceAndComesBackAsWritten) {
  Schedule s;
  s.ops = {{.id = 0, .kind = OpKind::kForward, .lane = Lane::kGpuCompute, .name = "fwd", .layer = 0}};
  const Timeline t{.spans = {{0, 1000, 0}}, .memory = {}};
  const TraceOrigin predicted{
      .machine = "lab \"A\"", .gpu = "GPU\tone", .device_names = {"NVIDIA H200", "H\\2"}};
  const TraceOrigin measured = measured_on("cuda", "NVIDIA H200");
  for (const TraceOrigin& origin : {predicted, measured, TraceOrigin{}}) {
    std::ostringstream text;
    write_chrome_trace(s, t, {.title = "x", .source = "predicted", .origin = origin}, text);
    const RecordedTrace r = must(parse_recorded_trace(text.str(), "t.json"));
    EXPECT_EQ(r.origin, origin) << text.str();
    if (origin.empty()) {
      for (const char* key : {"\"machine\"", "\"gpu\"", "\"device_names\"", "\"backend\"", "\"device\""})
        EXPECT_EQ(text.str().find(key), std::string::npos) << key;
    }
  }
}

}  // namespace
}  // namespace stowage::core
