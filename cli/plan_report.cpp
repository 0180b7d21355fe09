#include "cli/plan_report.h"

#include <algorithm>
#include <ostream>
#include <sstream>

#include "cli/output_file.h"
#include "cli/text_table.h"
#include "core/chrome_trace.h"
#include "core/lower.h"
#include "planner/advice.h"
#include "planner/chosen_plan.h"
#include "planner/memory_floor.h"
#include "planner/nvme_wear.h"
#include "planner/pinned_memory.h"
#include "planner/plan_terms.h"
#include "sim/simulator.h"

namespace stowage::cli {
namespace {

using core::Tier;
using nlohmann::json;
using planner::Evaluation;

std::string seconds(double s) { return core::format_seconds(core::Seconds(s)); }

std::string peak(const Evaluation& e, const core::MachineSpec& m, Tier t) {
  if (!e.summary) return "-";
  const int scale = core::ranks_in_scope(t, m.gpu_count);
  return core::format_bytes(e.summary->peak_memory[static_cast<size_t>(t)] * scale);
}

std::string tokens(const Evaluation& e) {
  if (!e.summary) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", e.summary->tokens_per_second);
  return buf;
}

// Why the chosen plan beats the fastest baseline that fits: the lane that
// bounds the baseline and how busy it is under each.
std::string why_it_wins(const planner::PlanResult& r) {
  const Evaluation* base = nullptr;
  for (const Evaluation& b : r.baselines) {
    if (b.fits() && (!base || b.step_seconds() < base->step_seconds())) base = &b;
  }
  const Evaluation& best = *r.best;
  if (base == nullptr) return "no baseline fits this machine; the plan is the only way to train here.";
  if (best.candidate.name == base->candidate.name) {
    return "the best baseline, " + base->candidate.name + ", is already the fastest plan found.";
  }
  const core::Lane lane = base->summary->bounding_lane;
  const size_t i = static_cast<size_t>(lane);
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "%s, the fastest baseline that fits, is bound by %s (busy %.0f%% of its %s step); the plan "
                "brings %s to %.0f%% busy and the step to %s (%.2fx faster).",
                base->candidate.name.c_str(), std::string(core::to_string(lane)).c_str(),
                base->summary->lane_busy[i] * 100, seconds(base->step_seconds()).c_str(),
                std::string(core::to_string(lane)).c_str(), best.summary->lane_busy[i] * 100,
                seconds(best.step_seconds()).c_str(), base->step_seconds() / best.step_seconds());
  return buf;
}

void print_baselines(std::ostream& out, const PlanInputs& in, const planner::PlanResult& r) {
  TextTable t({Align::kLeft, Align::kLeft, Align::kRight, Align::kRight, Align::kRight, Align::kRight, Align::kRight,
               Align::kLeft});
  t.row({"baseline", "fits", "step time", "tokens/s", "gpu peak", "cpu peak", "nvme peak", "note"});
  for (const Evaluation& e : r.baselines) {
    t.row({e.candidate.name, e.fits() ? "yes" : "NO", e.summary ? seconds(e.step_seconds()) : "-", tokens(e),
           peak(e, in.machine, Tier::kGpu), peak(e, in.machine, Tier::kCpu), peak(e, in.machine, Tier::kNvme),
           e.fits() ? "" : e.reason});
  }
  t.print(out, 2);
}

void print_explain(std::ostream& out, const planner::PlanResult& r) {
  out << "\ncandidates considered (" << r.considered.size() << "):\n";
  TextTable t({Align::kRight, Align::kLeft, Align::kRight, Align::kLeft});
  int i = 0;
  for (const Evaluation& e : r.considered) {
    std::string verdict;
    switch (e.verdict) {
      case planner::Verdict::kFits: verdict = r.best && e.candidate.name == r.best->candidate.name ? "CHOSEN" : "fits, slower"; break;
      case planner::Verdict::kOverflows: verdict = "overflows: " + e.reason; break;
      case planner::Verdict::kPruned: verdict = "pruned: " + e.reason; break;
      case planner::Verdict::kBoundedOut: verdict = "skipped: " + e.reason; break;
      case planner::Verdict::kInvalid: verdict = "invalid: " + e.reason; break;
    }
    t.row({std::to_string(++i), e.candidate.name, e.summary ? seconds(e.step_seconds()) : "-", verdict});
  }
  t.print(out, 2);
}

std::string tier_word(Tier t) { return std::string(core::to_string(t)); }
std::string optimizer_word(core::OptimizerDevice d) { return d == core::OptimizerDevice::kGpu ? "gpu" : "cpu"; }

// The chosen plan's placement as a table of layer runs, then what each of
// its terms means.
void print_meaning(std::ostream& out, const PlanInputs& in, const Evaluation& chosen) {
  const core::Workload w(in.model, chosen.candidate.training.sequence_length);
  out << "\nplacement by layer:\n";
  TextTable t({Align::kLeft, Align::kLeft, Align::kLeft, Align::kLeft, Align::kLeft});
  t.row({"layers", "param16", "optimizer states", "optimizer", "gradients"});
  for (const planner::LayerRun& run : planner::runs_by_layer(chosen.candidate.policy, w)) {
    t.row({planner::run_name(run), tier_word(run.placement.param16), tier_word(run.placement.optimizer_states),
           optimizer_word(run.placement.optimizer), tier_word(run.placement.gradients)});
  }
  t.print(out, 2);
  out << "\nwhat the plan means (every term is defined in docs/formats/plan.md):\n";
  for (const std::string& line : planner::plan_terms(chosen.candidate, w, in.machine.gpu_count)) out << "  - " << line << '\n';
}

}  // namespace

