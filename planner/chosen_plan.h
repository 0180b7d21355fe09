// What follows from a search's result and its inputs alone, for whoever
// shows it: the warnings to print beside it and the plan file it records.
// `stowage plan`, `stowage whatif` and the GUI's planner panel all say the
// same of the same plan because they take it from here.
#pragma once

#include <string>
#include <vector>

#include "core/plan_file.h"
#include "planner/profile_inputs.h"
#include "planner/search.h"

namespace stowage::planner {

// The inputs' warnings (an assumed NVMe write rate) and those about the
// chosen plan (host RAM pinned past kPinnedWarningShare), each a sentence
// without the "warning: " the command prints before it.
std::vector<std::string> plan_warnings(const ProfileInputs& inputs, const PlanResult& result);

// The chosen plan as a plan file: the profiles as `inputs` named them, its
// policy, and its predicted figures (peaks per GPU for the GPU tier, for
// the whole machine for the others, as core::ranks_in_scope counts them).
core::PlanFile to_plan_file(const ProfileInputs& inputs, const Evaluation& chosen);

}  // namespace stowage::planner
