// `stowage memory --machine M --model X [--training T]`: bytes on each tier
// for each standard placement against capacity, whether it fits and, when
// not, which tier overflows and by how much.
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/profile_inputs.h"
#include "cli/text_table.h"
#include "core/memory_estimate.h"
#include "core/placement.h"
#include "core/policy.h"
#include "planner/deepspeed_target.h"

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

std::string verdict(const core::MemoryEstimate& e) {
  if (e.fits()) return "fits";
  std::string v = "does not fit:";
  for (const core::TierBudget& t : e.tiers) {
    if (!t.fits()) v += " " + std::string(core::to_string(t.tier)) + " " + status_of(t) + ";";
  }
  v.pop_back();
  return v;
}

void print_estimate(std::ostream& out, const core::MemoryEstimate& e) {
  out << '\n' << e.placement.name << ": " << e.placement.description << " (ZeRO stage "
      << static_cast<int>(e.placement.stage) << ")\n";
  TextTable lines({Align::kLeft, Align::kLeft, Align::kRight});
  lines.row({"tier", "item", "bytes"});
  for (const core::MemoryLine& l : e.lines) lines.row({std::string(core::to_string(l.tier)), l.item, gb(l.bytes)});
  lines.print(out, 2);
  out << '\n';
  TextTable tiers({Align::kLeft, Align::kRight, Align::kRight, Align::kLeft, Align::kLeft});
  tiers.row({"tier", "needs", "capacity", "scope", "status"});
  for (const core::TierBudget& t : e.tiers) {
    tiers.row({std::string(core::to_string(t.tier)), gb(t.used), capacity(t.capacity), scope_of(t.tier), status_of(t)});
  }
  tiers.print(out, 2);
  for (Tier t : core::kAllTiers) {
    const Bytes states = e.bytes_of(t, core::TensorClass::kMaster32) + e.bytes_of(t, core::TensorClass::kAdamM) +
                         e.bytes_of(t, core::TensorClass::kAdamV);
    if (states.count() > 0) {
      out << "  optimizer states (master32 + adam_m + adam_v): " << gb(states) << " on " << core::to_string(t) << '\n';
    }
  }
  out << "  => " << verdict(e) << '\n';
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

std::vector<core::Placement> chosen_placements(const std::string& which, int gpus) {
  std::vector<core::Placement> all = core::standard_placements(gpus);
  if (which == "all") return all;
  std::erase_if(all, [&](const core::Placement& p) { return p.name != which; });
  return all;
}

int run_memory(const Context& context, const MemoryArgs& args) {
  auto inputs = load_inputs(context.catalog(), args.machine, args.model, args.training);
  if (!inputs) return report(context, inputs.error());
  const core::MachineSpec& machine = inputs->machine;
  const core::ModelSpec& model = inputs->model;
  core::TrainingSpec& training = inputs->training;
  if (args.batch > 0) training.micro_batch = args.batch;
  if (args.seq > 0) training.sequence_length = args.seq;

  const core::Workload workload(model, training.sequence_length);
  const core::MemoryOptions options{
      .convention = args.convention == "deepspeed" ? core::Convention::kDeepSpeedEstimator : core::Convention::kStowage,
      .scope = args.model_states_only ? core::Scope::kModelStates : core::Scope::kEverything};
  std::vector<core::MemoryEstimate> estimates;
  for (const core::Placement& p : chosen_placements(args.placement, machine.gpu_count)) {
    estimates.push_back(core::estimate_memory(workload, machine, training, p, options));
  }

  std::ostream& out = *context.out;
  if (args.as_json) {
    json placements = json::array();
    for (const auto& e : estimates) {
      placements.push_back(to_json(e));
      if (args.convention == "deepspeed") {
        placements.back()["deepspeed_runtime_pools"] = pools_json(deepspeed_pools(e.placement, machine, model, training));
      }
    }
    out << json{{"machine", machine.name}, {"model", model.name}, {"training", training.name},
                {"params", workload.total_params()}, {"micro_batch", training.micro_batch},
                {"sequence_length", training.sequence_length}, {"convention", args.convention},
                {"scope", args.model_states_only ? "model_states" : "everything"},
                {"placements", placements}}.dump(2)
        << '\n';
    return kExitOk;
  }
  out << "Memory for " << model.label << " (" << grouped(workload.total_params()) << " parameters) on "
      << machine.label << '\n'
      << "  training: " << training.micro_batch << " x " << training.sequence_length << " tokens per micro-batch, "
      << (training.precision == core::Precision::kBf16 ? "bf16" : "fp16") << ", activation checkpointing "
      << (training.activation_checkpointing ? "on" : "off") << '\n'
      << "  accounting: " << (options.convention == core::Convention::kStowage ? "stowage" : "deepspeed estimator")
      << (args.model_states_only ? ", model states only" : ", model states + activations + buffers")
      << "; GPU figures are per GPU, CPU and NVMe per machine\n";
  for (const auto& e : estimates) {
    print_estimate(out, e);
    if (args.convention == "deepspeed") {
      print_pools(out, deepspeed_pools(e.placement, machine, model, training), machine.gpu_count);
    }
  }
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
  sub->add_option("--placement", args->placement, "One standard placement, or all")
      ->check(CLI::IsMember({"all", "all-gpu", "zero-offload", "zero-infinity"}))
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
