// Turns what `stowage profile` measured into a machine profile
// (stowage/machine/v1) with its parts inline: the device - the CPU
// backend's (host memory under a cap, the executor's sgemm rate), or a GPU
// named by its bundled profile - the host (cores, DRAM, the Adam-pattern
// bandwidth), the disk when one was measured, and a `calibration:` section
// with the measured rates and fixed costs. Every measurement is listed in
// comments, so the file says where each number comes from.
#pragma once

#include <optional>
#include <string>

#include "core/cost_parameters.h"
#include "core/gpu_spec.h"
#include "probe/measurements.h"

namespace stowage::probe {

struct ProfileWriterOptions {
  std::string name;          // written into label
  int64_t device_memory = 0;  // the CPU backend's capped arena; 0: half the DRAM
  int optimizer_threads = 1;  // the executor's --threads the profile is for
  bool quick = false;         // measured with --quick (said in `source`)
  // A bundled GPU profile: the profile's device is that GPU, named (`gpu:
  // h200`), not the CPU backend's; the host's PCIe link is the GPU's. Where
  // the measurements hold that GPU's (Measurements::gpu), its calibration
  // is theirs (probe/gpu_calibration.h), else its defaults.
  std::optional<core::GpuSpec> gpu;
};

// What the host and the disk measured imply whatever the device: the CPU
// Adam's rate at the optimizer's threads, DRAM and NVMe measured (their
// efficiencies 1), the drive's latency and duplex. Everything of the
// device at its default: a GPU's datasheet figures times the usual
// efficiencies.
[[nodiscard]] core::CostParameters host_calibration(const Measurements& m, const ProfileWriterOptions& o);

// host_calibration, and the CPU backend's device as measured (its blocks'
// rates, its copies, its gradient check, the host's cores as its lanes').
[[nodiscard]] core::CostParameters measured_calibration(const Measurements& m, const ProfileWriterOptions& o);

[[nodiscard]] std::string machine_profile_yaml(const Measurements& m, const ProfileWriterOptions& o);

}  // namespace stowage::probe
