// NVMe wear: how much a plan writes to the drives per step, and at the
// predicted step rate, how many days until they reach their rated
// endurance (TBW). Offload can wear consumer drives out in weeks.
#pragma once

#include <optional>

#include "core/machine_spec.h"
#include "core/units.h"

namespace stowage::planner {

struct NvmeWear {
  core::Bytes written_per_step;         // all drives together
  std::optional<double> days_to_rated;  // absent when nothing is written
};

// Writes are striped evenly, so the drives reach their rating together:
// days = drives x TBW / (bytes per step x steps per day).
NvmeWear nvme_wear(core::Bytes written_per_step, core::Seconds step_time, const core::MachineSpec& machine);

}  // namespace stowage::planner
