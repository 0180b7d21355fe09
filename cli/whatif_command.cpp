// `stowage whatif PLAN.yaml --add-nvme 2 | --pcie gen5 | --ram 512GiB |
// --gpu h100-sxm [-o changed.yaml]`: re-plans on the changed machine and
// shows the effect beside the plan as it is: step time, memory per tier and
// NVMe wear before and after, and why the time changed.
#include <cstdio>
#include <filesystem>
#include <ostream>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/machine_output.h"
#include "cli/output_file.h"
#include "cli/plan_report.h"
#include "cli/text_table.h"
#include "core/machine_profile_writer.h"
#include "planner/chosen_plan.h"
#include "planner/machine_change.h"
#include "planner/nvme_wear.h"

namespace stowage::cli {
namespace {

struct WhatifArgs {
  std::string plan;
  int add_nvme = 0;
  std::string pcie, ram, gpu;
  std::string output;  // the changed machine's plan; none written unless given
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

std::string peak_cell(const std::optional<planner::Evaluation>& e, const core::MachineSpec& m, core::Tier t) {
  if (!e) return "-";
  const int scale = core::ranks_in_scope(t, m.gpu_count);
  return core::format_bytes(e->summary->peak_memory[static_cast<size_t>(t)] * scale);
}

std::string wear_cell(const std::optional<planner::Evaluation>& e, const core::MachineSpec& m) {
  if (!e) return "-";
  const planner::NvmeWear w = planner::nvme_wear(e->nvme_bytes_written, e->summary->step_time, m);
  if (w.written_per_step.count() == 0) return "none";
  std::string s = core::format_bytes(w.written_per_step) + " per step";
  if (w.days_to_rated) {
    char buf[64];
    std::snprintf(buf, sizeof buf, ", rated TBW in %.0f days", *w.days_to_rated);
    s += buf;
  }
  return s;
}

// Why the step time changed: the lane that bounded the step as it is, how
// busy it is after the change, and what bounds the step then.
std::string why_changed(const planner::Evaluation& before, const planner::Evaluation& after) {
  const sim::Summary& b = *before.summary;
  const sim::Summary& a = *after.summary;
  const core::Lane lane = b.bounding_lane;
  const size_t i = static_cast<size_t>(lane);
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "as it is, the step (%s) is bound by %s, busy %.0f%% of it; changed, %s is busy %.0f%% of a %s "
                "step, which is bound by %s (busy %.0f%%)",
                core::format_seconds(b.step_time).c_str(), std::string(core::to_string(lane)).c_str(),
                b.lane_busy[i] * 100, std::string(core::to_string(lane)).c_str(), a.lane_busy[i] * 100,
                core::format_seconds(a.step_time).c_str(), std::string(core::to_string(a.bounding_lane)).c_str(),
                a.lane_busy[static_cast<size_t>(a.bounding_lane)] * 100);
  std::string s = buf;
  if (before.candidate.name != after.candidate.name) {
    s += "; the planner chose another plan for the changed machine (" + after.candidate.name + ")";
  } else {
    s += "; the plan is the same, only the machine changed";
  }
  return s;
}

// Where `whatif -o changed.yaml` saves the changed machine the plan names:
// beside it, changed.machine.yaml.
std::string machine_path_for(const std::string& plan_path) {
  std::filesystem::path p(plan_path);
  p.replace_extension(".machine.yaml");
  return p.string();
}

void print_warnings(std::ostream& out, const char* side, const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings) out << "warning (" << side << "): " << w << '\n';
  if (!warnings.empty()) out << '\n';
}

int run_whatif(const Context& context, const WhatifArgs& a) {
  const core::ProfileCatalog catalog = context.catalog();
  if (!a.output.empty()) {
    if (auto checked = check_output_path(a.output); !checked) {
      report(context, checked.error());
      return kExitCannotWrite;
    }
    if (core::Diagnostics d = check_machine_output(machine_path_for(a.output)); !d.empty()) {
      report(context, d);
      return kExitCannotWrite;
    }
  }
  auto plan = core::load_plan(a.plan, catalog.root());
  if (!plan) return report(context, plan.error());
  auto inputs = planner::load_plan_inputs(catalog, plan->machine, plan->model, plan->training);
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
  if (!a.output.empty() && after.best) {
    // The changed machine is in no profile folder: it is saved beside the
    // plan, which names it.
    const std::string machine_file = machine_path_for(a.output);
    core::MachineSpec saved = changed.machine;
    saved.label = inputs->machine.label + ", " + planner::describe(change);
    saved.source = "stowage whatif: " + inputs->machine_name + " with " + planner::describe(change);
    PlanInputs named = changed;
    named.machine_name = machine_file;
    if (core::Diagnostics d = write_file_atomically(machine_file, core::write_machine_profile(saved)); !d.empty()) {
      report(context, d);
      return kExitCannotWrite;
    }
    if (core::Diagnostics d = save_plan(named, *after.best, a.output, context.catalog().root(), *context.err);
        !d.empty()) {
      report(context, d);
      return kExitCannotWrite;
    }
  }
  if (a.as_json) {
    nlohmann::json j{{"change", planner::describe(change)}, {"before", plan_json(*inputs, before)},
                     {"after", plan_json(changed, after)}};
    j["why"] = before.best && after.best ? nlohmann::json(why_changed(*before.best, *after.best)) : nlohmann::json(nullptr);
    out << j.dump(2) << '\n';
    return kExitOk;
  }
  out << "What if: " << planner::describe(change) << "\n  " << inputs->model.label << " on " << inputs->machine.label
      << "\n\n";
  print_warnings(out, "as it is", planner::plan_warnings(*inputs, before));
  print_warnings(out, "changed", planner::plan_warnings(changed, after));
  TextTable t({Align::kLeft, Align::kLeft, Align::kLeft});
  t.row({"", "as it is", "changed"});
  t.row({"step time", cell(before.best, "step"), cell(after.best, "step")});
  t.row({"tokens/s", cell(before.best, "tokens"), cell(after.best, "tokens")});
  t.row({"bound by", cell(before.best, "lane"), cell(after.best, "lane")});
  for (core::Tier tier : core::kAllTiers) {
    t.row({"peak " + std::string(core::to_string(tier)) + (tier == core::Tier::kGpu ? " per GPU" : ""),
           peak_cell(before.best, inputs->machine, tier), peak_cell(after.best, changed.machine, tier)});
  }
  t.row({"nvme writes", wear_cell(before.best, inputs->machine), wear_cell(after.best, changed.machine)});
  t.row({"plan", cell(before.best, "plan"), cell(after.best, "plan")});
  t.print(out, 2);
  if (before.best && after.best) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "\n  => %.2fx the throughput\n", before.best->step_seconds() / after.best->step_seconds());
    out << buf << "  why: " << why_changed(*before.best, *after.best) << '\n';
  } else if (after.best) {
    out << "\n  => the change makes it fit\n";
  } else if (before.best) {
    out << "\n  => after the change nothing fits\n";
  }
  if (!a.output.empty() && after.best) {
    out << "\nchanged plan written to " << a.output << ", for the changed machine written beside it to "
        << machine_path_for(a.output) << '\n';
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
  sub->add_option("-o,--output", a->output,
                  "Write the changed machine's plan to this file, and the changed machine beside it "
                  "(NAME.machine.yaml); without it, nothing is written");
  sub->add_flag("--json", a->as_json, "Print JSON (docs/json.md)");
  return [&context, a]() { return run_whatif(context, *a); };
}

}  // namespace stowage::cli
