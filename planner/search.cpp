#include "planner/search.h"

#include <algorithm>
#include <set>

#include "planner/memory_floor.h"
#include "sim/cost_parameters.h"

namespace stowage::planner {
namespace {

using core::OptimizerDevice;
using core::PartitionPolicy;
using core::Tier;

bool fits(const std::array<core::Bytes, 3>& need, const std::array<core::Bytes, 3>& have) {
  for (size_t t = 0; t < 3; ++t) {
    if (need[t] > have[t]) return false;
  }
  return true;
}

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
  return s;
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

// The most partitions (lowest first) whose tier assignment still fits.
size_t most_that_fit(Candidate c, const core::MachineSpec& m, const core::Workload& w, Tier params, size_t fixed_gpu,
                     bool placing_gpu) {
  const size_t n = c.policy.partitions.size();
  const std::array<core::Bytes, 3> have = rank_capacity(m);
  size_t best = 0;
  for (size_t k = 0; k <= n - (placing_gpu ? 0 : fixed_gpu); ++k) {
    for (size_t j = 0; j < n; ++j) {
      c.policy.partitions[j] = placing_gpu ? partition_policy(params, j, k, n) : partition_policy(params, j, fixed_gpu, k);
    }
    const std::array<core::Bytes, 3> need = memory_floor(c, m, w);
    const size_t tier = placing_gpu ? 0 : 1;
    if (need[tier] > have[tier]) break;
    best = k;
  }
  return best;
}

// No schedule runs faster than its GPU compute alone: forward, backward and
// recompute FLOPs per rank at the card's rate and the cost model's matmul
// efficiency. A candidate whose bound is not below the best step found so far
// cannot win and is not simulated.
double compute_bound_seconds(const Candidate& c, const core::MachineSpec& m, const core::Workload& w) {
  const sim::CostParameters params;
  const double passes = 3.0 + (c.policy.activation_checkpointing ? 1.0 : 0.0);
  const double tokens = static_cast<double>(c.training.tokens_per_micro_batch() * c.training.gradient_accumulation);
  const core::FlopsPerSecond rate =
      c.training.precision == core::Precision::kBf16 && m.gpu.bf16_rate ? *m.gpu.bf16_rate : m.gpu.fp16_rate;
  // Recompute covers the blocks only; counting it for the whole model would
  // overstate the bound, so take the forward FLOPs of blocks alone for it.
  double block_flops = 0;
  for (const core::Layer& l : w.layers()) {
    if (l.kind == core::LayerKind::kBlock) block_flops += l.forward_flops_per_token.count();
  }
  const double per_token = 3.0 * w.forward_flops_per_token().count() + (passes - 3.0) * block_flops;
  return per_token * tokens / (rate.value() * params.matmul_efficiency);
}

// The memory floor is a lower bound; the simulated peak can exceed it (NVMe
// reads in flight, gradients waiting to drain). When a candidate overflows
// the GPU or the host, move just enough partitions' optimizer states one tier
// down (GPU to CPU, CPU to NVMe) and try again, a few times.
Evaluation evaluate_with_repair(Candidate c, const core::MachineSpec& m, const core::ModelSpec& model,
                                const core::Workload& w, Tier params, size_t on_gpu, size_t on_cpu) {
  const size_t n = c.policy.partitions.size();
  const int64_t per_partition = std::max<int64_t>(1, 12 * w.total_params() / static_cast<int64_t>(n) / m.gpu_count);
  Evaluation e = evaluate(c, m, model);
  for (int attempt = 0; attempt < 3 && e.verdict == Verdict::kOverflows; ++attempt) {
    const int64_t over = e.overflow == Tier::kGpu ? e.overflow_bytes.count() : e.overflow_bytes.count() / m.gpu_count;
    const size_t move = static_cast<size_t>(over / per_partition) + 1;
    if (e.overflow == Tier::kGpu && on_gpu > 0) {
      const size_t moved = std::min(move, on_gpu);
      on_gpu -= moved;
      on_cpu += moved;
    } else if (e.overflow == Tier::kCpu && on_cpu > 0 && m.nvme_count > 0) {
      on_cpu -= std::min(move, on_cpu);
    } else {
      break;
    }
    for (size_t j = 0; j < n; ++j) c.policy.partitions[j] = partition_policy(params, j, on_gpu, on_cpu);
    c.name = describe(c, static_cast<int>(on_gpu), static_cast<int>(on_cpu), static_cast<int>(n - on_gpu - on_cpu));
    e = evaluate(c, m, model);
  }
  return e;
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

PlanResult search(const core::MachineSpec& machine, const core::ModelSpec& model, const core::TrainingSpec& training,
                  const SearchOptions& options) {
  PlanResult result;
  const std::array<core::Bytes, 3> have = rank_capacity(machine);
  auto consider = [&](Evaluation e) {
    if (e.fits() && (!result.best || e.step_seconds() < result.best->step_seconds())) result.best = e;
    result.considered.push_back(std::move(e));
  };
  {
    const core::Workload w(model, training.sequence_length);
    for (const Candidate& c : baseline_candidates(machine, w, training)) {
      Evaluation e = evaluate(c, machine, model);
      result.baselines.push_back(e);
      consider(std::move(e));
    }
  }
  std::set<std::string> seen;
  for (const core::TrainingSpec& t : training_shapes(training, options)) {
    const core::Workload w(model, t.sequence_length);
    const size_t n = core::partitions_of(w, 0).size();
    const bool several = machine.gpu_count > 1;
    struct ParamChoice { Tier tier; core::ZeroStage stage; };
    std::vector<ParamChoice> params = {{Tier::kGpu, several ? core::ZeroStage::k2 : core::ZeroStage::k0}};
    if (several) params.push_back({Tier::kGpu, core::ZeroStage::k3});
    params.push_back({Tier::kCpu, core::ZeroStage::k3});
    if (machine.nvme_count > 0) params.push_back({Tier::kNvme, core::ZeroStage::k3});
    for (const ParamChoice& pc : params) {
      Candidate base{.name = "",
                     .policy = {.stage = pc.stage, .activation_checkpointing = t.activation_checkpointing,
                                .micro_batch = t.micro_batch, .gradient_accumulation = t.gradient_accumulation},
                     .training = t};
      base.policy.partitions.assign(n, partition_policy(pc.tier, 0, 0, n));
      const size_t gpu_max = most_that_fit(base, machine, w, pc.tier, 0, true);
      for (size_t on_gpu : std::set<size_t>{gpu_max, gpu_max / 2, 0}) {
        const size_t cpu_max = most_that_fit(base, machine, w, pc.tier, on_gpu, false);
        const size_t on_cpu = machine.nvme_count > 0 ? cpu_max : n - on_gpu;
        for (size_t j = 0; j < n; ++j) base.policy.partitions[j] = partition_policy(pc.tier, j, on_gpu, on_cpu);
        const bool cpu_optimizer = on_gpu < n;
        for (bool delayed : {false, true}) {
          if (delayed && !cpu_optimizer) continue;
          for (int depth : {2, 4}) {
            Candidate c = base;
            c.policy.delayed_update = delayed;
            c.policy.h2d_prefetch_depth = depth;
            c.policy.nvme_prefetch_depth = depth;
            const size_t on_nvme = n - std::min(n, on_gpu + on_cpu);
            c.name = describe(c, static_cast<int>(on_gpu), static_cast<int>(std::min(on_cpu, n - on_gpu)), static_cast<int>(on_nvme));
            if (!seen.insert(c.name).second) continue;
            const std::array<core::Bytes, 3> need = memory_floor(c, machine, w);
            if (!fits(need, have)) {
              Evaluation e{.candidate = c, .verdict = Verdict::kPruned};
              for (Tier tier : core::kAllTiers) {
                const size_t i = static_cast<size_t>(tier);
                if (need[i] > have[i]) {
                  e.reason = "memory model: " + std::string(core::to_string(tier)) + " needs at least " +
                             core::format_bytes(need[i]) + " of " + core::format_bytes(have[i]) + " per rank";
                  break;
                }
              }
              consider(std::move(e));
              continue;
            }
            const double bound = compute_bound_seconds(c, machine, w);
            if (result.best && bound >= result.best->step_seconds()) {
              consider({.candidate = c, .verdict = Verdict::kBoundedOut,
                        .reason = "cannot beat " + core::format_seconds(result.best->summary->step_time) +
                                  ": its GPU compute alone takes " + core::format_seconds(core::Seconds(bound))});
              continue;
            }
            consider(evaluate_with_repair(c, machine, model, w, pc.tier, on_gpu, std::min(on_cpu, n - on_gpu)));
          }
        }
      }
    }
  }
  return result;
}

}  // namespace stowage::planner
