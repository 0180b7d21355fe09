// The machine, model and training profiles a command works on, loaded
// together so that every problem in any of them is reported at once.
#pragma once

#include <string>

#include "core/diagnostic.h"
#include "core/profile_catalog.h"

namespace stowage::cli {

struct ProfileInputs {
  core::MachineSpec machine;
  core::ModelSpec model;
  core::TrainingSpec training;
  std::string machine_name, model_name, training_name;  // as given: a profile name or a path
};

core::Result<ProfileInputs> load_inputs(const core::ProfileCatalog& catalog, const std::string& machine,
                                        const std::string& model, const std::string& training);

}  // namespace stowage::cli
