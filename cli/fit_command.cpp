// `stowage fit --machine M --family llama|gpt|opt`: the largest bundled
// model of a family that trains on the machine, with its plan.
#include <algorithm>
#include <ostream>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/plan_report.h"

namespace stowage::cli {
namespace {

struct FitArgs {
  std::string machine, family, training = "default";
  bool as_json = false;
};

bool in_family(const std::string& model, const std::string& family) {
  if (model.starts_with("tiny")) return false;
  return model.starts_with(family);
}

int run_fit(const Context& context, const FitArgs& a) {
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
  for (const auto& [params, name] : models) {
    auto inputs = load_plan_inputs(catalog, a.machine, name, a.training);
    if (!inputs) return report(context, inputs.error());
    const planner::PlanResult result = planner::search(inputs->machine, inputs->model, inputs->training);
    if (!result.best) {
      if (!a.as_json) out << name << ": does not fit\n";
      continue;
    }
    if (a.as_json) {
      out << plan_json(*inputs, result).dump(2) << '\n';
    } else {
      out << "\nlargest " << a.family << " model that trains on " << inputs->machine.label << ": " << name << "\n\n";
      print_plan(out, *inputs, result, false);
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
  sub->add_flag("--json", a->as_json, "Print JSON (docs/json.md)");
  return [&context, a]() { return run_fit(context, *a); };
}

}  // namespace stowage::cli
