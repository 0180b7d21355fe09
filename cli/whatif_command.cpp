// `stowage whatif PLAN.yaml --add-nvme 2 | --pcie gen5 | --ram 512GiB |
// --gpu h100-sxm`: re-plans on the changed machine and shows the effect
// beside the plan as it is.
#include <ostream>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/plan_report.h"
#include "cli/text_table.h"
#include "planner/machine_change.h"

namespace stowage::cli {
namespace {

struct WhatifArgs {
  std::string plan;
  int add_nvme = 0;
  std::string pcie, ram, gpu;
  bool as_json = false;
};

std::string cell(const std::optional<planner::Evaluation>& e, const std::string& what) {
  if (!e) return "does not fit";
  const sim::Summary& s = *e->summary;
  char buf[64];
  if (what == "step") return core::format_seconds(s.step_time);
  if (what == "tokens") {
    std::snprintf(buf, sizeof buf, "%.0f", s.tokens_per_second);
    return buf;
  }
  if (what == "lane") return std::string(core::to_string(s.bounding_lane));
  return e->candidate.name;
}

void print_warnings(std::ostream& out, const char* side, const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings) out << "warning (" << side << "): " << w << '\n';
  if (!warnings.empty()) out << '\n';
}

int run_whatif(const Context& context, const WhatifArgs& a) {
  const core::ProfileCatalog catalog = context.catalog();
  auto plan = core::load_plan(a.plan);
  if (!plan) return report(context, plan.error());
  auto inputs = load_plan_inputs(catalog, plan->machine, plan->model, plan->training);
  if (!inputs) return report(context, inputs.error());
  planner::MachineChange change{.add_nvme = a.add_nvme};
  if (!a.pcie.empty()) change.pcie_generation = a.pcie.back() - '0';
  if (!a.ram.empty()) {
    auto ram = core::parse_bytes(a.ram);
    if (!ram) {
      *context.err << "error: --ram: " << ram.error().what << " (" << ram.error().expected << ")\n";
      return kExitUsage;
    }
    change.ram = *ram;
  }
  if (!a.gpu.empty()) {
    auto gpu = catalog.gpu(a.gpu);
    if (!gpu) return report(context, gpu.error());
    change.gpu = *gpu;
  }
  if (change.add_nvme > 0 && inputs->machine.nvme_count == 0 && !inputs->spare_drive) {
    *context.err
        << "error: --add-nvme: " << inputs->machine.name
        << " has no NVMe drive to copy and the profiles folder has no NVMe profile (add one under nvme/)\n";
    return kExitBadInput;
  }
  PlanInputs changed = *inputs;
  changed.machine = planner::apply(inputs->machine, change, inputs->spare_drive.value_or(core::NvmeSpec{}));
  const planner::PlanResult before = planner::search(inputs->machine, inputs->model, inputs->training);
  const planner::PlanResult after = planner::search(changed.machine, changed.model, changed.training);
  std::ostream& out = *context.out;
  if (a.as_json) {
    out << nlohmann::json{{"change", planner::describe(change)}, {"before", plan_json(*inputs, before)},
                          {"after", plan_json(changed, after)}}.dump(2)
        << '\n';
    return kExitOk;
  }
  out << "What if: " << planner::describe(change) << "\n  " << inputs->model.label << " on " << inputs->machine.label
      << "\n\n";
  print_warnings(out, "as it is", plan_warnings(*inputs, before));
  print_warnings(out, "changed", plan_warnings(changed, after));
  TextTable t({Align::kLeft, Align::kLeft, Align::kLeft});
  t.row({"", "as it is", "changed"});
  t.row({"step time", cell(before.best, "step"), cell(after.best, "step")});
  t.row({"tokens/s", cell(before.best, "tokens"), cell(after.best, "tokens")});
  t.row({"bound by", cell(before.best, "lane"), cell(after.best, "lane")});
  t.row({"plan", cell(before.best, "plan"), cell(after.best, "plan")});
  t.print(out, 2);
  if (before.best && after.best) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "\n  => %.2fx the throughput\n", before.best->step_seconds() / after.best->step_seconds());
    out << buf;
  }
  return kExitOk;
}

}  // namespace

CommandBody add_whatif_command(CLI::App& app, Context& context) {
  CLI::App* sub = app.add_subcommand("whatif", "Re-plan a plan on a changed machine and compare");
  auto a = std::make_shared<WhatifArgs>();
  sub->add_option("plan", a->plan, "Plan file (stowage/plan/v1)")->required()->check(CLI::ExistingFile);
  sub->add_option("--add-nvme", a->add_nvme, "Add this many NVMe drives")->check(CLI::Range(1, 64));
  sub->add_option("--pcie", a->pcie, "Run the PCIe links at this generation")
      ->check(CLI::IsMember({"gen3", "gen4", "gen5", "gen6"}));
  sub->add_option("--ram", a->ram, "Host DRAM, e.g. 512GiB");
  sub->add_option("--gpu", a->gpu, "Replace every GPU with this GPU profile");
  sub->add_flag("--json", a->as_json, "Print JSON (docs/json.md)");
  return [&context, a]() { return run_whatif(context, *a); };
}

}  // namespace stowage::cli