json policy_json(const PlanInputs& in, const planner::Candidate& c) {
  const core::Policy& p = c.policy;
  const core::Workload w(in.model, c.training.sequence_length);
  json runs = json::array();
  for (const planner::LayerRun& run : planner::runs_by_layer(p, w)) {
    runs.push_back({{"first", run.first}, {"last", run.last}, {"partitions", run.partitions}, {"layers", run.layers},
                    {"param16", tier_word(run.placement.param16)},
                    {"optimizer_states", tier_word(run.placement.optimizer_states)},
                    {"optimizer", optimizer_word(run.placement.optimizer)},
                    {"gradients", tier_word(run.placement.gradients)}});
  }
  json partitions = json::array();
  const std::vector<core::Partition> parts = core::partitions_of(w, p.sub_group_params);
  for (size_t j = 0; j < parts.size() && j < p.partitions.size(); ++j) {
    const core::PartitionPolicy& x = p.partitions[j];
    partitions.push_back({{"name", core::partition_name(w, parts[j])}, {"params", parts[j].params},
                          {"param16", tier_word(x.param16)}, {"optimizer_states", tier_word(x.optimizer_states)},
                          {"optimizer", optimizer_word(x.optimizer)}, {"gradients", tier_word(x.gradients)}});
  }
  return {{"zero_stage", static_cast<int>(p.stage)},
          {"micro_batch", c.training.micro_batch},
          {"gradient_accumulation", c.training.gradient_accumulation},
          {"sequence_length", c.training.sequence_length},
          {"activation_checkpointing", p.activation_checkpointing},
          {"delayed_update", p.delayed_update},
          {"speculative_update", p.speculative_update},
          {"optimizer_state_precision", std::string(core::to_string(p.optimizer_state_precision))},
          {"h2d_prefetch_depth", p.h2d_prefetch_depth},
          {"nvme_prefetch_depth", p.nvme_prefetch_depth},
          {"staging_buffers", p.staging_buffers},
          {"sub_group_params", p.sub_group_params},
          {"gather_params", p.gather_params},
          {"pinned_memory", p.pinned_memory},
          {"placement_by_layer", runs},
          {"partitions", partitions}};
}

