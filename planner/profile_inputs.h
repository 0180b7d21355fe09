// The machine, model and training profiles a command works on, loaded
// together so that every problem in any of them is reported at once, and
// checked against each other: a training precision the machine's GPU cannot
// run is refused, and what a profile leaves unsaid that the simulator needs
// is filled in with a stated assumption and a warning (nothing silent).
// Every command and the GUI's planner load them here, so that the same
// names give the same inputs, assumptions and refusals wherever they are
// planned or simulated.
#pragma once

#include <optional>
#include <string>

#include "core/diagnostic.h"
#include "core/plan_file.h"
#include "core/profile_catalog.h"

namespace stowage::planner {

struct ProfileInputs {
  core::MachineSpec machine;
  core::ModelSpec model;
  core::TrainingSpec training;
  std::string machine_name, model_name, training_name;  // as given: a profile name or a path
  // Set when the machine's drives give no post-cache write rate and one was
  // assumed (assume_sustained_write): the warning for commands to
  // print ("warning: ...") and list in their JSON ("warnings") wherever a
  // figure they show depends on NVMe writes.
  std::optional<std::string> assumed_nvme_write;
};

// `plan`: where the names come from, when a plan file gives them, so that a
// name no profile has is reported at the plan's line (issue 12).
core::Result<ProfileInputs> load_inputs(const core::ProfileCatalog& catalog, const std::string& machine,
                                        const std::string& model, const std::string& training,
                                        const core::PlanPlaces* plan = nullptr);

// bf16 needs an Ampere or later GPU. Accepted on a V100 or T4 it was costed
// at the fp16 rate and exported as bf16, a run that cannot start (issue 11):
// load_inputs refuses it, at the training profile's `precision`, naming an
// fp16 training profile of `catalog`; whatif asks it again of a changed GPU.
[[nodiscard]] std::optional<core::Diagnostic> unsupported_precision(const core::ProfileCatalog& catalog,
                                                                    const ProfileInputs& inputs);

// The inputs of a search, with the drive its advice may suggest.
struct PlanInputs : ProfileInputs {
  // Suggested when a machine has no NVMe: the bundled 4 TB 990 PRO, or else
  // the largest drive of the profiles folder; none when it has no drives.
  std::optional<core::NvmeSpec> spare_drive;
};

core::Result<PlanInputs> load_plan_inputs(const core::ProfileCatalog& catalog, const std::string& machine,
                                          const std::string& model, const std::string& training,
                                          const core::PlanPlaces* plan = nullptr);

}  // namespace stowage::planner
