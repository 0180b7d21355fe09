// Plans as `stowage plan` does (cli/plan_command.cpp) without depending on
// cli/: the GUI sits beside the command, not above it, and both take their
// inputs, warnings and plan file from planner/ (profile_inputs.h,
// chosen_plan.h), so the same names give the same plan.
#include "gui/planner_job.h"

#include <algorithm>

#include "core/lower.h"
#include "gui/trace_from_timeline.h"
#include "planner/chosen_plan.h"
#include "sim/simulator.h"

namespace stowage::gui {
namespace {

// `recorded`: the figures of the plan file it comes from, if it says.
core::Result<TraceModel> simulate_policy(const core::Policy& policy, const planner::ProfileInputs& in,
                                         const core::TrainingSpec& training, const std::string& what,
                                         const std::optional<core::PredictedFigures>& recorded) {
  const core::Workload workload(in.model, training.sequence_length);
  auto schedule =
      core::lower(policy, in.machine, workload, training, {.steps = core::steady_state_steps(policy)});
  if (!schedule) return std::unexpected(schedule.error());
  const sim::Prediction p = sim::simulate(*schedule, in.machine);
  core::TraceOptions options = sim::predicted_trace_options(
      p.summary, "predicted: " + in.model.name + " on " + in.machine.name + ", " + what, in.machine);
  options.warnings = planner::predicted_trace_warnings(in, policy, *schedule, p.summary, recorded);
  return trace_from_timeline(*schedule, p.timeline, options);
}

}  // namespace

std::string_view to_string(PlannerStage stage) {
  switch (stage) {
    case PlannerStage::kLoadingProfiles:
      return "loading profiles";
    case PlannerStage::kSearching:
      return "searching placements";
    case PlannerStage::kSimulating:
      return "simulating the chosen plan";
    case PlannerStage::kDone:
      return "done";
  }
  return "";
}

core::Result<PlannerOutcome> run_planner(const PlannerRequest& request, std::stop_token stop,
                                         const PlannerProgress& progress) {
  progress({.stage = PlannerStage::kLoadingProfiles});
  const core::ProfileCatalog catalog(request.profiles);
  auto in = planner::load_plan_inputs(catalog, request.machine, request.model, request.training);
  if (!in) return std::unexpected(in.error());
  if (stop.stop_requested()) return PlannerOutcome{.cancelled = true};
  progress({.stage = PlannerStage::kSearching});
  // stop_requested() reads an atomic: the GUI thread's cancel is seen before the next simulation.
  const planner::SearchOptions options{.progress = [&](int done, int most) {
    progress({.stage = PlannerStage::kSearching, .simulated = done, .most = most});
    return !stop.stop_requested();
  }};
  PlannerOutcome out{.result = planner::search(in->machine, in->model, in->training, options)};
  if (out.result.cancelled || stop.stop_requested()) {
    out.cancelled = true;
    return out;
  }
  if (out.result.best) {
    progress({.stage = PlannerStage::kSimulating});
    const planner::Evaluation& best = *out.result.best;
    out.plan = planner::to_plan_file(*in, best);
    auto timeline = simulate_policy(best.candidate.policy, *in, best.candidate.training, best.candidate.name,
                                    std::nullopt);
    if (!timeline) return std::unexpected(timeline.error());
    out.timeline = std::move(*timeline);
  } else {
    out.advice = planner::advise(in->machine, in->model, in->training, out.result, in->spare_drive);
  }
  out.warnings = planner::plan_warnings(*in, out.result);
  progress({.stage = PlannerStage::kDone});
  return out;
}

core::Result<TraceModel> simulate_plan(const core::PlanFile& plan, const core::ProfileCatalog& catalog) {
  auto in = planner::load_inputs(catalog, plan.machine, plan.model, plan.training, &plan.places);
  if (!in) return std::unexpected(in.error());
  auto model = simulate_policy(plan.policy, *in, in->training, "plan", plan.predicted);
  if (!model) {
    core::Diagnostics problems = model.error();
    core::locate_in_plan(problems, plan.places);  // the plan's field at fault, with its line
    return std::unexpected(std::move(problems));
  }
  return model;
}

std::array<std::optional<core::Bytes>, 3> capacity_of(const core::MachineSpec& machine) {
  const int ranks = std::max(machine.gpu_count, 1);
  const auto known = [](core::Bytes b) { return b.count() > 0 ? std::optional(b) : std::nullopt; };
  return {known(machine.gpu.memory), known(machine.host.dram / ranks),
          known(machine.total_nvme_capacity() / ranks)};
}

}  // namespace stowage::gui
