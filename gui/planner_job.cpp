// Mirrors what `stowage plan` does (cli/plan_command.cpp, cli/plan_report.cpp)
// without depending on cli/: the GUI sits beside the command, not above it.
#include "gui/planner_job.h"

#include <algorithm>

#include "core/lower.h"
#include "gui/trace_from_timeline.h"
#include "sim/simulator.h"

namespace stowage::gui {
namespace {

// The drive the advice suggests when a machine has none: the one `stowage
// plan` suggests (cli/plan_report.cpp).
constexpr const char* kSpareDrive = "samsung-990-pro-4tb";

struct Inputs {
  core::MachineSpec machine;
  core::ModelSpec model;
  core::TrainingSpec training;
};

// `plan`: the plan file naming the profiles, if any: a name no profile has
// is then reported at the plan's line.
core::Result<Inputs> load_inputs(const core::ProfileCatalog& catalog, const std::string& machine,
                                 const std::string& model, const std::string& training,
                                 const core::PlanPlaces* plan = nullptr) {
  auto m = catalog.machine(machine);
  auto x = catalog.model(model);
  auto t = catalog.training(training);
  core::Diagnostics problems;
  for (auto [d, field] : {std::pair{m ? nullptr : &m.error(), "machine"}, std::pair{x ? nullptr : &x.error(), "model"},
                          std::pair{t ? nullptr : &t.error(), "training"}}) {
    if (d == nullptr) continue;
    if (plan != nullptr) core::locate_reference_problems(*d, field, *plan);
    problems.insert(problems.end(), d->begin(), d->end());
  }
  if (!problems.empty()) return std::unexpected(std::move(problems));
  return Inputs{.machine = std::move(*m), .model = std::move(*x), .training = std::move(*t)};
}

core::Result<TraceModel> simulate_policy(const core::Policy& policy, const Inputs& in,
                                         const core::TrainingSpec& training, const std::string& what) {
  const core::Workload workload(in.model, training.sequence_length);
  auto schedule =
      core::lower(policy, in.machine, workload, training, {.steps = core::steady_state_steps(policy)});
  if (!schedule) return std::unexpected(schedule.error());
  const sim::Prediction p = sim::simulate(*schedule, in.machine);
  return trace_from_timeline(
      *schedule, p.timeline,
      sim::predicted_trace_options(p.summary, "predicted: " + in.model.name + " on " + in.machine.name + ", " + what));
}

core::PlanFile plan_file_of(const PlannerRequest& r, const Inputs& in, const planner::Evaluation& chosen) {
  const sim::Summary& s = *chosen.summary;
  core::PredictedFigures f{.step_time = s.step_time,
                           .tokens_per_second = s.tokens_per_second,
                           .model_tflops_per_gpu = s.model_flops_per_second_per_gpu / 1e12,
                           .bounding_lane = std::string(core::to_string(s.bounding_lane))};
  for (const core::Tier t : core::kAllTiers) {
    f.peak_memory[static_cast<size_t>(t)] =
        s.peak_memory[static_cast<size_t>(t)] * core::ranks_in_scope(t, in.machine.gpu_count);
  }
  return {.machine = r.machine,
          .model = r.model,
          .training = r.training,
          .policy = chosen.candidate.policy,
          .predicted = f};
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
  auto in = load_inputs(catalog, request.machine, request.model, request.training);
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
    out.plan = plan_file_of(request, *in, best);
    auto timeline = simulate_policy(best.candidate.policy, *in, best.candidate.training, best.candidate.name);
    if (!timeline) return std::unexpected(timeline.error());
    out.timeline = std::move(*timeline);
  } else if (auto spare = catalog.nvme(kSpareDrive)) {
    out.advice = planner::advise(in->machine, in->model, in->training, out.result, *spare);
  }
  progress({.stage = PlannerStage::kDone});
  return out;
}

core::Result<TraceModel> simulate_plan(const core::PlanFile& plan, const core::ProfileCatalog& catalog) {
  auto in = load_inputs(catalog, plan.machine, plan.model, plan.training, &plan.places);
  if (!in) return std::unexpected(in.error());
  auto model = simulate_policy(plan.policy, *in, in->training, "plan");
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
