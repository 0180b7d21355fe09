// Page-locked host memory cannot be paged out: a plan that pins nearly all
// of host RAM leaves the OS, the data loader and the page cache squeezed
// into the rest, and a little growth anywhere ends in the OOM killer. The
// commands warn past a threshold rather than say nothing (issue 11).
#pragma once

#include <optional>
#include <string>

#include "core/machine_spec.h"
#include "core/policy.h"
#include "core/units.h"

namespace stowage::planner {

// Share of host DRAM past which pinned memory is a warning.
inline constexpr double kPinnedWarningShare = 0.9;

// `cpu_peak` is the CPU tier's simulated peak for the whole machine, which
// includes the fixed host reserve (core::RuntimeBuffers; not pinned). The
// rest is pinned when the policy pins host buffers. Returns the warning when
// that exceeds kPinnedWarningShare of host DRAM and still fits.
std::optional<std::string> pinned_memory_warning(core::Bytes cpu_peak, const core::MachineSpec& machine,
                                                 const core::Policy& policy);

}  // namespace stowage::planner
