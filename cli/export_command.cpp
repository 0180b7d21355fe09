// `stowage export deepspeed|accelerate PLAN.yaml [-o FILE] [--lossy]`: the
// plan as a DeepSpeed config JSON or an Accelerate config YAML (which points
// at the DeepSpeed JSON, written beside it). A plan DeepSpeed cannot run as
// planned is refused (exit 65) with the differences and the predicted step
// time and memory of the plan DeepSpeed would run instead; --lossy exports
// it anyway and prints both times (docs/deepspeed.md).
#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/output_file.h"
#include "core/plan_file.h"
#include "planner/accelerate_export.h"
#include "planner/chosen_plan.h"
#include "planner/deepspeed_export.h"
#include "planner/deepspeed_target.h"
#include "planner/profile_inputs.h"
#include "planner/search.h"

namespace stowage::cli {
namespace {

struct ExportArgs {
  std::string format, plan, output, nvme_path = "/local_nvme";
  std::string deepspeed_json;  // accelerate: the DeepSpeed JSON the YAML points at
  bool lossy = false;
  // The peer check's report (bench/peers/deepspeed_check): what DeepSpeed
  // will allocate when the exported config runs `pools_model` (default: the
  // plan's) on `pools_ranks` ranks (default: the machine's GPUs).
  std::string pools_json, pools_model;
  int pools_ranks = 0;
};

// accelerate -o run/acc.yaml puts the DeepSpeed JSON at run/acc.deepspeed.json.
std::string deepspeed_json_path(const ExportArgs& a) {
  if (!a.deepspeed_json.empty()) return a.deepspeed_json;
  if (a.output.empty()) return "deepspeed.json";
  return std::filesystem::path(a.output).replace_extension(".deepspeed.json").string();
}

std::string figures(const planner::Evaluation& e, const core::MachineSpec& machine) {
  if (!e.summary) return "not simulated: " + e.reason;
  std::string s = core::format_seconds(e.summary->step_time) + " per step; peak";
  for (core::Tier t : core::kAllTiers) {
    const int scale = core::ranks_in_scope(t, machine.gpu_count);
    s += " " + std::string(core::to_string(t)) + " " +
         core::format_bytes(e.summary->peak_memory[static_cast<size_t>(t)] * scale);
  }
  return s + (e.fits() ? " (fits)" : " (does not fit: " + e.reason + ")");
}

void print_pools(std::ostream& err, const planner::TargetPlan& target, const core::MachineSpec& machine) {
  const int ranks = std::max(1, machine.gpu_count);
  err << "DeepSpeed allocates these buffers for this configuration, "
      << core::format_bytes(planner::deepspeed::pinned_bytes(target.pools) * ranks)
      << " of them pinned host memory (all ranks):\n";
  for (const planner::deepspeed::RuntimePool& p : target.pools) {
    err << "  " << core::to_string(p.tier) << "  " << core::format_bytes(p.bytes) << " per rank  " << p.name
        << (p.pinned ? ", pinned" : "") << "  (" << p.source << ")\n";
  }
}

// What the figures printed rest on (planner::evaluation_warnings), each
// once: the plan and what DeepSpeed runs share the machine's assumptions.
void print_figure_warnings(std::ostream& err, const planner::ProfileInputs& in,
                           std::initializer_list<const planner::Evaluation*> shown) {
  std::vector<std::string> said;
  for (const planner::Evaluation* e : shown) {
    for (std::string& w : planner::evaluation_warnings(in, *e)) {
      if (std::ranges::find(said, w) == said.end()) said.push_back(std::move(w));
    }
  }
  for (const std::string& w : said) err << "warning: " << w << '\n';
}

// The differences, the plan DeepSpeed would run and its figures beside the
// plan's own; returns whether the export goes ahead.
bool weigh_differences(const Context& context, const ExportArgs& a, const std::vector<std::string>& differences,
                       const planner::Evaluation& planned, const planner::Evaluation& target,
                       const planner::ProfileInputs& in) {
  std::ostream& err = *context.err;
  const core::MachineSpec& machine = in.machine;
  if (differences.empty()) {
    err << "DeepSpeed runs this plan as planned: " << figures(target, machine) << '\n';
    print_figure_warnings(err, in, {&target});
    return true;
  }
  err << (a.lossy ? "warning: " : "error: ") << a.format << " cannot run this plan as planned:\n";
  for (const std::string& d : differences) err << "  - " << d << '\n';
  err << "planned (Stowage's executor):  " << figures(planned, machine) << '\n';
  err << "exported (what " << a.format << " runs): " << figures(target, machine) << '\n';
  print_figure_warnings(err, in, {&planned, &target});
  if (a.lossy) return true;
  err << "Nothing written. Export it anyway with --lossy, or plan for the target: stowage plan --target " << a.format
      << " ...\n";
  return false;
}

core::Result<planner::ExportResult> export_text(const ExportArgs& a, const core::PlanFile& plan,
                                                const planner::ProfileInputs& in, const core::Workload& workload) {
  planner::ExportOptions options{.nvme_path = a.nvme_path};
  if (a.format == "deepspeed") return planner::export_deepspeed(plan, in.machine, workload, in.training, options);
  options.deepspeed_config_file = deepspeed_json_path(a);
  return planner::export_accelerate(plan, in.machine, workload, in.training, options);
}

int write_outputs(const Context& context, const ExportArgs& a, const planner::ExportResult& exported,
                  const std::string& deepspeed_json) {
  if (a.output.empty()) {
    *context.out << exported.text;
    if (!exported.text.ends_with('\n')) *context.out << '\n';
    return kExitOk;
  }
  if (a.format == "accelerate") {
    if (core::Diagnostics d = write_file_atomically(deepspeed_json_path(a), deepspeed_json); !d.empty()) {
      report(context, d);
      return kExitCannotWrite;
    }
    *context.err << "DeepSpeed config written to " << deepspeed_json_path(a) << '\n';
  }
  if (core::Diagnostics d = write_file_atomically(a.output, exported.text); !d.empty()) {
    report(context, d);
    return kExitCannotWrite;
  }
  return kExitOk;
}

// The buffers DeepSpeed allocates for `settings` running `model` on `ranks`
// ranks, its sub-groups and ratio, and the model's tensors (for the peer
// check to build a model with exactly these parameters).
nlohmann::json pools_report(planner::DeepSpeedSettings settings, const core::ModelSpec& model,
                            const core::TrainingSpec& training, int ranks, const ExportArgs& a) {
  namespace ds = planner::deepspeed;
  settings.gpu_count = ranks;
  const core::Workload w(model, training.sequence_length);
  nlohmann::json j = {{"model", model.name}, {"ranks", ranks}, {"nvme_path", a.nvme_path}};
  for (const ds::RuntimePool& p : ds::runtime_pools(settings, w)) {
    j["pools"].push_back({{"name", p.name}, {"tier", core::to_string(p.tier)}, {"bytes", p.bytes.count()},
                          {"pinned", p.pinned}, {"source", p.source}});
  }
  j["pinned_bytes"] = ds::pinned_bytes(ds::runtime_pools(settings, w)).count();
  const std::vector<int64_t> groups = ds::sub_group_numels(w, ranks, settings.sub_group_size);
  j["sub_groups"] = groups;
  j["planned_ratio"] = settings.optimizer.planned_ratio;
  j["ratio"] = settings.optimizer.ratio;
  j["realised_ratio"] = settings.optimizer.device == planner::OffloadDevice::kNone
                            ? 0.0
                            : ds::partial_offload(groups, settings.optimizer.ratio).realised_ratio();
  for (const core::Layer& layer : w.layers()) {
    nlohmann::json l = {{"name", layer.name}};
    for (const core::ParamTensor& t : layer.params) l["params"].push_back({{"name", t.name}, {"shape", t.shape}});
    j["layers"].push_back(l);
  }
  return j;
}

int write_pools_report(const Context& context, const ExportArgs& a, const core::ProfileCatalog& catalog,
                       const core::PlanFile& plan, const planner::ProfileInputs& in, const planner::TargetPlan& target) {
  auto model = planner::load_inputs(catalog, plan.machine, a.pools_model.empty() ? plan.model : a.pools_model, plan.training);
  if (!model) return report(context, model.error());
  const int ranks = a.pools_ranks > 0 ? a.pools_ranks : std::max(1, in.machine.gpu_count);
  nlohmann::json j = pools_report(target.settings, model->model, in.training, ranks, a);
  nlohmann::json planned = pools_report(target.settings, in.model, in.training, std::max(1, in.machine.gpu_count), a);
  j["plan"] = {{"model", in.model.name},
               {"pinned_bytes", planned["pinned_bytes"]},
               {"planned_ratio", planned["planned_ratio"]},
               {"realised_ratio", planned["realised_ratio"]}};
  if (core::Diagnostics d = write_file_atomically(a.pools_json, j.dump(2) + "\n"); !d.empty()) {
    report(context, d);
    return kExitCannotWrite;
  }
  return kExitOk;
}

int run_export(const Context& context, const ExportArgs& a) {
  const core::ProfileCatalog catalog = context.catalog();
  auto plan = core::load_plan(a.plan, catalog.root());
  if (!plan) return report(context, plan.error());
  auto in = planner::load_inputs(catalog, plan->machine, plan->model, plan->training, &plan->places);
  if (!in) return report(context, in.error());
  if (!a.output.empty()) {
    for (const std::string& path : {a.output, a.format == "accelerate" ? deepspeed_json_path(a) : a.output}) {
      if (auto checked = check_output_path(path); !checked) {
        report(context, checked.error());
        return kExitCannotWrite;
      }
    }
  }
  const core::TrainingSpec effective = core::effective_training(in->training, plan->policy);
  const core::Workload workload(in->model, effective.sequence_length);
  auto exported = export_text(a, *plan, *in, workload);
  if (!exported) return report(context, exported.error());
  const planner::Candidate planned = planner::candidate_of(plan->policy, in->training);
  auto target = planner::deepspeed_target(planned, in->machine, in->model);
  if (!target) return report(context, target.error());
  const planner::Evaluation as_planned = planner::evaluate(planned, in->machine, in->model);
  const planner::Evaluation as_exported = planner::evaluate(target->candidate, in->machine, in->model);
  // A plan DeepSpeed runs as planned but whose buffers overflow a tier is
  // not one it runs: it ends in an out-of-memory error.
  std::vector<std::string> differences = exported->not_expressible;
  if (!as_exported.fits() && as_exported.verdict == planner::Verdict::kOverflows) {
    differences.push_back("With the buffers DeepSpeed allocates for this configuration (listed below) the " +
                          as_exported.reason + (as_planned.fits() ? ", where the plan fits." : "."));
  }
  if (!weigh_differences(context, a, differences, as_planned, as_exported, *in)) {
    print_pools(*context.err, *target, in->machine);
    return kExitBadInput;
  }
  print_pools(*context.err, *target, in->machine);
  for (const std::string& note : exported->instructions) *context.err << "note: " << note << '\n';
  if (!a.pools_json.empty()) {
    if (const int rc = write_pools_report(context, a, catalog, *plan, *in, *target); rc != kExitOk) return rc;
  }
  std::string deepspeed_json;
  if (a.format == "accelerate") {
    auto json = planner::export_deepspeed(*plan, in->machine, workload, in->training, {.nvme_path = a.nvme_path});
    if (!json) return report(context, json.error());
    deepspeed_json = json->text;
  }
  return write_outputs(context, a, *exported, deepspeed_json);
}

}  // namespace

CommandBody add_export_command(CLI::App& app, Context& context) {
  CLI::App* sub = app.add_subcommand("export", "Write a plan as a DeepSpeed JSON or an Accelerate YAML config");
  auto a = std::make_shared<ExportArgs>();
  sub->add_option("format", a->format, "deepspeed or accelerate")->required()->check(CLI::IsMember({"deepspeed", "accelerate"}));
  sub->add_option("plan", a->plan, "Plan file (stowage/plan/v1)")->required()->check(CLI::ExistingFile);
  sub->add_option("-o,--output", a->output, "Write here instead of stdout");
  sub->add_option("--nvme-path", a->nvme_path, "Directory on the NVMe drive(s) for swap files")->capture_default_str();
  sub->add_option("--deepspeed-json", a->deepspeed_json,
                  "accelerate: where the DeepSpeed JSON the YAML points at goes (default: beside -o, "
                  "NAME.deepspeed.json; without -o, deepspeed.json, not written)");
  sub->add_flag("--lossy", a->lossy,
                "Export a plan the target cannot run as planned, printing both predicted step times");
  sub->add_option("--pools-json", a->pools_json,
                  "Also write what DeepSpeed will allocate for the config as JSON (for bench/peers/deepspeed_check)");
  sub->add_option("--pools-model", a->pools_model, "--pools-json: for this model instead of the plan's");
  sub->add_option("--pools-ranks", a->pools_ranks, "--pools-json: for this many ranks instead of the machine's GPUs");
  return [&context, a]() { return run_export(context, *a); };
}

}  // namespace stowage::cli
