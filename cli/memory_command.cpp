// `stowage memory --machine M --model X [--training T]`: bytes on each tier
// for each standard placement against capacity, whether it fits and, when
// not, which tier overflows and by how much. By default the figures are the
// simulator's peak for the placement's schedule (the schedule `stowage
// simulate --placement` runs), with what each tier holds at its peak, so the
// two commands cannot disagree (issue 11); `--convention deepspeed` and
// `--model-states-only` print formulas instead (core/memory_estimate.h).
#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/placement_option.h"
#include "cli/text_table.h"
#include "core/lower.h"
#include "core/memory_at_peak.h"
#include "core/memory_estimate.h"
#include "core/placement.h"
#include "core/policy.h"
#include "planner/deepspeed_target.h"
#include "planner/profile_inputs.h"
#include "sim/simulator.h"

namespace stowage::cli {
namespace {

using core::Bytes;
using core::Tier;
using nlohmann::json;

struct MemoryArgs {
  std::string machine, model, training = "default", placement = "all";
  int64_t batch = 0, seq = 0;  // 0: as the training profile says
  std::string convention = "stowage";
  bool model_states_only = false;
  bool as_json = false;
};

std::string gb(Bytes b) { return core::format_bytes(b); }

// Capacities that are whole binary units (a "24 GB" GPU has 24 GiB) also
// show that figure, so the number matches what the user bought.
std::string capacity(Bytes b) {
  const std::string binary = core::format_bytes(b, core::Prefix::kBinary);
  if (b.count() == 0 || core::parse_bytes(binary).value_or(Bytes(-1)) != b) return gb(b);
  return gb(b) + " (" + binary + ")";
}

// 13015864320 -> "13,015,864,320"
std::string grouped(int64_t n) {
  std::string digits = std::to_string(n);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<size_t>(i), ",");
  return digits;
}

std::string scope_of(Tier t) { return t == Tier::kGpu ? "per GPU" : "per machine"; }

std::string status_of(const core::TierBudget& t) {
  if (t.fits()) return "fits";
  if (t.capacity.count() == 0) return "none available (needs " + gb(t.used) + ")";
  return "OVERFLOWS by " + gb(t.overflow());
}

std::string verdict(const std::array<core::TierBudget, 3>& tiers) {
  if (std::ranges::all_of(tiers, [](const core::TierBudget& t) { return t.fits(); })) return "fits";
  std::string v = "does not fit:";
  for (const core::TierBudget& t : tiers) {
    if (!t.fits()) v += " " + std::string(core::to_string(t.tier)) + " " + status_of(t) + ";";
  }
  v.pop_back();
  return v;
}

void print_heading(std::ostream& out, const core::Placement& p) {
  out << '\n' << p.name << ": " << p.description << " (ZeRO stage " << static_cast<int>(p.stage) << ")\n";
}

void print_tiers(std::ostream& out, const std::array<core::TierBudget, 3>& budgets, const std::string& needs) {
  TextTable tiers({Align::kLeft, Align::kRight, Align::kRight, Align::kLeft, Align::kLeft});
  tiers.row({"tier", needs, "capacity", "scope", "status"});
  for (const core::TierBudget& t : budgets) {
    tiers.row({std::string(core::to_string(t.tier)), gb(t.used), capacity(t.capacity), scope_of(t.tier), status_of(t)});
  }
  tiers.print(out, 2);
}

void print_estimate(std::ostream& out, const core::MemoryEstimate& e) {
  print_heading(out, e.placement);
  TextTable lines({Align::kLeft, Align::kLeft, Align::kRight});
  lines.row({"tier", "item", "bytes"});
  for (const core::MemoryLine& l : e.lines) lines.row({std::string(core::to_string(l.tier)), l.item, gb(l.bytes)});
  lines.print(out, 2);
  out << '\n';
  print_tiers(out, e.tiers, "needs");
  for (Tier t : core::kAllTiers) {
    const Bytes states = e.bytes_of(t, core::TensorClass::kMaster32) + e.bytes_of(t, core::TensorClass::kAdamM) +
                         e.bytes_of(t, core::TensorClass::kAdamV);
    if (states.count() > 0) {
      out << "  optimizer states (master32 + adam_m + adam_v): " << gb(states) << " on " << core::to_string(t) << '\n';
    }
  }
  out << "  => " << verdict(e.tiers) << '\n';
}

json to_json(const core::MemoryEstimate& e) {
  json tiers = json::object();
  for (const core::TierBudget& t : e.tiers) {
    tiers[std::string(core::to_string(t.tier))] = {
        {"used_bytes", t.used.count()}, {"capacity_bytes", t.capacity.count()},
        {"overflow_bytes", t.overflow().count()}, {"fits", t.fits()},
        {"scope", t.tier == Tier::kGpu ? "per_gpu" : "per_machine"}};
  }
  json lines = json::array();
  for (const core::MemoryLine& l : e.lines) {
    lines.push_back({{"tier", core::to_string(l.tier)}, {"item", l.item},
                     {"tensor_class", l.tensor_class ? json(core::to_string(*l.tensor_class)) : json(nullptr)},
                     {"bytes", l.bytes.count()}});
  }
  const std::optional<Tier> overflow = e.first_overflow();
  return {{"name", e.placement.name}, {"description", e.placement.description},
          {"zero_stage", static_cast<int>(e.placement.stage)}, {"fits", e.fits()},
          {"first_overflow", overflow ? json(core::to_string(*overflow)) : json(nullptr)},
          {"tiers", tiers}, {"lines", lines}};
}

// A placement's schedule lowered and simulated as `stowage simulate
// --placement` does it (the same policy, training and steps), and what each
// tier holds at its peak.
struct SimulatedMemory {
  core::Placement placement;
  int steps = 0;
  int ranks = 1;
  std::array<core::TierPeak, 3> peaks;     // per rank, by Tier
  std::array<Bytes, 3> capacity;           // per rank, by Tier
  std::optional<std::string> overflow_op;  // the op whose allocation first crossed a capacity
  std::optional<std::string> cannot_run;   // why the placement cannot be lowered for this machine

