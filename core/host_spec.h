// The host a GPU sits in: CPU cores, DRAM size and bandwidth, PCIe lanes.
// Loaded from profiles/hosts/*.yaml.
#pragma once

#include <string>

#include "core/units.h"

namespace stowage::core {

struct HostSpec {
  std::string name;    // "desktop-ddr5-128gb"
  std::string label;   // "Desktop, 16-core, 128 GB DDR5-4800 dual channel"
  std::string source;
  int cpu_cores = 0;                 // physical cores available to training
  int sockets = 1;
  Bytes dram;                        // installed DRAM, e.g. 128 GiB
  BytesPerSecond dram_bandwidth;     // theoretical peak, e.g. 76.8 GB/s
  int pcie_lanes = 0;                // CPU PCIe lanes
  int pcie_generation = 4;
};

}  // namespace stowage::core
