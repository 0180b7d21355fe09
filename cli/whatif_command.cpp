// `stowage whatif PLAN.yaml --add-nvme 2 | --pcie gen5 | --ram 512GiB |
// --gpu h100-sxm [-o changed.yaml]`: the plan as it is, the same plan on the
// changed machine and the planner's plan for it (planner/what_if.h), side by
// side: step time, memory per tier and NVMe wear, and why the time changed.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <ostream>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/machine_output.h"
#include "cli/output_file.h"
#include "cli/plan_report.h"
#include "cli/text_table.h"
#include "core/lower.h"
#include "core/machine_profile_writer.h"
#include "planner/chosen_plan.h"
#include "planner/machine_change.h"
#include "planner/nvme_wear.h"
#include "planner/what_if.h"

namespace stowage::cli {
namespace {

struct WhatifArgs {
  std::string plan;
  int add_nvme = 0;
  std::string pcie, ram, gpu;
  std::string output;  // the changed machine's plan; none written unless given
  bool as_json = false;
};

// One side's figure for the table; a side that does not fit says so in its
// step-time row and shows "-" in the others.
std::string cell(const planner::Evaluation& e, const std::string& what) {
  if (!e.fits()) return what == "step" ? "does not fit" : "-";
  const sim::Summary& s = *e.summary;
  char buf[64];
  if (what == "step") return core::format_seconds(s.step_time);
  if (what == "tokens") {
    std::snprintf(buf, sizeof buf, "%.0f", s.tokens_per_second);
    return buf;
  }
  return std::string(core::to_string(s.bounding_lane));
}

std::string peak_cell(const planner::Evaluation& e, const core::MachineSpec& m, core::Tier t) {
  if (!e.fits()) return "-";
  const int scale = core::ranks_in_scope(t, m.gpu_count);
  return core::format_bytes(e.summary->peak_memory[static_cast<size_t>(t)] * scale);
}

std::string wear_cell(const planner::Evaluation& e, const core::MachineSpec& m) {
  if (!e.fits()) return "-";
  const planner::NvmeWear w = planner::nvme_wear(e.nvme_bytes_written, e.summary->step_time, m);
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

// Each warning once, with the sides it is about: "warning (as it is,
// re-planned): ...".
void print_warnings(std::ostream& out,
                    const std::vector<std::pair<std::string, std::vector<std::string>>>& sides) {
  std::vector<std::pair<std::string, std::string>> said;  // warning, the sides it is about
  for (const auto& [side, warnings] : sides) {
    for (const std::string& w : warnings) {
      auto it = std::ranges::find(said, w, &std::pair<std::string, std::string>::first);
      if (it == said.end()) {
        said.emplace_back(w, side);
      } else {
        it->second += ", " + side;
      }
    }
  }
  for (const auto& [w, about] : said) out << "warning (" << about << "): " << w << '\n';
  if (!said.empty()) out << '\n';
}

// Which side the changed machine's plan is, for --json's `changed`.
nlohmann::json changed_side(const planner::WhatIf& w) {
  if (w.changed() == nullptr) return nullptr;
  return w.changed() == &w.same_plan ? "same_plan" : "after";
}

void print_whatif(std::ostream& out, const planner::MachineChange& change, const PlanInputs& in,
                  const PlanInputs& changed, const planner::WhatIf& w,
                  const std::optional<core::PredictedFigures>& recorded) {
  out << "What if: " << planner::describe(change) << "\n  " << in.model.label << " on " << in.machine.label
      << "\n\n";
  if (w.as_it_is.summary) {
    if (auto note = planner::recorded_step_note(recorded, *w.as_it_is.summary))
      out << "note: " << *note << "\n\n";
  }
  const planner::Evaluation none;  // "does not fit", where the search found nothing
  const planner::Evaluation& replanned = w.replanned.best ? *w.replanned.best : none;
  print_warnings(out, {{"as it is", planner::evaluation_warnings(in, w.as_it_is)},
                       {"same plan", planner::evaluation_warnings(changed, w.same_plan)},
                       {"re-planned", planner::evaluation_warnings(changed, replanned)}});
  TextTable t({Align::kLeft, Align::kLeft, Align::kLeft, Align::kLeft});
  t.row({"", "as it is", "same plan, changed machine", "re-planned"});
  for (const auto& [row, what] :
       {std::pair{"step time", "step"}, {"tokens/s", "tokens"}, {"bound by", "lane"}}) {
    t.row({row, cell(w.as_it_is, what), cell(w.same_plan, what), cell(replanned, what)});
  }
  for (core::Tier tier : core::kAllTiers) {
    t.row({"peak " + std::string(core::to_string(tier)) + (tier == core::Tier::kGpu ? " per GPU" : ""),
           peak_cell(w.as_it_is, in.machine, tier), peak_cell(w.same_plan, changed.machine, tier),
           peak_cell(replanned, changed.machine, tier)});
  }
  t.row({"nvme writes", wear_cell(w.as_it_is, in.machine), wear_cell(w.same_plan, changed.machine),
         wear_cell(replanned, changed.machine)});
  t.print(out, 2);
  out << "\n  the plan:   " << w.as_it_is.candidate.name << '\n';
  if (!w.as_it_is.fits()) out << "  as it is, it does not fit: " << w.as_it_is.reason << '\n';
  if (!w.same_plan.fits()) out << "  on the changed machine, it does not fit: " << w.same_plan.reason << '\n';
  out << "  re-planned: " << (w.replanned.best ? w.replanned.best->candidate.name : "nothing fits") << '\n';
  const planner::Evaluation* after = w.changed();
  if (w.as_it_is.fits() && after != nullptr) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "\n  => %.2fx the throughput",
                  w.as_it_is.step_seconds() / after->step_seconds());
    out << buf << (after == &w.same_plan ? " with the same plan (faster than the re-planned one)\n" : "\n");
    out << "  why: " << why_changed(w.as_it_is, *after) << '\n';
  } else if (after != nullptr) {
    out << "\n  => the change makes it fit\n";
  } else if (w.as_it_is.fits()) {
    out << "\n  => after the change nothing fits\n";
  } else {
    out << "\n  => nothing fits, before or after the change\n";
  }
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
  auto inputs = planner::load_plan_inputs(catalog, plan->machine, plan->model, plan->training, &plan->places);
  if (!inputs) return report(context, inputs.error());
  // A policy that does not lower for its model is the plan's fault, at its line.
  const core::TrainingSpec shape = core::effective_training(inputs->training, plan->policy);
  if (auto lowered =
          core::lower(plan->policy, inputs->machine, core::Workload(inputs->model, shape.sequence_length),
                      inputs->training, {.steps = 1});
      !lowered) {
    core::Diagnostics problems = lowered.error();
    core::locate_in_plan(problems, plan->places);
    return report(context, problems);
  }
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
  changed.machine_name = inputs->machine_name + " with " + planner::describe(change);
  if (auto refused = planner::unsupported_precision(catalog, changed)) {
    refused->expected = "a plan made with " + refused->expected;  // whatif has no --training of its own
    return report(context, {*refused});
  }
  const planner::WhatIf w = planner::what_if(plan->policy, *inputs, changed.machine);
  const planner::Evaluation* after = w.changed();
  if (!a.output.empty() && after != nullptr) {
    // The changed machine is in no profile folder: it is saved beside the
    // plan, which names it.
    const std::string machine_file = machine_path_for(a.output);
    core::MachineSpec saved = changed.machine;
    saved.label = inputs->machine.label + ", " + planner::describe(change);
    saved.source = "stowage whatif: " + changed.machine_name;
    PlanInputs named = changed;
    named.machine_name = machine_file;
    if (core::Diagnostics d = write_file_atomically(machine_file, core::write_machine_profile(saved)); !d.empty()) {
      report(context, d);
      return kExitCannotWrite;
    }
    if (core::Diagnostics d = save_plan(named, *after, a.output, context.catalog().root(), *context.err);
        !d.empty()) {
      report(context, d);
      return kExitCannotWrite;
    }
  }
  std::ostream& out = *context.out;
  if (a.as_json) {
    nlohmann::json j{
        {"change", planner::describe(change)},
        {"before", plan_side_json(*inputs, &w.as_it_is, planner::evaluation_warnings(*inputs, w.as_it_is))},
        {"same_plan",
         plan_side_json(changed, &w.same_plan, planner::evaluation_warnings(changed, w.same_plan))},
        {"after", plan_json(changed, w.replanned)},
        {"changed", changed_side(w)}};
    j["why"] = w.as_it_is.fits() && after != nullptr ? nlohmann::json(why_changed(w.as_it_is, *after))
                                                     : nlohmann::json(nullptr);
    out << j.dump(2) << '\n';
    return kExitOk;
  }
  print_whatif(out, change, *inputs, changed, w, plan->predicted);
  if (!a.output.empty() && after != nullptr) {
    out << "\nchanged plan written to " << a.output << ", for the changed machine written beside it to "
        << machine_path_for(a.output) << '\n';
  }
  return kExitOk;
}

}  // namespace

