// When nothing fits: which tier overflows, and the smallest changes that
// would make a plan fit (more CPU RAM, an NVMe drive of some size, a smaller
// micro-batch, activation checkpointing), each re-planned for its step time.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/machine_spec.h"
#include "core/model_spec.h"
#include "core/training_spec.h"
#include "planner/search.h"

namespace stowage::planner {

struct Advice {
  std::string change;                  // "add 96 GiB of CPU RAM (to 224 GiB)"
  std::optional<double> step_seconds;  // the re-planned step time; absent if it still does not fit
  std::string still;                   // when it still does not fit: what then overflows
};

// The re-planned changes as `stowage plan` and the GUI's planner panel say
// them: those that fit (with their step time) apart from those that do not
// (with what still overflows), one "  - change: ..." line each, starting
// with a blank line.
[[nodiscard]] std::string advice_text(const std::vector<Advice>& advice);

// The candidate that came closest to fitting: the smallest overflow
// relative to the tier's capacity, simulated or by the memory model's floor.
// Null when some candidate fits.
const Evaluation* closest(const PlanResult& result);

// `spare_drive` is the drive to suggest when the machine has none; without
// one, adding a drive is not suggested.
std::vector<Advice> advise(const core::MachineSpec& machine, const core::ModelSpec& model,
                           const core::TrainingSpec& training, const PlanResult& result,
                           const std::optional<core::NvmeSpec>& spare_drive);

}  // namespace stowage::planner
