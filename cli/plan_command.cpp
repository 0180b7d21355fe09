// `stowage plan --machine M --model X [--training T] [-o plan.yaml]`: the
// fastest plan that fits, compared with the standard baselines on the same
// simulator, with the reason it wins; `--explain` lists every candidate.
// `--target deepspeed|accelerate` searches only what that runtime runs, as
// it runs it (planner/deepspeed_target.h), so the plan exports unchanged.
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/output_file.h"
#include "cli/placement_option.h"
#include "cli/plan_report.h"
#include "cli/text_table.h"
#include "core/plan_file.h"
#include "planner/target.h"

namespace stowage::cli {
namespace {

struct PlanArgs {
  std::string machine, model, training = "default";
  std::string output;  // no plan file unless asked for: never overwrite a user's ./plan.yaml
  std::string trace;
  std::string target = "stowage";
  std::vector<std::string> placements;  // also compared, as baselines
  bool explain = false;
  bool fixed_shape = false;
  bool as_json = false;
  bool allow_bf16_states = false;
  int threads = 0;  // the search's (planner::SearchOptions::threads)
};

int run_plan(const Context& context, const PlanArgs& a) {
  // Outputs checked before the search, so a bad path costs nothing.
  for (const std::string& path : {a.output, a.trace}) {
    if (path.empty()) continue;
    if (auto checked = check_output_path(path); !checked) {
      report(context, checked.error());
      return kExitCannotWrite;
    }
  }
  const core::ProfileCatalog catalog = context.catalog();
  auto inputs = planner::load_plan_inputs(catalog, a.machine, a.model, a.training);
  if (!inputs) return report(context, inputs.error());
  const planner::Target target = planner::target_named(a.target).value_or(planner::Target::kStowage);
  planner::SearchOptions options{
      .vary_micro_batch = !a.fixed_shape, .vary_checkpointing = !a.fixed_shape, .target = target,
      .state_precisions = a.allow_bf16_states ? planner::SearchOptions::StatePrecisions::kMayUseBf16
                                              : planner::SearchOptions::StatePrecisions::kFp32Only,
      .threads = a.threads};
  for (const std::string& name : a.placements) {
    if (auto p = core::placement_named(name, inputs->machine.gpu_count)) options.also_compare.push_back(*p);
  }
  const planner::PlanResult result = planner::search(inputs->machine, inputs->model, inputs->training, options);
  std::ostream& out = *context.out;
  if (a.as_json) {
    nlohmann::json j = plan_json(*inputs, result);
    j["target"] = a.target;
    out << j.dump(2) << '\n';
  } else {
    if (target != planner::Target::kStowage) {
      out << "target: " << a.target << " (only plans DeepSpeed runs as planned, with its own buffer pools; "
          << "docs/deepspeed.md)\n";
    }
    print_plan(out, *inputs, result, a.explain);
  }
  if (!result.best) return kExitOk;  // no plan to write: the advice above says why
  if (!a.output.empty()) {
    if (core::Diagnostics d =
            save_plan(*inputs, *result.best, a.output, context.catalog().root(), *context.err);
        !d.empty()) {
      report(context, d);
      return kExitCannotWrite;
    }
    if (!a.as_json) out << "\nplan written to " << a.output << '\n';
  }
  if (!a.trace.empty()) {
    if (core::Diagnostics d = write_plan_trace(*inputs, *result.best, a.trace); !d.empty()) {
      report(context, d);
      return kExitCannotWrite;
    }
    if (!a.as_json) out << "trace written to " << a.trace << " (open it in ui.perfetto.dev)\n";
  }
  return kExitOk;
}

}  // namespace

CommandBody add_plan_command(CLI::App& app, Context& context) {
  CLI::App* sub = app.add_subcommand("plan", "Find the fastest placement and prefetch schedule that fits");
  auto a = std::make_shared<PlanArgs>();
  sub->add_option("--machine", a->machine, "Machine profile name or YAML file")->required();
  sub->add_option("--model", a->model, "Model profile name or YAML file")->required();
  sub->add_option("--training", a->training, "Training profile name or YAML file")->capture_default_str();
  sub->add_option("-o,--output", a->output,
                  "Write the plan to this file (stowage/plan/v1); without it, none is written");
  sub->add_option("--trace", a->trace, "Also write the chosen plan's simulated timeline (Chrome trace JSON)");
  sub->add_option("--target", a->target, "Who runs the plan: stowage (any plan), deepspeed or accelerate")
      ->check(CLI::IsMember({"stowage", "deepspeed", "accelerate"}))
      ->capture_default_str();
  sub->add_option("--placement", a->placements,
                  "Also compare this placement (a standard or DeepSpeed one by name, see stowage memory --help); "
                  "repeatable")
      ->check(placement_validator());
  sub->add_flag("--explain", a->explain, "List every candidate considered, its predicted time or why it was rejected");
  sub->add_flag("--fixed-shape", a->fixed_shape, "Keep the training profile's micro-batch and checkpointing");
  sub->add_flag("--json", a->as_json, "Print JSON (docs/json.md)");
  sub->add_flag("--allow-bf16-states", a->allow_bf16_states,
                "Let the plan keep Adam's moments in bf16 (8 instead of 12 B of optimizer state per parameter; "
                "changes the training's numbers), when that is faster or makes the model fit");
  sub->add_option("--threads", a->threads,
                  "Threads the search simulates candidates on; 0: one per core, at most 4 (the plan is the same "
                  "for any number)")
      ->capture_default_str()
      ->check(CLI::Range(0, 256));
  return [&context, a]() { return run_plan(context, *a); };
}

}  // namespace stowage::cli
