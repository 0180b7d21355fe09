#include "planner/search.h"

#include <algorithm>
#include <array>
#include <set>
#include <thread>

#include "core/gather_pieces.h"
#include "planner/deepspeed_target.h"
#include "planner/memory_floor.h"
#include "planner/run_ahead.h"
#include "planner/simulated.h"
#include "planner/step_bound.h"

namespace stowage::planner {
namespace {

using core::OptimizerDevice;
using core::PartitionPolicy;
using core::Tier;

// The training shapes to try: as given, then with the micro-batch doubled or
// halved at the same tokens per step, each with checkpointing toggled.
std::vector<core::TrainingSpec> training_shapes(const core::TrainingSpec& t, const SearchOptions& o) {
  std::vector<core::TrainingSpec> micro = {t};
  if (o.vary_micro_batch) {
    if (t.gradient_accumulation % 2 == 0) {
      core::TrainingSpec bigger = t;
      bigger.micro_batch *= 2;
      bigger.gradient_accumulation /= 2;
      micro.push_back(bigger);
    }
    if (t.micro_batch % 2 == 0) {
      core::TrainingSpec smaller = t;
      smaller.micro_batch /= 2;
      smaller.gradient_accumulation *= 2;
      micro.push_back(smaller);
    }
  }
  std::vector<core::TrainingSpec> out;
  for (const core::TrainingSpec& m : micro) {
    out.push_back(m);
    if (o.vary_checkpointing) {
      core::TrainingSpec other = m;
      other.activation_checkpointing = !m.activation_checkpointing;
      out.push_back(other);
    }
  }
  return out;
}

std::string describe(const Candidate& c, int gpu_states, int cpu_states, int nvme_states) {
  const core::Policy& p = c.policy;
  std::string s = "micro " + std::to_string(c.training.micro_batch) + "x" + std::to_string(c.training.gradient_accumulation) +
                  (p.activation_checkpointing ? ", ckpt" : ", no ckpt") + ", zero-" +
                  std::to_string(static_cast<int>(p.stage)) + ", params " +
                  std::string(core::to_string(p.partitions.front().param16)) + ", states gpu/cpu/nvme " +
                  std::to_string(gpu_states) + "/" + std::to_string(cpu_states) + "/" + std::to_string(nvme_states);
  if (p.delayed_update) s += ", delayed update";
  s += ", prefetch " + std::to_string(p.h2d_prefetch_depth);
  if (p.gather_params > 0) s += ", gathered by parameter (" + std::to_string(p.gather_params) + " per piece)";
  return s;
}

// The candidates as `target` runs them, each once.
std::vector<Candidate> as_run_by(Target target, std::vector<Candidate> candidates, const core::MachineSpec& machine,
                                 const core::ModelSpec& model) {
  if (target == Target::kStowage) return candidates;
  std::vector<Candidate> out;
  std::set<std::string> seen;
  for (const Candidate& c : candidates) {
    std::optional<Candidate> run = as_run_by(target, c, machine, model);
    if (!run) continue;
    run->name = describe(*run);
    if (seen.insert(run->name).second) out.push_back(std::move(*run));
  }
  return out;
}

// Partition j keeps its optimizer on the GPU when j < on_gpu. The lowest
// layers' gradients arrive last in backward, so their optimizer would be the
// step's tail on the CPU: they are the first to keep on the GPU, and the
// first to keep in CPU RAM rather than on NVMe.
PartitionPolicy partition_policy(Tier params, size_t j, size_t on_gpu, size_t on_cpu) {
  if (j < on_gpu) return {params, Tier::kGpu, OptimizerDevice::kGpu, Tier::kGpu};
  const Tier states = j < on_gpu + on_cpu ? Tier::kCpu : Tier::kNvme;
  return {params, states, OptimizerDevice::kCpu, Tier::kCpu};
}

// Byte budgets per rank for optimizer state kept on the GPU and in CPU RAM,
// doubling from 512 MiB and 1 GiB. The splits they give depend on the model
// alone, never on the machine, so a machine with more memory considers every
// candidate a smaller one did: more hardware never yields a slower plan.
std::vector<size_t> splits(const std::vector<int64_t>& bytes_per_partition, size_t first, core::Bytes smallest,
                           core::Bytes largest) {
  std::set<size_t> out{0, bytes_per_partition.size() - first};
  for (core::Bytes budget = smallest; budget <= largest; budget = budget * 2) {
    int64_t used = 0;
    size_t k = 0;
    while (first + k < bytes_per_partition.size() && used + bytes_per_partition[first + k] <= budget.count()) {
      used += bytes_per_partition[first + k];
      ++k;
    }
    out.insert(k);
  }
  return {out.rbegin(), out.rend()};  // most resident first: likely fastest, so bounds prune sooner
}

}  // namespace

namespace {

// Candidates that could beat the best by less than this fraction are not
// simulated: the cost model is not that precise, and compute-bound plans
// differ by fractions of a percent (175B on a DGX has hundreds within 0.5 %).
constexpr double kResolution = 0.005;

// A candidate the memory model's floor rules out, with by how much.
std::optional<Evaluation> too_big(const Candidate& c, const core::MachineSpec& machine,
                                  const std::array<core::Bytes, 3>& need,
                                  const std::array<core::Bytes, 3>& have) {
  // Report the tier that is short by the largest factor: it is what stops
  // this candidate, and what makes it close to fitting or far from it.
  std::optional<Tier> worst;
  double worst_ratio = 1;
  for (Tier tier : core::kAllTiers) {
    const size_t i = static_cast<size_t>(tier);
    const double ratio = need[i].as_double() / std::max(1.0, have[i].as_double());
    if (need[i] > have[i] && ratio > worst_ratio) {
      worst = tier;
      worst_ratio = ratio;
    }
  }
  if (!worst) return std::nullopt;
  const size_t i = static_cast<size_t>(*worst);
  const int scale = core::ranks_in_scope(*worst, machine.gpu_count);
  return Evaluation{.candidate = c, .verdict = Verdict::kPruned,
                    .reason = "memory model: " + std::string(core::to_string(*worst)) + " needs at least " +
                              core::format_bytes(need[i]) + " of " + core::format_bytes(have[i]) + " per rank",
                    .overflow = worst, .overflow_bytes = (need[i] - have[i]) * scale, .capacity = have[i] * scale};
}

// A candidate that may fit, with the least its step can take.
struct Bounded {
  double bound;
  size_t order;  // generation order, to break ties deterministically
  Candidate candidate;
};

// The best plan's layers split into sub-groups of `group` parameters, each
// sub-group placed as its layer was.
Candidate with_sub_groups(const Candidate& c, const core::Workload& w, int64_t group) {
  Candidate out = c;
  const std::vector<core::Partition> before = core::partitions_of(w, c.policy.sub_group_params);
  std::vector<core::PartitionPolicy> by_layer(w.layers().size());
  for (size_t j = 0; j < before.size(); ++j) by_layer[static_cast<size_t>(before[j].layer)] = c.policy.partitions[j];
  out.policy.sub_group_params = group;
  out.policy.partitions.clear();
  for (const core::Partition& p : core::partitions_of(w, group)) out.policy.partitions.push_back(by_layer[static_cast<size_t>(p.layer)]);
  out.name += ", sub-groups of " + std::to_string(group);
  return out;
}

// Knobs that matter less than placement are tuned around the best plan only:
// the number of pinned staging buffers, and splitting big layers into
// sub-groups so optimizer I/O starts sooner. Only when the plan leaves room:
// a step within 5 % of its lower bound has nothing left for them to win.
// At most this many variants: 2 buffer counts, 2 sub-group sizes and a
// speculative update.
constexpr int kRefinements = 5;

// The variants of the best plan to evaluate, in order; none when it has no
// room to gain.
std::vector<Candidate> refinements(const PlanResult& result, const core::MachineSpec& machine,
                                   const core::ModelSpec& model, Target target) {
  if (!result.best || result.best->candidate.policy.partitions.empty()) return {};
  const Candidate best = result.best->candidate;
  const core::Workload w(model, best.training.sequence_length);
  if (result.best->step_seconds() <= 1.05 * step_lower_bound(best, machine, w)) return {};
  std::vector<Candidate> variants;
  for (int buffers : {2, 8}) {
    Candidate c = best;
    c.policy.staging_buffers = buffers;
    c.name += ", " + std::to_string(buffers) + " staging buffers";
    variants.push_back(c);
  }
  const bool offloads = std::any_of(best.policy.partitions.begin(), best.policy.partitions.end(),
                                    [](const PartitionPolicy& p) { return p.optimizer == OptimizerDevice::kCpu; });
  // DeepSpeed's sub-groups hold whole tensors and it has no speculative
  // update: only the buffer counts are variants it can run.
  if (target != Target::kStowage) {
    std::vector<Candidate> run;
    for (const Candidate& c : variants) {
      if (std::optional<Candidate> r = as_run_by(target, c, machine, model)) run.push_back(std::move(*r));
    }
    return run;
  }
  if (offloads && best.policy.sub_group_params == 0) {
    for (int64_t parts : {2, 4}) variants.push_back(with_sub_groups(best, w, (w.largest_layer_params() + parts - 1) / parts));
  }
  // Speculative updates: CPU optimizers start before the step's gradient
  // check, for rollback copies of their states (12 B per parameter) until
  // it passes. Worth it when those optimizers wait on the check.
  const bool checked = best.training.precision == core::Precision::kFp16 || best.training.max_grad_norm > 0;
  if (offloads && checked && !best.policy.speculative_update) {
    Candidate c = best;
    c.policy.speculative_update = true;
    c.name += ", speculative update";
    variants.push_back(c);
  }
  return variants;
}

}  // namespace

std::vector<Candidate> baseline_candidates(const core::MachineSpec& machine, const core::Workload& workload,
                                           const core::TrainingSpec& training) {
  std::vector<Candidate> out;
  for (const core::Placement& p : core::standard_placements(machine.gpu_count)) {
    out.push_back({p.name, core::policy_for(p, workload, training), training});
  }
  Candidate dpu = out[1];
  dpu.name = "zero-offload + delayed update";
  dpu.policy.delayed_update = true;
  out.push_back(dpu);
  return out;
}

namespace {

// The search space with every candidate's optimizer states at `states`.
std::vector<Candidate> search_space_at(const core::MachineSpec& machine, const core::ModelSpec& model,
                                       const core::TrainingSpec& training, const SearchOptions& options,
                                       core::StatePrecision states) {
  std::vector<Candidate> out;
  std::set<std::string> seen;
  for (const core::TrainingSpec& t : training_shapes(training, options)) {
    const core::Workload w(model, t.sequence_length);
    const std::vector<core::Partition> parts = core::partitions_of(w, 0);
    const size_t n = parts.size();
    // Gathering by parameter (core/gather_pieces.h) for ZeRO-3, where a
    // layer is fetched or all-gathered for each use: a variant when some
    // layer is larger than a piece, so no layer has to fit on the GPU whole
    // and the largest model that trains grows with the machine (issue 11).
    const int64_t piece = core::gather_params_for(machine.gpu.memory);
    const bool piecewise = w.largest_layer_params() > piece;
    const bool several = machine.gpu_count > 1;
    struct ParamChoice { Tier tier; core::ZeroStage stage; };
    std::vector<ParamChoice> params = {{Tier::kGpu, several ? core::ZeroStage::k2 : core::ZeroStage::k0}};
    if (several) params.push_back({Tier::kGpu, core::ZeroStage::k3});
    params.push_back({Tier::kCpu, core::ZeroStage::k3});
    if (machine.nvme_count > 0) params.push_back({Tier::kNvme, core::ZeroStage::k3});
    for (const ParamChoice& pc : params) {
      const int64_t ranks = pc.stage >= core::ZeroStage::k1 ? machine.gpu_count : 1;
      std::vector<int64_t> state_bytes;  // per rank, per partition: optimizer states (+ gradients on the GPU)
      const int64_t per_param = core::state_bytes_per_param(states) + 2;
      for (const core::Partition& part : parts) state_bytes.push_back(per_param * part.params / ranks);
      Candidate base{.name = "",
                     .policy = {.stage = pc.stage, .activation_checkpointing = t.activation_checkpointing,
                                .optimizer_state_precision = states,
                                .micro_batch = t.micro_batch, .gradient_accumulation = t.gradient_accumulation},
                     .training = t};
      for (size_t on_gpu : splits(state_bytes, 0, core::Bytes(int64_t{1} << 29), core::Bytes(int64_t{128} << 30))) {
        std::vector<size_t> cpu_choices = splits(state_bytes, on_gpu, core::Bytes(int64_t{1} << 30), core::Bytes(int64_t{4} << 40));
        if (machine.nvme_count == 0) cpu_choices = {n - on_gpu};  // no NVMe: everything else in RAM
        for (size_t on_cpu : cpu_choices) {
          base.policy.partitions.clear();
          for (size_t j = 0; j < n; ++j) base.policy.partitions.push_back(partition_policy(pc.tier, j, on_gpu, on_cpu));
          const bool cpu_optimizer = on_gpu < n;
          for (bool delayed : {true, false}) {
            if (delayed && !cpu_optimizer) continue;
            for (int depth : {2, 4}) {
              for (int64_t gather : {int64_t{0}, piece}) {
                if (gather > 0 && (!piecewise || pc.stage != core::ZeroStage::k3)) continue;
                Candidate c = base;
                c.policy.delayed_update = delayed;
                c.policy.h2d_prefetch_depth = depth;
                c.policy.nvme_prefetch_depth = depth;
                c.policy.gather_params = gather;
                c.name = describe(c, static_cast<int>(on_gpu), static_cast<int>(on_cpu),
                                  static_cast<int>(n - on_gpu - on_cpu));
                if (states == core::StatePrecision::kBf16) c.name += ", bf16 states";
                if (!seen.insert(c.name).second) continue;
                out.push_back(std::move(c));
              }
            }
          }
        }
      }
    }
  }
  return out;
}

Candidate with_bf16_states(Candidate c) {
  c.policy.optimizer_state_precision = core::StatePrecision::kBf16;
  c.name += ", bf16 states";
  return c;
}

PlanResult search_at(const core::MachineSpec& machine, const core::ModelSpec& model,
                     const core::TrainingSpec& training, const SearchOptions& options,
                     core::StatePrecision states) {
  PlanResult result;
  const std::array<core::Bytes, 3> have = rank_capacity(machine);
  SimulationCache* simulations = options.simulations.get();
  int simulated = 0, most = 0;
  // Asks options.progress whether to go on before a simulation.
  auto go_on = [&] {
    if (options.progress && !options.progress(simulated, most)) result.cancelled = true;
    ++simulated;
    return !result.cancelled;
  };
  // Simulations run ahead on `threads` (planner/run_ahead.h) without the
  // cache, which only this thread touches: a candidate the cache knows is
  // judged from it here, as a search on one thread would, and one simulated
  // ahead is added to it when taken.
  const int threads = options.threads > 0 ? options.threads : default_search_threads();
  const auto known = [&](const Candidate& c) { return simulations != nullptr && simulations->find(c) != nullptr; };
  const auto remembered = [&](Evaluation e) {
    if (simulations != nullptr && e.simulated) simulations->add(e.candidate, e.simulated);
    return e;
  };
  // Evaluates `candidates` in order, simulated ahead, handing each to `use`;
  // false when the search stops (cancelled, or `use` said so).
  const auto evaluate_in_order = [&](const std::vector<Candidate>& candidates, auto&& use) {
    RunAhead<Evaluation> ahead(
        candidates.size(), threads, [&](size_t i) { return !known(candidates[i]); },
        [&](size_t i) { return evaluate(candidates[i], machine, model, nullptr); });
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (!go_on()) return false;
      Evaluation e = known(candidates[i]) ? evaluate(candidates[i], machine, model, simulations)
                                          : remembered(ahead.take(i));
      if (!use(std::move(e))) return false;
    }
    return true;
  };
  auto first_fit_found = [&] { return options.until == SearchOptions::Until::kFirstFit && result.best; };
  auto consider = [&](Evaluation e) {
    if (e.fits() && (!result.best || e.step_seconds() < result.best->step_seconds())) result.best = e;
    result.considered.push_back(std::move(e));
  };
  {
    const core::Workload w(model, training.sequence_length);
    std::vector<Candidate> baselines = baseline_candidates(machine, w, training);
    for (const core::Placement& p : options.also_compare) {
      baselines.push_back({p.name, core::policy_for(p, w, training), training});
    }
    if (states == core::StatePrecision::kBf16) {
      for (Candidate& c : baselines) c = with_bf16_states(c);
    }
    // DeepSpeed has no delayed update: that baseline is zero-offload again.
    if (options.target != Target::kStowage) {
      std::erase_if(baselines, [](const Candidate& c) { return c.policy.delayed_update; });
      for (Candidate& c : baselines) c = as_run_by(options.target, c, machine, model).value_or(c);
    }
    most = static_cast<int>(baselines.size());
    const bool all = evaluate_in_order(baselines, [&](Evaluation e) {
      result.baselines.push_back(e);
      consider(std::move(e));
      return !first_fit_found();
    });
    if (!all) return result;
  }
  std::vector<Bounded> open;  // candidates that may fit, to simulate in order of promise
  const core::Workload w(model, training.sequence_length);  // the shapes keep the sequence length
  for (Candidate& c : as_run_by(options.target, search_space_at(machine, model, training, options, states),
                                machine, model)) {
    // What rests on the tiers, a floor that needs no lowering, rules out
    // much of what cannot fit before anything is lowered.
    if (std::optional<Evaluation> pruned = too_big(c, machine, resting_floor(c, machine, w), have)) {
      consider(std::move(*pruned));
    } else {
      open.push_back({step_lower_bound(c, machine, w), open.size(), std::move(c)});
    }
  }
  // Branch and bound: simulate the most promising first (lowest bound); once
  // a bound comes within the search's resolution of the best step found, no
  // later candidate can win by more than that.
  std::sort(open.begin(), open.end(), [](const Bounded& a, const Bounded& b) {
    return a.bound != b.bound ? a.bound < b.bound : a.order < b.order;
  });
  most += static_cast<int>(open.size()) + kRefinements;
  const auto bounded_out = [&](const Bounded& b) {
    return result.best && b.bound >= result.best->step_seconds() * (1 - kResolution);
  };
  // The lowered schedule's floor (one step lowered costs a fraction of a
  // simulation and spares simulating what cannot fit), then the simulation:
  // computed ahead for the candidates that follow the one being judged.
  struct Judged {
    std::array<core::Bytes, 3> floor;
    std::optional<Evaluation> pruned;
    std::optional<Evaluation> simulated;
  };
  RunAhead<Judged> ahead(
      open.size(), threads, [&](size_t i) { return !bounded_out(open[i]) && !known(open[i].candidate); },
      [&](size_t i) {
        const Candidate& c = open[i].candidate;
        Judged j{.floor = memory_floor(c, machine, w)};
        j.pruned = too_big(c, machine, j.floor, have);
        if (!j.pruned) j.simulated = evaluate(c, machine, model, nullptr);
        return j;
      });
  for (size_t i = 0; i < open.size(); ++i) {
    Bounded& b = open[i];
    if (bounded_out(b)) {  // a copy: the candidate may still be simulated ahead, in vain
      consider({.candidate = b.candidate, .verdict = Verdict::kBoundedOut,
                .reason = "cannot beat " + core::format_seconds(result.best->summary->step_time) +
                          ": its busiest lane needs " + core::format_seconds(core::Seconds(b.bound))});
      continue;
    }
    std::optional<std::array<core::Bytes, 3>> floor;
    std::optional<Evaluation> e;
    if (known(b.candidate)) {  // simulated by an earlier search: needs neither floor nor simulation
      if (!go_on()) return result;
      e = evaluate(b.candidate, machine, model, simulations);
    } else {
      Judged j = ahead.take(i);
      if (j.pruned) {
        consider(std::move(*j.pruned));
        continue;
      }
      if (!go_on()) return result;
      floor = j.floor;
      e = remembered(std::move(*j.simulated));
    }
    e->floor = floor;
    e->bound = b.bound;
    consider(std::move(*e));
    if (first_fit_found()) return result;
  }
  evaluate_in_order(refinements(result, machine, model, options.target), [&](Evaluation e) {
    consider(std::move(e));
    return true;
  });
  return result;
}

}  // namespace

