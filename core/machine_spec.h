// A machine: a GPU model and count, a host, and NVMe drives with their count.
// A machine profile names its parts by profile name; the catalog resolves
// them (core/profile_catalog.h).
#pragma once

#include <string>

#include "core/cost_parameters.h"
#include "core/gpu_spec.h"
#include "core/host_spec.h"
#include "core/nvme_spec.h"

namespace stowage::core {

struct MachineSpec {
  std::string name;    // "workstation-24gb-1nvme"
  std::string label;
  std::string source;
  GpuSpec gpu;
  int gpu_count = 1;
  HostSpec host;
  NvmeSpec nvme;       // meaningful only when nvme_count > 0
  int nvme_count = 0;
  // The cost model's constants for this machine: the compiled defaults,
  // with whatever its profile's `calibration:` section sets.
  CostParameters calibration;

  [[nodiscard]] Bytes total_gpu_memory() const { return gpu.memory * gpu_count; }
  [[nodiscard]] Bytes total_nvme_capacity() const { return nvme.capacity * nvme_count; }
};

}  // namespace stowage::core
