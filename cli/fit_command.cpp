// `stowage fit --machine M --family llama|gpt|opt [--min-tokens-per-s R]
// [-o plan.yaml]`: the largest bundled model of a family that trains on the
// machine (at R tokens/s or more when given), with its plan, and what stops
// the next larger model.
#include <algorithm>
#include <cstdio>
#include <ostream>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/output_file.h"
#include "cli/plan_report.h"
#include "planner/advice.h"

namespace stowage::cli {
namespace {

struct FitArgs {
  std::string machine, family, training = "default";
  double min_tokens_per_s = 0;  // 0: any throughput trains
  std::string output;           // the found model's plan; none written unless given
  bool as_json = false;
  bool allow_bf16_states = false;
};

bool in_family(const std::string& model, const std::string& family) {
  if (model.starts_with("tiny")) return false;
  return model.starts_with(family);
}

std::string rate(double tokens_per_s) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.0f tokens/s", tokens_per_s);
  return buf;
}

// Why a model does not train here: nothing fits (and what the closest
// candidate lacks), or its fastest plan is slower than asked for. Empty
// when it trains.
std::string what_stops(const planner::PlanResult& r, double min_tokens_per_s) {
  if (!r.best) {
    const planner::Evaluation* c = planner::closest(r);
    return "nothing fits" + (c ? ": the closest plan (" + c->candidate.name + ") " + c->reason : std::string());
  }
  const double got = r.best->summary->tokens_per_second;
  if (got < min_tokens_per_s) {
    return "its fastest plan (" + r.best->candidate.name + ") reaches " + rate(got) + ", below the " +
           rate(min_tokens_per_s) + " asked for";
  }
  return "";
}

int run_fit(const Context& context, const FitArgs& a) {
  if (!a.output.empty()) {
    if (auto checked = check_output_path(a.output); !checked) {
      report(context, checked.error());
      return kExitCannotWrite;
    }
  }
  const core::ProfileCatalog catalog = context.catalog();
  // Largest first, by parameter count.
  std::vector<std::pair<int64_t, std::string>> models;
  for (const std::string& name : catalog.names(core::ProfileKind::kModel)) {
    if (!in_family(name, a.family)) continue;
    auto m = catalog.model(name);
    if (!m) return report(context, m.error());
    models.emplace_back(core::Workload(*m, m->max_positions).total_params(), name);
  }
  std::sort(models.rbegin(), models.rend());
  std::ostream& out = *context.out;
  std::optional<std::pair<std::string, std::string>> larger;  // the next larger model and what stops it
  for (const auto& [params, name] : models) {
    auto inputs = planner::load_plan_inputs(catalog, a.machine, name, a.training);
    if (!inputs) return report(context, inputs.error());
    const planner::SearchOptions options{
        .state_precisions = a.allow_bf16_states ? planner::SearchOptions::StatePrecisions::kMayUseBf16
                                                : planner::SearchOptions::StatePrecisions::kFp32Only};
    const planner::PlanResult result = planner::search(inputs->machine, inputs->model, inputs->training, options);
    if (const std::string stops = what_stops(result, a.min_tokens_per_s); !stops.empty()) {
      if (!a.as_json) out << name << ": does not train here: " << stops << '\n';
      larger = {name, stops};
      continue;
    }
    if (a.as_json) {
      nlohmann::json j = plan_json(*inputs, result);
      j["min_tokens_per_s"] = a.min_tokens_per_s;
      j["next_larger_model"] =
          larger ? nlohmann::json{{"name", larger->first}, {"reason", larger->second}} : nlohmann::json(nullptr);
      out << j.dump(2) << '\n';
    } else {
      out << "\nlargest " << a.family << " model that trains on " << inputs->machine.label
          << (a.min_tokens_per_s > 0 ? " at " + rate(a.min_tokens_per_s) + " or more" : std::string()) << ": "
          << name << "\n";
      if (larger) out << "  next larger, " << larger->first << ": " << larger->second << '\n';
      else out << "  it is the largest bundled " << a.family << " model\n";
      out << '\n';
      print_plan(out, *inputs, result, false);
    }
    if (!a.output.empty()) {
      if (core::Diagnostics d =
              save_plan(*inputs, *result.best, a.output, context.catalog().root(), *context.err);
          !d.empty()) {
        report(context, d);
        return kExitCannotWrite;
      }
      if (!a.as_json) out << "\nplan written to " << a.output << '\n';
    }
    return kExitOk;
  }
  if (a.as_json) out << "null\n";
  else out << "no bundled " << a.family << " model trains on this machine\n";
  return kExitOk;
}

}  // namespace

CommandBody add_fit_command(CLI::App& app, Context& context) {
  CLI::App* sub = app.add_subcommand("fit", "The largest model of a family that trains on a machine");
  auto a = std::make_shared<FitArgs>();
  sub->add_option("--machine", a->machine, "Machine profile name or YAML file")->required();
  sub->add_option("--family", a->family, "Model family")->required()->check(CLI::IsMember({"llama", "gpt", "opt"}));
  sub->add_option("--training", a->training, "Training profile name or YAML file")->capture_default_str();
  sub->add_option("--min-tokens-per-s", a->min_tokens_per_s,
                  "Count a model as trainable only if its plan reaches this throughput (all GPUs)")
      ->check(CLI::Range(0.0, 1e12));
  sub->add_option("-o,--output", a->output, "Write the found model's plan to this file; without it, none is written");
  sub->add_flag("--json", a->as_json, "Print JSON (docs/json.md)");
  sub->add_flag("--allow-bf16-states", a->allow_bf16_states,
                "Let plans keep Adam's moments in bf16 (8 instead of 12 B of optimizer state per parameter; "
                "changes the training's numbers), when that is faster or makes the model fit");
  return [&context, a]() { return run_fit(context, *a); };
}

}  // namespace stowage::cli