std::vector<std::string> partition_names(const PlanInputs& in, const planner::Candidate& c) {
  const core::Workload w(in.model, c.training.sequence_length);
  std::vector<std::string> out;
  for (const core::Partition& part : core::partitions_of(w, c.policy.sub_group_params)) {
    out.push_back(core::partition_name(w, part));
  }
  return out;
}

void print_plan(std::ostream& out, const PlanInputs& in, const planner::PlanResult& r, bool explain) {
  out << "Plan for " << in.model.label << " on " << in.machine.label << "\n  training " << in.training.name << ": "
      << in.training.micro_batch << " x " << in.training.sequence_length << " tokens, accumulate "
      << in.training.gradient_accumulation << ", checkpointing " << (in.training.activation_checkpointing ? "on" : "off")
      << "\n\n";
  const std::vector<std::string> warnings = planner::plan_warnings(in, r);
  for (const std::string& w : warnings) out << "warning: " << w << '\n';
  if (!warnings.empty()) out << '\n';
  if (r.best) {
    const Evaluation& b = *r.best;
    const sim::Summary& s = *b.summary;
    out << "chosen: " << b.candidate.name << "\n";
    TextTable t({Align::kLeft, Align::kLeft});
    const std::string lane(core::to_string(s.bounding_lane));
    // sim/summary.h: the step is that lane's work, which fell behind in the steps simulated.
    t.row({"step time", seconds(b.step_seconds()) + (s.falls_behind ? " (" + lane + "'s work per step: it falls behind)"
                                                                    : " (bound by " + lane + ")")});
    t.row({"throughput", tokens(b) + " tokens/s"});
    t.row({"model FLOP/s", core::format_flops_rate(core::FlopsPerSecond(s.model_flops_per_second_per_gpu)) + " per GPU (6·N·T)"});
    for (Tier tier : core::kAllTiers) {
      const int scale = core::ranks_in_scope(tier, in.machine.gpu_count);
      const core::Bytes cap = planner::rank_capacity(in.machine)[static_cast<size_t>(tier)] * scale;
      t.row({"peak " + std::string(core::to_string(tier)),
             core::format_bytes(s.peak_memory[static_cast<size_t>(tier)] * scale) + " of " + core::format_bytes(cap) +
                 (tier == Tier::kGpu ? " per GPU" : "")});
    }
    const planner::NvmeWear wear = planner::nvme_wear(b.nvme_bytes_written, s.step_time, in.machine);
    if (wear.days_to_rated) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "%s per step; rated endurance reached in %.0f days of training",
                    core::format_bytes(wear.written_per_step).c_str(), *wear.days_to_rated);
      t.row({"nvme writes", buf});
    }
    t.print(out, 2);
    print_meaning(out, in, b);
  } else {
    out << "NOTHING FITS.";
    if (const Evaluation* c = planner::closest(r)) {
      const bool gpu = c->overflow == Tier::kGpu;
      out << " The closest candidate (" << c->candidate.name << ") needs " << (c->holders.empty() ? "at least " : "")
          << core::format_bytes(c->capacity + c->overflow_bytes) << " of " << core::to_string(*c->overflow)
          << (gpu ? " per GPU" : "") << " where there are " << core::format_bytes(c->capacity);
      if (c->holders.empty()) {
        out << " (memory model).\n";
      } else {
        if (c->overflow_op.empty()) {
          out << ", exceeded before any op runs; " << (gpu ? "per GPU" : "per rank")
              << " the tier holds from the start:\n";
        } else {
          out << ", first exceeded when '" << c->overflow_op << "' allocates; "
              << (gpu ? "per GPU" : "per rank") << " the tier then holds:\n";
        }
        for (const auto& [who, bytes] : c->holders) out << "    " << core::format_bytes(bytes) << "  " << who << '\n';
      }
    }
    out << planner::advice_text(planner::advise(in.machine, in.model, in.training, r, in.spare_drive));
  }
  out << "\nbaselines on the same simulator:\n";
  print_baselines(out, in, r);
  if (r.best) out << "\nwhy: " << why_it_wins(r) << '\n';
  if (explain) print_explain(out, r);
}

