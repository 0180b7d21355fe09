#include "core/trace_origin.h"

#include <algorithm>

namespace stowage::core {
namespace {

// A run of Stowage's executor, by its --backend ("cpu", "cuda"); else
// another program's trace (a PyTorch profiler's).
bool of_the_executor(const TraceOrigin& origin) {
  return origin.backend == "cpu" || origin.backend == "cuda";
}

}  // namespace

TraceOrigin predicted_on(const MachineSpec& machine) {
  return {.machine = machine.name, .gpu = machine.gpu.label, .device_names = machine.gpu.device_names};
}

TraceOrigin measured_on(std::string backend, std::string device) {
  return {.backend = std::move(backend), .device = std::move(device)};
}

std::string describe(const TraceOrigin& origin) {
  if (!origin.machine.empty()) return origin.machine + (origin.gpu.empty() ? "" : ", GPU " + origin.gpu);
  if (!origin.backend.empty()) {
    // The executor's backends by their flag ("cuda backend"); another
    // program's trace by its own name ("PyTorch profiler").
    return (origin.device.empty() ? "an unnamed device" : origin.device) + " (" + origin.backend +
           (of_the_executor(origin) ? " backend)" : ")");
  }
  return "";
}

std::vector<std::string> comparison_origins(const TraceOrigin& predicted, const TraceOrigin& measured) {
  std::vector<std::string> lines;
  if (!predicted.empty()) lines.push_back("Predicted for " + describe(predicted));
  if (!measured.empty()) lines.push_back("Measured on " + describe(measured));
  return lines;
}

SameDevice same_device(const TraceOrigin& predicted, const TraceOrigin& measured) {
  if (predicted.device_names.empty() || measured.device.empty()) return SameDevice::kUnknown;
  return std::ranges::find(predicted.device_names, measured.device) != predicted.device_names.end()
             ? SameDevice::kYes
             : SameDevice::kNo;
}

std::optional<std::string> machine_difference(const TraceOrigin& predicted, const TraceOrigin& measured) {
  if (same_device(predicted, measured) != SameDevice::kNo) return std::nullopt;
  const std::string what = "the run was not on the prediction's GPU (" + predicted.gpu +
                           "): the errors are mostly the difference between the two machines. To see the "
                           "simulator's error, ";
  // Another program's trace has no Stowage ops to simulate anew.
  if (!of_the_executor(measured)) {
    return what +
           "predict that run's placement for the machine it ran on (stowage simulate --machine M --model X "
           "--placement P --trace PREDICTED.json, with M that machine's profile) and compare with that";
  }
  return what +
         "predict the same ops for the machine the run was on: stowage compare --machine M MEASURED.json, "
         "with M that machine's profile (stowage profile -o M measures it)";
}

}  // namespace stowage::core
