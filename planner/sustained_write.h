// The write rate an NVMe drive keeps once its write cache is full. Offload
// writes hundreds of GB per step, far past any SLC cache, so the simulator
// uses this rate for writes; where a drive's profile does not give it, the
// commands assume a stated conservative share of the burst rate and warn,
// rather than simulating 100+ GB of writes at the burst rate (issue 11).
#pragma once

#include <optional>
#include <string>

#include "core/machine_spec.h"

namespace stowage::planner {

// The post-cache rate assumed where it is unknown, as a share of
// sequential_write. Conservative: below the one bundled drive that publishes
// both (Samsung 980 PRO 2 TB: 1750 of 5100 MB/s after its TurboWrite buffer,
// 34 %); an enterprise drive rated at steady state is undersold by it, a
// QLC drive may be slower still.
inline constexpr double kAssumedSustainedWriteShare = 0.25;

// Sets machine.nvme.sustained_write to kAssumedSustainedWriteShare of
// sequential_write where the drive's profile leaves it out, and returns the
// warning that says so; nothing when the rate is known or there are no
// drives.
std::optional<std::string> assume_sustained_write(core::MachineSpec& machine);

}  // namespace stowage::planner