  // A per-rank figure as the user reads it: per GPU, or per machine.
  [[nodiscard]] Bytes shown(Tier t, Bytes per_rank) const { return per_rank * core::ranks_in_scope(t, ranks); }
  [[nodiscard]] std::array<core::TierBudget, 3> budgets() const {
    std::array<core::TierBudget, 3> out;
    for (Tier t : core::kAllTiers) {
      const size_t i = static_cast<size_t>(t);
      out[i] = {t, shown(t, peaks[i].peak), shown(t, capacity[i])};
    }
    return out;
  }
};

SimulatedMemory simulate_memory(const core::Placement& placement, const core::MachineSpec& machine,
                                              const core::Workload& workload, const core::TrainingSpec& training) {
  const core::Policy policy = core::policy_for(placement, workload, training);
  const int steps = core::steady_state_steps(policy);
  auto schedule = core::lower(policy, machine, workload, training, {.steps = steps});
  if (!schedule) {
    const core::Diagnostic& d = schedule.error().front();
    return SimulatedMemory{.placement = placement, .cannot_run = d.expected.empty() ? d.what : d.what + " (" + d.expected + ")"};
  }
  const sim::Prediction p = sim::simulate(*schedule, machine);
  SimulatedMemory out{.placement = placement, .steps = steps, .ranks = schedule->ranks,
                      .peaks = core::memory_at_peak(*schedule, p.timeline), .capacity = schedule->capacity,
                      .overflow_op = std::nullopt, .cannot_run = std::nullopt};
  if (p.engine.overflow) out.overflow_op = schedule->op(p.engine.overflow->op).name;
  return out;
}

// What the tiers hold at their peaks as account lines, per GPU or per
// machine; optimizer states split into their three classes (4 B per
// parameter each, so a third each).
std::vector<core::MemoryLine> lines_at_peak(const SimulatedMemory& s) {
  std::vector<core::MemoryLine> out;
  for (const core::TierPeak& tier : s.peaks) {
    for (const core::HeldItem& h : tier.held) {
      const Bytes bytes = s.shown(tier.tier, h.bytes);
      if (h.item != core::MemoryItem::kOptimizerStates) {
        out.push_back({tier.tier, std::string(core::to_string(h.item)), core::tensor_class_of(h.item), bytes});
        continue;
      }
      const Bytes third(bytes.count() / 3);
      out.push_back({tier.tier, "master32", core::TensorClass::kMaster32, bytes - third - third});
      out.push_back({tier.tier, "adam_m", core::TensorClass::kAdamM, third});
      out.push_back({tier.tier, "adam_v", core::TensorClass::kAdamV, third});
    }
    if (tier.unknown.count() != 0) out.push_back({tier.tier, "other", std::nullopt, s.shown(tier.tier, tier.unknown)});
  }
  return out;
}

void print_simulated(std::ostream& out, const SimulatedMemory& s) {
  print_heading(out, s.placement);
  if (s.cannot_run) {
    out << "  => cannot run on this machine: " << *s.cannot_run << '\n';
    return;
  }
  const std::array<core::TierBudget, 3> budgets = s.budgets();
  print_tiers(out, budgets, "peak");
  out << "\n  what each tier holds at its peak (first reached at";
  for (const core::TierPeak& tier : s.peaks) {
    out << (tier.tier == Tier::kGpu ? " " : ", ") << core::to_string(tier.tier) << " "
        << core::format_seconds(core::Seconds(static_cast<double>(tier.at) * 1e-9));
  }
  out << " of " << s.steps << " simulated steps):\n";
  TextTable lines({Align::kLeft, Align::kLeft, Align::kRight});
  lines.row({"tier", "item", "bytes"});
  for (const core::MemoryLine& l : lines_at_peak(s)) lines.row({std::string(core::to_string(l.tier)), l.item, gb(l.bytes)});
  lines.print(out, 2);
  for (const core::TierPeak& tier : s.peaks) {
    for (const core::HeldItem& h : tier.held) {
      if (h.item == core::MemoryItem::kOptimizerStates) {
        out << "  optimizer states (master32 + adam_m + adam_v): " << gb(s.shown(tier.tier, h.bytes)) << " on "
            << core::to_string(tier.tier) << '\n';
      }
    }
  }
  if (s.overflow_op) out << "  first over capacity when '" << *s.overflow_op << "' allocates\n";
  out << "  => " << verdict(budgets) << '\n';
}

json to_json(const SimulatedMemory& s) {
  if (s.cannot_run) {
    return {{"name", s.placement.name}, {"description", s.placement.description},
            {"zero_stage", static_cast<int>(s.placement.stage)}, {"fits", false}, {"first_overflow", nullptr},
            {"source", "simulated"}, {"cannot_run", *s.cannot_run}};
  }
  const std::array<core::TierBudget, 3> budgets = s.budgets();
  json tiers = json::object();
  std::optional<Tier> first_overflow;
  for (const core::TierBudget& t : budgets) {
    if (!t.fits() && !first_overflow) first_overflow = t.tier;
    tiers[std::string(core::to_string(t.tier))] = {
        {"used_bytes", t.used.count()}, {"capacity_bytes", t.capacity.count()},
        {"overflow_bytes", t.overflow().count()}, {"fits", t.fits()},
        {"scope", t.tier == Tier::kGpu ? "per_gpu" : "per_machine"},
        {"peak_time_ns", s.peaks[static_cast<size_t>(t.tier)].at}};
  }
  json lines = json::array();
  for (const core::MemoryLine& l : lines_at_peak(s)) {
    lines.push_back({{"tier", core::to_string(l.tier)}, {"item", l.item},
                     {"tensor_class", l.tensor_class ? json(core::to_string(*l.tensor_class)) : json(nullptr)},
                     {"bytes", l.bytes.count()}});
  }
  return {{"name", s.placement.name}, {"description", s.placement.description},
          {"zero_stage", static_cast<int>(s.placement.stage)}, {"fits", !first_overflow},
          {"first_overflow", first_overflow ? json(core::to_string(*first_overflow)) : json(nullptr)},
          {"source", "simulated"}, {"steps_simulated", s.steps},
          {"overflow_op", s.overflow_op ? json(*s.overflow_op) : json(nullptr)},
          {"tiers", tiers}, {"lines", lines}};
}

// With --convention deepspeed: the buffers DeepSpeed's runtime allocates
// for the placement beside what its estimator counts (the estimator leaves
// buffers out), from the same rules the exporter and `plan --target
// deepspeed` use (planner/deepspeed_rules.h). Empty when DeepSpeed cannot
// take the placement on this machine.
std::vector<planner::deepspeed::RuntimePool> deepspeed_pools(const core::Placement& p, const core::MachineSpec& m,
                                                             const core::ModelSpec& model,
                                                             const core::TrainingSpec& training) {
  const core::Workload w(model, training.sequence_length);
  const planner::Candidate c{.name = p.name, .policy = core::policy_for(p, w, training), .training = training,
                             .runtime_pools = {}};
  auto t = planner::deepspeed_target(c, m, model);
  return t ? t->pools : std::vector<planner::deepspeed::RuntimePool>{};
}

void print_pools(std::ostream& out, const std::vector<planner::deepspeed::RuntimePool>& pools, int gpus) {
  out << "  DeepSpeed's runtime also allocates, per rank (not in its estimator; docs/deepspeed.md):\n";
  for (const auto& pool : pools) {
    out << "    " << core::to_string(pool.tier) << "  " << gb(pool.bytes) << "  " << pool.name
        << (pool.pinned ? " (pinned)" : "") << '\n';
  }
  out << "    pinned host memory, all ranks: " << gb(planner::deepspeed::pinned_bytes(pools) * std::max(1, gpus))
      << '\n';
}

json pools_json(const std::vector<planner::deepspeed::RuntimePool>& pools) {
  json out = json::array();
  for (const auto& pool : pools) {
    out.push_back({{"name", pool.name}, {"tier", core::to_string(pool.tier)}, {"bytes", pool.bytes.count()},
                   {"pinned", pool.pinned}, {"source", pool.source}});
  }
  return out;
}

// "all": the three standard placements; "deepspeed": every placement
// DeepSpeed's configuration can state; else the one named (checked by the
// option's validator).
std::vector<core::Placement> chosen_placements(const std::string& which, int gpus) {
  if (which == "all") return core::standard_placements(gpus);
  if (which == "deepspeed") return core::deepspeed_placements();
  if (auto p = core::placement_named(which, gpus)) return {*p};
  return {};
}

int print_json(const Context& context, const MemoryArgs& args, const planner::ProfileInputs& in, const json& placements) {
  const core::Workload workload(in.model, in.training.sequence_length);
  *context.out << json{{"machine", in.machine.name}, {"gpu_count", in.machine.gpu_count},
                       {"model", in.model.name}, {"training", in.training.name},
                       {"params", workload.total_params()},
                       {"largest_module_params", workload.largest_module_params()},
                       {"micro_batch", in.training.micro_batch},
                       {"sequence_length", in.training.sequence_length}, {"convention", args.convention},
                       {"scope", args.model_states_only ? "model_states" : "everything"},
                       {"placements", placements}}.dump(2)
               << '\n';
  return kExitOk;
}

void print_header(std::ostream& out, const MemoryArgs& args, const planner::ProfileInputs& in,
                  const core::MemoryOptions& options) {
  const core::Workload workload(in.model, in.training.sequence_length);
  const bool simulated = options.convention == core::Convention::kStowage && options.scope == core::Scope::kEverything;
  out << "Memory for " << in.model.label << " (" << grouped(workload.total_params()) << " parameters) on "
      << in.machine.label << '\n'
      << "  training: " << in.training.micro_batch << " x " << in.training.sequence_length
      << " tokens per micro-batch, " << (in.training.precision == core::Precision::kBf16 ? "bf16" : "fp16")
      << ", activation checkpointing " << (in.training.activation_checkpointing ? "on" : "off") << '\n';
  if (simulated) {
    out << "  accounting: the simulated peak of each placement's schedule (what `stowage simulate --placement` "
           "reports), and what each tier holds at that moment; GPU figures are per GPU, CPU and NVMe per machine\n";
    return;
  }
  out << "  accounting: " << (options.convention == core::Convention::kStowage ? "stowage" : "deepspeed estimator")
      << (args.model_states_only ? " formula, model states only" : " formula, model states + activations + buffers")
      << "; GPU figures are per GPU, CPU and NVMe per machine\n";
}

// The formulas: DeepSpeed's estimator, or a count of model states.
int print_formulas(const Context& context, const MemoryArgs& args, const planner::ProfileInputs& in,
                   const core::MemoryOptions& options) {
  const core::Workload workload(in.model, in.training.sequence_length);
  std::vector<core::MemoryEstimate> estimates;
  std::vector<core::Placement> uncovered;  // placements DeepSpeed's estimator has no formula for
  for (const core::Placement& p : chosen_placements(args.placement, in.machine.gpu_count)) {
    const bool standard = std::ranges::any_of(core::standard_placements(in.machine.gpu_count),
                                              [&](const core::Placement& s) { return s.name == p.name; });
    if (options.convention == core::Convention::kDeepSpeedEstimator && !standard &&
        !core::deepspeed_estimator_covers(p)) {
      uncovered.push_back(p);
      continue;
    }
    estimates.push_back(core::estimate_memory(workload, in.machine, in.training, p, options));
  }
  std::ostream& out = *context.out;
  constexpr const char* kUncovered =
      "DeepSpeed's estimator has no formula for this placement (it covers stages 1 and 2 with or without CPU "
      "offload, and stage 3 without offload, with the optimizer on the CPU, or with optimizer and parameters on "
      "the CPU); its simulated figures are what `stowage memory` prints without --convention";
  if (args.as_json) {
    json placements = json::array();
    for (const core::Placement& p : uncovered) {
      placements.push_back({{"name", p.name}, {"description", p.description},
                            {"zero_stage", static_cast<int>(p.stage)}, {"source", "formula"},
                            {"not_covered", kUncovered}});
    }
    for (const auto& e : estimates) {
      placements.push_back(to_json(e));
      placements.back()["source"] = "formula";
      if (args.convention == "deepspeed") {
        placements.back()["deepspeed_runtime_pools"] =
            pools_json(deepspeed_pools(e.placement, in.machine, in.model, in.training));
      }
    }
    return print_json(context, args, in, placements);
  }
  print_header(out, args, in, options);
  for (const core::Placement& p : uncovered) {
    print_heading(out, p);
    out << "  " << kUncovered << '\n';
  }
  for (const auto& e : estimates) {
    print_estimate(out, e);
    if (args.convention == "deepspeed") {
      print_pools(out, deepspeed_pools(e.placement, in.machine, in.model, in.training), in.machine.gpu_count);
    }
  }
  return kExitOk;
}

int run_memory(const Context& context, const MemoryArgs& args) {
  auto inputs = planner::load_inputs(context.catalog(), args.machine, args.model, args.training);
  if (!inputs) return report(context, inputs.error());
  core::TrainingSpec& training = inputs->training;
  if (args.batch > 0) training.micro_batch = args.batch;
  if (args.seq > 0) training.sequence_length = args.seq;
  const core::MemoryOptions options{
      .convention = args.convention == "deepspeed" ? core::Convention::kDeepSpeedEstimator : core::Convention::kStowage,
      .scope = args.model_states_only ? core::Scope::kModelStates : core::Scope::kEverything};
  if (options.convention != core::Convention::kStowage || options.scope != core::Scope::kEverything) {
    return print_formulas(context, args, *inputs, options);
  }
  const core::Workload workload(inputs->model, training.sequence_length);
  std::vector<SimulatedMemory> simulated;
  for (const core::Placement& p : chosen_placements(args.placement, inputs->machine.gpu_count)) {
    simulated.push_back(simulate_memory(p, inputs->machine, workload, training));
  }
  if (args.as_json) {
    json placements = json::array();
    for (const SimulatedMemory& s : simulated) placements.push_back(to_json(s));
    return print_json(context, args, *inputs, placements);
  }
  print_header(*context.out, args, *inputs, options);
  for (const SimulatedMemory& s : simulated) print_simulated(*context.out, s);
  return kExitOk;
}

}  // namespace

