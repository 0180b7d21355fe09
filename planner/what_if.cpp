#include "planner/what_if.h"

namespace stowage::planner {

const Evaluation* WhatIf::changed() const {
  const Evaluation* best = replanned.best ? &*replanned.best : nullptr;
  if (same_plan.fits() && (best == nullptr || same_plan.step_seconds() < best->step_seconds()))
    return &same_plan;
  return best;
}

WhatIf what_if(const core::Policy& plan, const ProfileInputs& inputs,
               const core::MachineSpec& changed_machine) {
  const Candidate candidate = candidate_of(plan, inputs.training);
  SearchOptions options;
  if (plan.optimizer_state_precision == core::StatePrecision::kBf16) {
    options.state_precisions = SearchOptions::StatePrecisions::kMayUseBf16;
  }
  return {.as_it_is = evaluate(candidate, inputs.machine, inputs.model),
          .same_plan = evaluate(candidate, changed_machine, inputs.model),
          .replanned = search(changed_machine, inputs.model, inputs.training, options)};
}

}  // namespace stowage::planner
