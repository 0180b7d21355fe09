// Turns what `stowage profile` measured into a machine profile
// (stowage/machine/v1) with its parts inline: the CPU backend's "device"
// (host memory under a cap, the executor's sgemm rate), the host (cores,
// DRAM, the Adam-pattern bandwidth), the disk when one was measured, and a
// `calibration:` section with the measured rates and fixed costs. Every
// measurement is listed in comments, so the file says where each number
// comes from.
#pragma once

#include <string>

#include "core/cost_parameters.h"
#include "probe/measurements.h"

namespace stowage::probe {

struct ProfileWriterOptions {
  std::string name;          // written into label
  int64_t device_memory = 0;  // the capped arena; 0: half the DRAM
  int optimizer_threads = 1;  // the executor's --threads the profile is for
  bool quick = false;         // measured with --quick (said in `source`)
};

// The calibration the measurements imply for the CPU backend.
[[nodiscard]] core::CostParameters measured_calibration(const Measurements& m, const ProfileWriterOptions& o);

[[nodiscard]] std::string machine_profile_yaml(const Measurements& m, const ProfileWriterOptions& o);

}  // namespace stowage::probe