CommandBody add_memory_command(CLI::App& app, Context& context) {
  CLI::App* sub = app.add_subcommand("memory", "Bytes on each tier for each standard placement, and whether it fits");
  auto args = std::make_shared<MemoryArgs>();
  sub->add_option("--machine", args->machine, "Machine profile name or YAML file")->required();
  sub->add_option("--model", args->model, "Model profile name or YAML file")->required();
  sub->add_option("--training", args->training, "Training profile name or YAML file")->capture_default_str();
  sub->add_option("--batch", args->batch, "Micro-batch size (overrides the training profile)")
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000}));
  sub->add_option("--seq", args->seq, "Sequence length (overrides the training profile)")
      ->check(CLI::Range(int64_t{1}, int64_t{100'000'000}));
  sub->add_option("--placement", args->placement,
                  "all (the three standard placements), deepspeed (every DeepSpeed ZeRO placement), or one by "
                  "name: all-gpu, zero-offload, zero-infinity, zero-0..zero-3, zero-S-optimizer-cpu, "
                  "zero-3-optimizer-{cpu,nvme}[-params-{cpu,nvme}], zero-3-params-{cpu,nvme}, "
                  "zero-3-optimizer-cpu[-params-T]-ratio-R (0 < R < 1)")
      ->check(placement_validator({"all", "deepspeed"}))
      ->capture_default_str();
  sub->add_option("--convention", args->convention,
                  "stowage: what Stowage allocates; deepspeed: DeepSpeed's estimator formulas")
      ->check(CLI::IsMember({"stowage", "deepspeed"}))
      ->capture_default_str();
  sub->add_flag("--model-states-only", args->model_states_only, "Count only parameters, gradients and optimizer states");
  sub->add_flag("--json", args->as_json, "Print JSON (docs/json.md)");
  return [&context, args]() { return run_memory(context, *args); };
}

}  // namespace stowage::cli
