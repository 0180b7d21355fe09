// `stowage export deepspeed|accelerate PLAN.yaml [-o FILE]`: the plan as a
// DeepSpeed config JSON or an Accelerate config YAML, as close as those tools
// can express it; what they cannot express goes to stderr, one line each.
#include <ostream>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/output_file.h"
#include "cli/profile_inputs.h"
#include "core/plan_file.h"
#include "planner/accelerate_export.h"
#include "planner/deepspeed_export.h"

namespace stowage::cli {
namespace {

struct ExportArgs {
  std::string format, plan, output, nvme_path = "/local_nvme";
};

int run_export(const Context& context, const ExportArgs& a) {
  const core::ProfileCatalog catalog = context.catalog();
  auto plan = core::load_plan(a.plan);
  if (!plan) return report(context, plan.error());
  auto in = load_inputs(catalog, plan->machine, plan->model, plan->training);
  if (!in) return report(context, in.error());
  const core::TrainingSpec effective = core::effective_training(in->training, plan->policy);
  const core::Workload workload(in->model, effective.sequence_length);
  const planner::ExportOptions options{.nvme_path = a.nvme_path};
  auto exported = a.format == "deepspeed" ? planner::export_deepspeed(*plan, in->machine, workload, in->training, options)
                                          : planner::export_accelerate(*plan, in->machine, workload, in->training, options);
  if (!exported) return report(context, exported.error());
  for (const std::string& note : exported->not_expressible) {
    *context.err << "note: " << a.format << " cannot express: " << note << '\n';
  }
  if (a.output.empty()) {
    *context.out << exported->text;
    if (!exported->text.ends_with('\n')) *context.out << '\n';
    return kExitOk;
  }
  if (core::Diagnostics d = write_file_atomically(a.output, exported->text); !d.empty()) {
    report(context, d);
    return kExitCannotWrite;
  }
  return kExitOk;
}

}  // namespace

CommandBody add_export_command(CLI::App& app, Context& context) {
  CLI::App* sub = app.add_subcommand("export", "Write a plan as a DeepSpeed JSON or an Accelerate YAML config");
  auto a = std::make_shared<ExportArgs>();
  sub->add_option("format", a->format, "deepspeed or accelerate")->required()->check(CLI::IsMember({"deepspeed", "accelerate"}));
  sub->add_option("plan", a->plan, "Plan file (stowage/plan/v1)")->required()->check(CLI::ExistingFile);
  sub->add_option("-o,--output", a->output, "Write here instead of stdout");
  sub->add_option("--nvme-path", a->nvme_path, "Directory on the NVMe drive(s) for swap files")->capture_default_str();
  return [&context, a]() { return run_export(context, *a); };
}

}  // namespace stowage::cli