int default_search_threads() {
  const unsigned cores = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(cores, 1u, 4u));
}

std::vector<Candidate> search_space(const core::MachineSpec& machine, const core::ModelSpec& model,
                                    const core::TrainingSpec& training, const SearchOptions& options) {
  return search_space_at(machine, model, training, options, core::StatePrecision::kFp32);
}

// bf16 optimizer states change the training's numbers, so they are chosen
// only when the user allows them and only when they help: when the best
// fp32 plan, with its moments in bf16, is faster by more than the search's
// resolution, or when no fp32 plan fits and a bf16 one does. DeepSpeed
// cannot run fp32 master weights with bf16 moments (core/tensor_class.h),
// so a DeepSpeed or Accelerate target never gets them.
std::string describe(const Candidate& c) {
  std::array<int, 3> states{};
  for (const PartitionPolicy& p : c.policy.partitions) ++states[static_cast<size_t>(p.optimizer_states)];
  return describe(c, states[0], states[1], states[2]);
}

Candidate candidate_of(const core::Policy& policy, const core::TrainingSpec& training) {
  Candidate c{.name = "",
              .policy = policy,
              .training = core::effective_training(training, policy),
              .runtime_pools = {}};
  c.name = describe(c);
  return c;
}

PlanResult search(const core::MachineSpec& machine, const core::ModelSpec& model,
                  const core::TrainingSpec& training, const SearchOptions& options) {
  PlanResult result = search_at(machine, model, training, options, core::StatePrecision::kFp32);
  const bool allowed = options.state_precisions == SearchOptions::StatePrecisions::kMayUseBf16 &&
                       options.target == Target::kStowage;
  if (!allowed || result.cancelled || (result.best && options.until == SearchOptions::Until::kFirstFit))
    return result;
  if (result.best) {
    if (options.progress && !options.progress(static_cast<int>(result.considered.size()),
                                              static_cast<int>(result.considered.size()) + 1)) {
      result.cancelled = true;
      return result;
    }
    Evaluation e = evaluate(with_bf16_states(result.best->candidate), machine, model, options.simulations.get());
    if (e.fits() && e.step_seconds() < result.best->step_seconds() * (1 - kResolution)) result.best = e;
    result.considered.push_back(std::move(e));
    return result;
  }
  PlanResult bf16 = search_at(machine, model, training, options, core::StatePrecision::kBf16);
  result.best = std::move(bf16.best);
  result.cancelled = bf16.cancelled;
  for (Evaluation& e : bf16.considered) result.considered.push_back(std::move(e));
  return result;
}

}  // namespace stowage::planner
