// What Stowage says of a plan beside its prediction, for whoever shows it:
// the warnings of a search's result or of one simulation, and the figures
// and plan file it records. `stowage plan`, `simulate`, `run`, `compare`,
// `whatif` and the GUI say the same of the same plan because they take it
// from here (tests/gui/planner_matches_plan_command_test.cpp and
// opened_plan_matches_simulate_test.cpp hold the GUI to the commands).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/plan_file.h"
#include "core/schedule.h"
#include "planner/profile_inputs.h"
#include "planner/search.h"

namespace stowage::planner {

// The inputs' warnings (an assumed NVMe write rate) and those about the
// chosen plan (host RAM pinned past kPinnedWarningShare), each a sentence
// without the "warning: " the command prints before it.
std::vector<std::string> plan_warnings(const ProfileInputs& inputs, const PlanResult& result);

// The warnings of one plan simulated on its own (`stowage simulate`, the
// trace of `stowage plan --trace`, a plan planned or opened in the GUI),
// which its predicted trace carries (core::TraceOptions::warnings): the
// NVMe write rate assumed, where the schedule writes to NVMe, and host RAM
// pinned past kPinnedWarningShare at the simulated peak.
std::vector<std::string> simulation_warnings(const ProfileInputs& inputs, const core::Policy& policy,
                                             const core::Schedule& schedule, const sim::Summary& summary);

// Where a plan file records a step time other than the one simulated `now`
// (it was written by a Stowage whose cost model has since changed), a
// sentence naming both; nothing where they agree or it records none.
std::optional<std::string> recorded_step_note(const std::optional<core::PredictedFigures>& recorded,
                                              const sim::Summary& now);

// What a predicted trace carries (core::TraceOptions::warnings) when it is
// the simulation of a plan that records `recorded`: simulation_warnings,
// then recorded_step_note. A plan opened in the GUI shows them above its
// timeline; `stowage simulate PLAN --trace` writes the same.
std::vector<std::string> predicted_trace_warnings(const ProfileInputs& inputs, const core::Policy& policy,
                                                  const core::Schedule& schedule, const sim::Summary& summary,
                                                  const std::optional<core::PredictedFigures>& recorded);

// The same of an evaluated candidate, from what its evaluation kept (the
// bytes it writes to NVMe per step, its simulated host peak): `stowage
// export`'s figures of a plan and of what DeepSpeed runs for it.
std::vector<std::string> evaluation_warnings(const ProfileInputs& inputs, const Evaluation& evaluation);

// The assumed-rate warning alone: `assumed_nvme_write`
// (assume_sustained_write's warning) where `schedule` writes to NVMe. All a trace's re-simulation
// can say (`stowage compare --machine`: a trace has no policy or memory).
std::optional<std::string> write_rate_warning(const std::optional<std::string>& assumed_nvme_write,
                                              const core::Schedule& schedule);

// A simulation's figures as a plan file records them: peaks per GPU for
// the GPU tier, for all `ranks` together for the others (core::ranks_in_scope).
core::PredictedFigures predicted_figures(const sim::Summary& summary, int ranks);

// The chosen plan as a plan file: the profiles as `inputs` named them, its
// policy, and its predicted figures.
core::PlanFile to_plan_file(const ProfileInputs& inputs, const Evaluation& chosen);

}  // namespace stowage::planner
