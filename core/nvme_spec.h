// An NVMe drive: capacity, sequential rates, the write rate once its SLC
// cache is full, and rated endurance. Loaded from profiles/nvme/*.yaml.
#pragma once

#include <optional>
#include <string>

#include "core/units.h"

namespace stowage::core {

struct NvmeSpec {
  std::string name;    // "samsung-990-pro-2tb"
  std::string label;   // "Samsung 990 PRO 2 TB"
  std::string source;
  Bytes capacity;                     // 2 TB
  BytesPerSecond sequential_read;     // 7450 MB/s
  BytesPerSecond sequential_write;    // 6900 MB/s (cache burst for consumer drives)
  std::optional<BytesPerSecond> sustained_write;  // after the write cache fills, where known
  Bytes endurance;                    // rated TBW, e.g. 1200 TB
  int pcie_generation = 4;
  int pcie_lanes = 4;
};

}  // namespace stowage::core