CommandBody add_whatif_command(CLI::App& app, Context& context) {
  CLI::App* sub =
      app.add_subcommand("whatif", "Compare a plan as it is, on a changed machine, and re-planned for it");
  auto a = std::make_shared<WhatifArgs>();
  sub->add_option("plan", a->plan, "Plan file (stowage/plan/v1)")->required()->check(CLI::ExistingFile);
  sub->add_option("--add-nvme", a->add_nvme, "Add this many NVMe drives")->check(CLI::Range(1, 64));
  sub->add_option("--pcie", a->pcie, "Run the PCIe links at this generation")
      ->check(CLI::IsMember({"gen3", "gen4", "gen5", "gen6"}));
  sub->add_option("--ram", a->ram, "Host DRAM, e.g. 512GiB");
  sub->add_option("--gpu", a->gpu, "Replace every GPU with this GPU profile");
  sub->add_option(
      "-o,--output", a->output,
      "Write the changed machine's plan (the faster of the same plan and the re-plan) to this file, "
      "and the changed machine beside it "
      "(NAME.machine.yaml); without it, nothing is written");
  sub->add_flag("--json", a->as_json, "Print JSON (docs/json.md)");
  return [&context, a]() { return run_whatif(context, *a); };
}

}  // namespace stowage::cli
