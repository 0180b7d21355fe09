// `stowage simulate PLAN.yaml | --machine M --model X --placement P`:
// lowers the plan's policy, predicts the step and prints the summary;
// `--trace` writes the predicted timeline for Perfetto.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/output_file.h"
#include "cli/placement_option.h"
#include "cli/text_table.h"
#include "core/chrome_trace.h"
#include "core/lower.h"
#include "core/plan_file.h"
#include "planner/chosen_plan.h"
#include "planner/profile_inputs.h"
#include "sim/simulator.h"

namespace stowage::cli {
namespace {

using core::Tier;
using nlohmann::json;

struct SimulateArgs {
  std::string plan;
  std::string machine, model, training = "default", placement;
  std::string trace;
  std::string save_plan;
  int steps = 0;  // 0: enough for a steady state (core::steady_state_steps)
  bool as_json = false;
};

// Everything one simulation needs, loaded from a plan or from profiles.
struct Setup : planner::ProfileInputs {
  core::Policy policy;
  std::string what;                   // "zero-offload" or the plan's path
  std::vector<std::string> warnings;  // about this simulation (run_simulate)
  core::PlanPlaces places;            // of the plan file, when one was given
  std::optional<core::PredictedFigures> recorded;  // what the plan file says was predicted, if it says
};

core::Result<Setup> load_setup(const core::ProfileCatalog& catalog, const SimulateArgs& a) {
  std::string machine = a.machine, model = a.model, training = a.training;
  std::optional<core::PlanFile> plan;
  if (!a.plan.empty()) {
    auto p = core::load_plan(a.plan, catalog.root());
    if (!p) return std::unexpected(p.error());
    plan = std::move(*p);
    machine = plan->machine, model = plan->model, training = plan->training;
  }
  auto in = planner::load_inputs(catalog, machine, model, training, plan ? &plan->places : nullptr);
  if (!in) return std::unexpected(in.error());
  Setup s{std::move(*in)};
  const core::Workload workload(s.model, s.training.sequence_length);
  if (plan) {
    s.policy = plan->policy;
    s.places = plan->places;
    s.what = a.plan;
    s.recorded = plan->predicted;
  } else {
    if (auto p = core::placement_named(a.placement, s.machine.gpu_count)) s.policy = core::policy_for(*p, workload, s.training);
    s.what = a.placement;
  }
  return s;
}

std::string percent(double share) { return std::to_string(static_cast<int>(share * 100 + 0.5)) + "%"; }

void print_summary(std::ostream& out, const Setup& s, const core::Schedule& schedule, const sim::Prediction& p) {
  const sim::Summary& sum = p.summary;
  out << "Simulated " << s.model.label << " on " << s.machine.label << "\n  policy: " << s.what << " (ZeRO stage "
      << static_cast<int>(s.policy.stage) << (s.policy.delayed_update ? ", delayed update" : "") << "), "
      << schedule.steps << " steps of " << schedule.ops.size() / static_cast<size_t>(schedule.steps) << " ops\n\n";
  for (const std::string& w : s.warnings) out << "warning: " << w << '\n';
  const std::optional<std::string> stale = planner::recorded_step_note(s.recorded, p.summary);
  if (stale) out << "note: " << *stale << " (--save-plan writes the plan with today's figures)\n";
  if (!s.warnings.empty() || stale) out << '\n';
  TextTable t({Align::kLeft, Align::kLeft});
  if (sum.falls_behind) {
    const std::string lane(core::to_string(*sum.falls_behind));
    t.row({"step time", core::format_seconds(sum.step_time) + " (steady state: " + lane + "'s work per step)"});
    t.row({"", "the last steps measured " + core::format_seconds(sum.window_step_time) + ", but " + lane +
                   " falls further behind each step: a longer run waits on it"});
  } else {
    t.row({"step time", core::format_seconds(sum.step_time) +
                            (schedule.steps >= 2 ? " (steady state: last two steps)" : " (one step)")});
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f tokens/s", sum.tokens_per_second);
  t.row({"throughput", std::string(buf) + " (" + std::to_string(schedule.tokens_per_step) + " tokens per step)"});
  t.row({"model FLOP/s", core::format_flops_rate(core::FlopsPerSecond(sum.model_flops_per_second_per_gpu)) +
                             " per GPU (6·N·T / step time / GPUs)"});
  t.row({"exposed transfers", core::format_seconds(sum.exposed_transfer_time) + " (GPU waiting on data)"});
  t.row({"bounding lane", std::string(core::to_string(sum.bounding_lane))});
  std::string busy;
  for (core::Lane lane : core::kAllLanes) {
    const double b = sum.lane_busy[static_cast<size_t>(lane)];
    if (b > 0) busy += (busy.empty() ? "" : ", ") + std::string(core::to_string(lane)) + " " + percent(b);
  }
  t.row({"lane busy", busy});
  for (Tier tier : core::kAllTiers) {
    const size_t i = static_cast<size_t>(tier);
    const int scale = core::ranks_in_scope(tier, schedule.ranks);
    t.row({"peak " + std::string(core::to_string(tier)), core::format_bytes(sum.peak_memory[i] * scale) + " of " +
                                                          core::format_bytes(schedule.capacity[i] * scale) +
                                                          (tier == Tier::kGpu ? " per GPU" : " per machine")});
  }
  t.print(out, 2);
  if (const auto& o = p.engine.overflow) {
    out << "\n  OVERFLOW: " << core::to_string(o->tier) << " exceeds its capacity at "
        << core::format_seconds(core::Seconds(static_cast<double>(o->at) * 1e-9)) << " when '"
        << schedule.op(o->op).name << "' allocates (" << core::format_bytes(o->in_use) << " of "
        << core::format_bytes(o->capacity) << " per rank); largest holders:\n";
    for (size_t i = 0; i < o->holders.size() && i < 5; ++i) {
      out << "    " << core::format_bytes(o->holders[i].second) << "  " << o->holders[i].first << '\n';
    }
  }
  const auto& path = sum.critical_path;
  out << "\n  critical path: " << path.size() << " ops";
  for (size_t i = 0; i < path.size(); ++i) {
    if (i == 3 && path.size() > 8) {
      out << " ... ";
      i = path.size() - 4;
      continue;
    }
    out << (i == 0 ? ": " : " -> ") << schedule.op(path[i]).name;
  }
  out << '\n';
}

json summary_json(const Setup& setup, const core::Schedule& schedule, const sim::Prediction& p) {
  const sim::Summary& s = p.summary;
  json lanes = json::object(), peak = json::object(), path = json::array();
  for (core::Lane lane : core::kAllLanes) lanes[std::string(core::to_string(lane))] = s.lane_busy[static_cast<size_t>(lane)];
  for (Tier t : core::kAllTiers) {
    const int scale = core::ranks_in_scope(t, schedule.ranks);
    peak[std::string(core::to_string(t))] = {
        {"peak_bytes", (s.peak_memory[static_cast<size_t>(t)] * scale).count()},
        {"capacity_bytes", (schedule.capacity[static_cast<size_t>(t)] * scale).count()},
        {"scope", t == Tier::kGpu ? "per_gpu" : "per_machine"}};
  }
  for (core::OpId id : s.critical_path) path.push_back(schedule.op(id).name);
  json overflow = nullptr;
  if (const auto& o = p.engine.overflow) {
    overflow = {{"tier", core::to_string(o->tier)}, {"time_ns", o->at}, {"op", schedule.op(o->op).name},
                {"in_use_bytes", o->in_use.count()}, {"capacity_bytes", o->capacity.count()}};
  }
  return {{"step_time_s", s.step_time.value()},
          {"window_step_time_s", s.window_step_time.value()},
          {"falls_behind", s.falls_behind ? json(core::to_string(*s.falls_behind)) : json(nullptr)},
          {"tokens_per_second", s.tokens_per_second},
          {"model_flops_per_second_per_gpu", s.model_flops_per_second_per_gpu},
          {"exposed_transfer_time_s", s.exposed_transfer_time.value()},
          {"bounding_lane", core::to_string(s.bounding_lane)},
          {"lane_busy", lanes},
          {"memory", peak},
          {"overflow", overflow},
          {"critical_path", path},
          {"ops", schedule.ops.size()},
          {"steps", schedule.steps},
          {"warnings", setup.warnings},
          {"recorded_step_time_s", setup.recorded ? json(setup.recorded->step_time.value()) : json(nullptr)}};
}

int run_simulate(const Context& context, const SimulateArgs& a) {
  if (a.plan.empty() == (a.machine.empty() || a.model.empty() || a.placement.empty())) {
    *context.err << "error: give a plan file, or --machine, --model and --placement (not both)\n";
    return kExitUsage;
  }
  // Both outputs checked first, so a bad --save-plan does not leave a
  // trace written beside the error (issue 12).
  for (const std::string& path : {a.trace, a.save_plan}) {
    if (path.empty()) continue;
    if (auto checked = check_output_path(path); !checked) {
      report(context, checked.error());
      return kExitCannotWrite;
    }
  }
  auto setup = load_setup(context.catalog(), a);
  if (!setup) return report(context, setup.error());
  const core::Workload workload(setup->model, setup->training.sequence_length);
  const int steps = a.steps > 0 ? a.steps : core::steady_state_steps(setup->policy);
  auto schedule = core::lower(setup->policy, setup->machine, workload, setup->training, {.steps = steps});
  if (!schedule) {
    core::Diagnostics problems = schedule.error();
    core::locate_in_plan(problems, setup->places);  // a plan's field at fault gets its line and column
    return report(context, problems);
  }
  const sim::Prediction p = sim::simulate(*schedule, setup->machine);
  // What the text and JSON warn of; the trace carries the prediction's
  // (with the note of a stale record), not those about --save-plan's path.
  setup->warnings = planner::simulation_warnings(*setup, setup->policy, *schedule, p.summary);
  if (!a.save_plan.empty()) {  // a path the user gave that the saved plan may not lead to when read back
    const core::PlanFile named{
        .machine = setup->machine_name, .model = setup->model_name, .training = setup->training_name};
    for (std::string& w : core::references_refused_on_reading(
             core::with_references_relative_to(named, a.save_plan), a.save_plan, context.catalog().root())) {
      setup->warnings.push_back(std::move(w));
    }
  }
  if (!a.trace.empty()) {
    std::ostringstream text;
    core::TraceOptions options = sim::predicted_trace_options(
        p.summary, "predicted: " + setup->model.name + " on " + setup->machine.name + ", " + setup->what,
        setup->machine);
    options.warnings =
        planner::predicted_trace_warnings(*setup, setup->policy, *schedule, p.summary, setup->recorded);
    core::write_chrome_trace(*schedule, p.timeline, options, text);
    if (core::Diagnostics d = write_file_atomically(a.trace, text.str()); !d.empty()) {
      report(context, d);
      return kExitCannotWrite;
    }
  }
  if (!a.save_plan.empty()) {
    const core::PlanFile plan{.machine = setup->machine_name, .model = setup->model_name,
                              .training = setup->training_name, .policy = setup->policy,
                              .predicted = planner::predicted_figures(p.summary, schedule->ranks)};
    std::vector<std::string> names;  // each partition's layer, as comments of the plan file
    for (const core::Partition& part : core::partitions_of(workload, setup->policy.sub_group_params)) {
      names.push_back(core::partition_name(workload, part));
    }
    const std::string text = core::write_plan(core::with_references_relative_to(plan, a.save_plan), names);
    if (core::Diagnostics d = write_file_atomically(a.save_plan, text); !d.empty()) {
      report(context, d);
      return kExitCannotWrite;
    }
  }
  if (a.as_json) {
    *context.out << summary_json(*setup, *schedule, p).dump(2) << '\n';
  } else {
    print_summary(*context.out, *setup, *schedule, p);
    if (!a.trace.empty()) *context.out << "\n  trace written to " << a.trace << " (open it in ui.perfetto.dev)\n";
  }
  return kExitOk;
}

}  // namespace

CommandBody add_simulate_command(CLI::App& app, Context& context) {
  CLI::App* sub = app.add_subcommand("simulate", "Predict a training step: step time, throughput, lanes, memory");
  auto a = std::make_shared<SimulateArgs>();
  sub->add_option("plan", a->plan, "Plan file (stowage/plan/v1)")->check(CLI::ExistingFile);
  sub->add_option("--machine", a->machine, "Machine profile name or YAML file");
  sub->add_option("--model", a->model, "Model profile name or YAML file");
  sub->add_option("--training", a->training, "Training profile name or YAML file")->capture_default_str();
  sub->add_option("--placement", a->placement,
                  "A placement instead of a plan: all-gpu, zero-offload, zero-infinity, or a DeepSpeed ZeRO "
                  "placement by name (stowage memory --help lists the names)")
      ->check(placement_validator());
  sub->add_option("--trace", a->trace, "Write the predicted timeline as Chrome trace JSON");
  sub->add_option("--save-plan", a->save_plan, "Write the policy and its predicted figures as a plan file");
  sub->add_option("--steps", a->steps,
                  "Training steps to simulate; the mean of the last two is reported (default: 4, or 7 with a delayed update)")
      ->check(CLI::Range(1, 100));
  sub->add_flag("--json", a->as_json, "Print JSON (docs/json.md)");
  return [&context, a]() { return run_simulate(context, *a); };
}

}  // namespace stowage::cli
