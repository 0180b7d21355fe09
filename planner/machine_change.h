// What-if changes to a machine: more NVMe drives, a faster PCIe generation,
// more RAM, another GPU. The planner re-plans on the changed machine.
#pragma once

#include <optional>
#include <string>

#include "core/machine_spec.h"

namespace stowage::planner {

struct MachineChange {
  int add_nvme = 0;                       // drives of the machine's model (or the spare) to add
  std::optional<int> pcie_generation;     // GPU and host links run at this generation
  std::optional<core::Bytes> ram;         // host DRAM becomes this much
  std::optional<core::GpuSpec> gpu;       // every GPU becomes this one
};

// `spare_drive` is used when the machine has no drives to copy.
core::MachineSpec apply(const core::MachineSpec& machine, const MachineChange& change, const core::NvmeSpec& spare_drive);

// "add 2 NVMe drives, PCIe Gen5, 512 GiB RAM" - for headings.
std::string describe(const MachineChange& change);

}  // namespace stowage::planner
