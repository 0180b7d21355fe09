// Where a trace's times come from: the machine profile a prediction priced,
// or the backend and device a measurement ran on. A prediction for an RTX
// 4090 set beside a run on the CPU backend differs by the machines, not by
// the model's error; comparisons (`stowage compare`, the GUI, `stowage run`)
// say so with machine_difference instead of leaving the user to guess.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/machine_spec.h"

namespace stowage::core {

// The device name the executor's CPU backend gives itself, as the CUDA
// driver names a GPU: `stowage profile` lists it in the device_names of the
// machine profile it measures for the CPU backend, so a measured trace's
// device is found in its prediction's profile the same way on both backends.
inline constexpr std::string_view kCpuBackendDeviceName = "Stowage CPU backend";

struct TraceOrigin {
  // A predicted trace: the machine profile simulated ("workstation-24gb-1nvme"),
  // its GPU's label and the names the driver gives that GPU (GpuSpec::device_names;
  // empty when its profile lists none).
  std::string machine;
  std::string gpu;
  std::vector<std::string> device_names;
  // A measured trace: the executor's backend ("cpu" or "cuda"), or the
  // program that recorded it ("PyTorch profiler"), and the device it ran on
  // (a CUDA device's name, or kCpuBackendDeviceName).
  std::string backend;
  std::string device;

  [[nodiscard]] bool empty() const { return machine.empty() && backend.empty(); }
  friend bool operator==(const TraceOrigin&, const TraceOrigin&) = default;
};

[[nodiscard]] TraceOrigin predicted_on(const MachineSpec& machine);
[[nodiscard]] TraceOrigin measured_on(std::string backend, std::string device);

// "workstation-24gb-1nvme, GPU NVIDIA GeForce RTX 4090 24GB", "NVIDIA H200
// (cuda backend)", "NVIDIA H200 (PyTorch profiler)"; empty when the trace
// does not say.
[[nodiscard]] std::string describe(const TraceOrigin& origin);

// What each side of a comparison is of, a line each, where its trace says:
// "Predicted for <describe>", "Measured on <describe>" (no full stop).
[[nodiscard]] std::vector<std::string> comparison_origins(const TraceOrigin& predicted,
                                                          const TraceOrigin& measured);

// Whether the measured device is the predicted machine's GPU (among its
// device_names); kUnknown when either trace does not say (a trace from
// before these fields, a profile naming no device).
enum class SameDevice { kYes, kNo, kUnknown };
[[nodiscard]] SameDevice same_device(const TraceOrigin& predicted, const TraceOrigin& measured);

// A sentence saying what the difference means and what to do, when
// same_device is kNo; else nothing.
[[nodiscard]] std::optional<std::string> machine_difference(const TraceOrigin& predicted,
                                                            const TraceOrigin& measured);

}  // namespace stowage::core
