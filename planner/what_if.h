// `stowage whatif`: a plan on the machine it was made for, the same plan on
// a changed machine, and the planner's plan for the changed machine. The
// plan as it is comes from its file, not from planning again: a plan saved
// from a standard placement, for DeepSpeed, or by an older Stowage is
// compared as the user has it.
#pragma once

#include "core/policy.h"
#include "planner/profile_inputs.h"
#include "planner/search.h"

namespace stowage::planner {

struct WhatIf {
  Evaluation as_it_is;   // the plan on the machine it names
  Evaluation same_plan;  // the same plan on the changed machine
  PlanResult replanned;  // the planner's search on the changed machine

  // The changed machine's plan: the re-planned one, or the same plan where
  // that one is faster (a plan from outside the search's space, as a
  // hand-written one may be); null when neither fits.
  [[nodiscard]] const Evaluation* changed() const;
};

// `plan` is the plan file's policy for `inputs` (its machine, model and
// training). The search on `changed_machine` may keep Adam's moments in bf16
// only where the plan already does.
[[nodiscard]] WhatIf what_if(const core::Policy& plan, const ProfileInputs& inputs,
                             const core::MachineSpec& changed_machine);

}  // namespace stowage::planner
