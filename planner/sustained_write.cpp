#include "planner/sustained_write.h"

#include <cstdio>

namespace stowage::planner {

std::optional<std::string> assume_sustained_write(core::MachineSpec& machine) {
  core::NvmeSpec& drive = machine.nvme;
  if (machine.nvme_count == 0 || drive.sustained_write) return std::nullopt;
  const core::BytesPerSecond assumed(drive.sequential_write.value() * kAssumedSustainedWriteShare);
  drive.sustained_write = assumed;
  char share[16];
  std::snprintf(share, sizeof share, "%.0f%%", kAssumedSustainedWriteShare * 100);
  return drive.label + " (" + drive.name + ") gives no write rate for after its write cache fills; assumed " +
         core::format_bandwidth(assumed) + ", " + share + " of its " +
         core::format_bandwidth(drive.sequential_write) +
         " burst rate (set sustained_write in its profile to use the real figure)";
}

}  // namespace stowage::planner