json evaluation_json(const PlanInputs& in, const Evaluation& e) {
  json j = {{"name", e.candidate.name}, {"fits", e.fits()}, {"reason", e.reason}};
  if (e.summary) {
    j["step_time_s"] = e.step_seconds();
    j["tokens_per_second"] = e.summary->tokens_per_second;
    j["model_flops_per_second_per_gpu"] = e.summary->model_flops_per_second_per_gpu;
    j["bounding_lane"] = core::to_string(e.summary->bounding_lane);
    j["falls_behind"] =
        e.summary->falls_behind ? json(core::to_string(*e.summary->falls_behind)) : json(nullptr);
    for (Tier t : core::kAllTiers) {
      const int scale = core::ranks_in_scope(t, in.machine.gpu_count);
      j["peak_bytes"][std::string(core::to_string(t))] =
          (e.summary->peak_memory[static_cast<size_t>(t)] * scale).count();
    }
  }
  return j;
}

json plan_side_json(const PlanInputs& in, const Evaluation* plan, const std::vector<std::string>& warnings) {
  json out = {{"machine", in.machine_name}, {"model", in.model_name}, {"training", in.training_name}};
  out["chosen"] = plan ? evaluation_json(in, *plan) : json(nullptr);
  if (plan) {
    out["chosen"]["policy"] = policy_json(in, plan->candidate);
    out["chosen"]["terms"] = planner::plan_terms(
        plan->candidate, core::Workload(in.model, plan->candidate.training.sequence_length),
        in.machine.gpu_count);
  }
  if (plan && plan->fits()) {
    const planner::NvmeWear w =
        planner::nvme_wear(plan->nvme_bytes_written, plan->summary->step_time, in.machine);
    out["nvme_bytes_written_per_step"] = w.written_per_step.count();
    out["nvme_days_to_rated_endurance"] = w.days_to_rated ? json(*w.days_to_rated) : json(nullptr);
  }
  out["warnings"] = warnings;
  return out;
}

json plan_json(const PlanInputs& in, const planner::PlanResult& r) {
  json out = plan_side_json(in, r.best ? &*r.best : nullptr, planner::plan_warnings(in, r));
  out["baselines"] = json::array();
  for (const Evaluation& e : r.baselines) out["baselines"].push_back(evaluation_json(in, e));
  out["candidates_considered"] = r.considered.size();
  return out;
}

core::Diagnostics save_plan(const PlanInputs& in, const Evaluation& chosen, const std::string& path,
                            const std::filesystem::path& profiles_root, std::ostream& warnings) {
  const core::PlanFile plan = core::with_references_relative_to(planner::to_plan_file(in, chosen), path);
  core::Diagnostics d =
      write_file_atomically(path, core::write_plan(plan, partition_names(in, chosen.candidate)));
  if (d.empty()) {
    for (const std::string& w : core::references_refused_on_reading(plan, path, profiles_root)) {
      warnings << "warning: " << w << '\n';
    }
  }
  return d;
}

core::Diagnostics write_plan_trace(const PlanInputs& in, const Evaluation& chosen, const std::filesystem::path& path) {
  const core::Workload w(in.model, chosen.candidate.training.sequence_length);
  auto schedule = core::lower(chosen.candidate.policy, in.machine, w, chosen.candidate.training, {.steps = core::steady_state_steps(chosen.candidate.policy)});
  if (!schedule) return schedule.error();
  const sim::Prediction p = sim::simulate(*schedule, in.machine);
  core::TraceOptions options = sim::predicted_trace_options(
      p.summary, "predicted: " + in.model.name + " on " + in.machine.name + ", " + chosen.candidate.name,
      in.machine);
  options.warnings = planner::simulation_warnings(in, chosen.candidate.policy, *schedule, p.summary);
  std::ostringstream text;
  core::write_chrome_trace(*schedule, p.timeline, options, text);
  return write_file_atomically(path, text.str());
}

}  // namespace stowage::cli
