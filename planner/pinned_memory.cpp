#include "planner/pinned_memory.h"

#include <cstdio>

#include "core/memory_estimate.h"

namespace stowage::planner {

std::optional<std::string> pinned_memory_warning(core::Bytes cpu_peak, const core::MachineSpec& machine,
                                                 const core::Policy& policy) {
  if (!policy.pinned_memory) return std::nullopt;
  const core::Bytes dram = machine.host.dram;
  const core::Bytes pinned = cpu_peak - core::RuntimeBuffers{}.host_reserve;
  // Over capacity is an overflow, reported as such; this is for plans that fit.
  if (cpu_peak > dram || pinned.as_double() <= kPinnedWarningShare * dram.as_double()) return std::nullopt;
  char buf[200];
  std::snprintf(
      buf, sizeof buf,
      "the plan pins %s of %s of host RAM (%.0f%%, above %.0f%%): little is left for the OS, the data "
      "loader and the page cache",
      core::format_bytes(pinned).c_str(), core::format_bytes(dram).c_str(),
      100 * pinned.as_double() / dram.as_double(), 100 * kPinnedWarningShare);
  return buf;
}

}  // namespace stowage::planner
