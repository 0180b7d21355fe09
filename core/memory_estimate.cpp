#include "core/memory_estimate.h"

#include <algorithm>

namespace stowage::core {
namespace {

// Accumulates the lines of one estimate. Bytes per parameter times a count
// of parameters, divided among `ranks` where a ZeRO stage partitions.
class Account {
 public:
  Account(int64_t params, int gpus) : params_(params), gpus_(gpus) {}

  void add(Tier tier, std::string item, std::optional<TensorClass> c, Bytes bytes) {
    if (bytes.count() > 0) lines_.push_back({tier, std::move(item), c, bytes});
  }
  // A per-rank share on the GPU: bytes_per_param x N / ranks.
  void gpu_share(TensorClass c, int64_t bytes_per_param, int ranks) {
    add(Tier::kGpu, std::string(to_string(c)), c, Bytes(bytes_per_param * params_ / ranks));
  }
  // The whole machine's copy on a host tier: every rank's share added up,
  // which is gpus/ranks full copies.
  void host_total(Tier tier, TensorClass c, int64_t bytes_per_param, int ranks) {
    add(tier, std::string(to_string(c)), c, Bytes(bytes_per_param * params_ * gpus_ / ranks));
  }
  Bytes sum(Tier tier) const {
    Bytes s;
    for (const MemoryLine& l : lines_) {
      if (l.tier == tier) s += l.bytes;
    }
    return s;
  }
  std::vector<MemoryLine> take() { return std::move(lines_); }
  [[nodiscard]] int gpus() const { return gpus_; }

 private:
  int64_t params_;
  int gpus_;
  std::vector<MemoryLine> lines_;
};

int ranks_partitioning(ZeroStage stage, ZeroStage from, int gpus) { return stage >= from ? gpus : 1; }

// Master weights and Adam moments on the tier the placement says, plus the
// gradient tensor the optimizer reads from on that tier.
void optimizer_states(Account& a, const Placement& p, const MemoryOptions& o, int gpus) {
  const int ranks = ranks_partitioning(p.stage, ZeroStage::k1, gpus);
  const bool deepspeed = o.convention == Convention::kDeepSpeedEstimator;
  for (TensorClass c : {TensorClass::kMaster32, TensorClass::kAdamM, TensorClass::kAdamV}) {
    if (p.optimizer_states == Tier::kGpu) a.gpu_share(c, 4, ranks);
    else a.host_total(p.optimizer_states, c, 4, ranks);
  }
  // DeepSpeed keeps an fp32 gradient partition beside the states (on the CPU
  // when offloaded, even with the states on NVMe); Stowage's fused Adam reads
  // grad16 where it lands.
  const Tier landing = p.optimizer_states == Tier::kGpu ? Tier::kGpu : Tier::kCpu;
  if (deepspeed) {
    if (landing == Tier::kGpu) a.gpu_share(TensorClass::kGrad32, 4, ranks);
    else a.host_total(Tier::kCpu, TensorClass::kGrad32, 4, ranks);
  } else if (landing == Tier::kCpu) {
    a.host_total(Tier::kCpu, TensorClass::kGrad16, 2, ranks_partitioning(p.stage, ZeroStage::k2, gpus));
  }
}

// 16-bit parameters and gradients on the GPU, with ZeRO-3's gathered layer.
void gpu_params_and_grads(Account& a, const Placement& p, const MemoryOptions& o, int gpus,
                          int64_t gathered_params) {
  const bool deepspeed = o.convention == Convention::kDeepSpeedEstimator;
  const bool offloaded_optimizer = p.optimizer_states != Tier::kGpu;
  if (p.stage == ZeroStage::k3) {
    if (p.param16 == Tier::kGpu) a.gpu_share(TensorClass::kParam16, 2, gpus);
    a.add(Tier::kGpu, "largest layer gathered (param16)", TensorClass::kParam16, Bytes(2 * gathered_params));
    a.add(Tier::kGpu, "largest layer's gradients (grad16)", TensorClass::kGrad16, Bytes(2 * gathered_params));
    return;
  }
  a.gpu_share(TensorClass::kParam16, 2, 1);
  if (offloaded_optimizer) {
    // Gradients stream to the host as backward produces them; DeepSpeed's
    // estimator counts nothing for them, Stowage a layer-sized bucket.
    if (!deepspeed) {
      a.add(Tier::kGpu, "gradient bucket (grad16)", TensorClass::kGrad16, Bytes(2 * gathered_params));
    }
    return;
  }
  if (deepspeed) {
    // DeepSpeed's estimator divides the 16-bit gradients among the GPUs for
    // stages 1 and 2 alike: the "2_grads_16bit" of its 18 B / N / GPUs
    // (stage_1_and_2.py, DeepSpeed 0.19.8).
    a.gpu_share(TensorClass::kGrad16, 2, gpus);
    return;
  }
  const bool partitioned = p.stage == ZeroStage::k2 && gpus > 1;
  if (partitioned) {
    a.gpu_share(TensorClass::kGrad16, 2, gpus);
    a.add(Tier::kGpu, "gradient bucket (grad16)", TensorClass::kGrad16, Bytes(2 * gathered_params));
  } else {
    a.gpu_share(TensorClass::kGrad16, 2, 1);
  }
}

void host_params(Account& a, const Placement& p) {
  if (p.stage != ZeroStage::k3 || p.param16 == Tier::kGpu) return;
  a.host_total(p.param16, TensorClass::kParam16, 2, /*ranks=*/static_cast<int>(a.gpus()));
}

// Buffers and reserves a real run needs beyond model states (Stowage only;
// DeepSpeed's estimator leaves them out).
void runtime_needs(Account& a, const Workload& w, const TrainingSpec& t, const Placement& p,
                   const RuntimeBuffers& b, int gpus) {
  // Each rank moves only its own slice of a layer over PCIe when ZeRO
  // partitions gradients (stage 2) or parameters too (stage 3): ZeRO-
  // Infinity's bandwidth-centric partitioning. The machine holds all ranks'.
  const int slices = p.stage >= ZeroStage::k2 ? gpus : 1;
  const int64_t layer = w.largest_layer_params() / slices;
  a.add(Tier::kGpu, "activations", TensorClass::kActivation,
        w.activation_bytes(t.tokens_per_micro_batch(), t.activation_checkpointing));
  a.add(Tier::kGpu, "runtime reserve", std::nullopt, b.gpu_reserve);
  a.add(Tier::kCpu, "host reserve", std::nullopt, b.host_reserve);
  const bool crosses_pcie = p.param16 != Tier::kGpu || p.optimizer_states != Tier::kGpu;
  if (crosses_pcie) {
    a.add(Tier::kCpu, "pinned staging buffers", std::nullopt, Bytes(b.staging_buffers * 2 * layer * gpus));
  }
  if (p.optimizer_states == Tier::kNvme) {
    a.add(Tier::kCpu, "optimizer swap buffers", std::nullopt, Bytes(b.nvme_swap_buffers * 4 * layer * gpus));
  }
  if (p.param16 == Tier::kNvme) {
    a.add(Tier::kCpu, "parameter swap buffers", std::nullopt, Bytes(b.param_swap_buffers * 2 * layer * gpus));
  }
}

// Building the model materialises fp32 weights on the host: the whole model
// per rank, or one layer at a time under zero.Init (stage 3). The host must
// hold the larger of that and the steady state.
void construction_peak(Account& a, const Workload& w, const Placement& p, const MemoryOptions& o, int gpus) {
  const bool layerwise = o.convention == Convention::kStowage || (p.stage == ZeroStage::k3 && o.zero_init);
  // DeepSpeed's stage-3 estimator under zero.Init with the optimizer
  // offloaded counts the steady state only (16 or 18 B/param, stage3.py):
  // no construction term however large the largest module.
  const bool offloaded = p.optimizer_states != Tier::kGpu;
  if (o.convention == Convention::kDeepSpeedEstimator && p.stage == ZeroStage::k3 && o.zero_init && offloaded) return;
  const int64_t unit = !layerwise ? w.total_params()
                       : o.convention == Convention::kStowage ? w.largest_layer_params()
                                                              : w.largest_module_params();
  const Bytes peak(4 * unit * gpus);
  const Bytes steady = a.sum(Tier::kCpu);
  if (peak > steady) a.add(Tier::kCpu, "model construction peak (above steady state)", std::nullopt, peak - steady);
}

}  // namespace

bool MemoryEstimate::fits() const {
  return std::all_of(tiers.begin(), tiers.end(), [](const TierBudget& t) { return t.fits(); });
}

std::optional<Tier> MemoryEstimate::first_overflow() const {
  for (const TierBudget& t : tiers) {
    if (!t.fits()) return t.tier;
  }
  return std::nullopt;
}

Bytes MemoryEstimate::bytes_of(Tier t, TensorClass c) const {
  Bytes s;
  for (const MemoryLine& l : lines) {
    if (l.tier == t && l.tensor_class == c) s += l.bytes;
  }
  return s;
}

bool deepspeed_estimator_covers(const Placement& p) {
  if (p.offload_ratio < 1 || p.stage == ZeroStage::k0) return false;
  if (p.optimizer_states == Tier::kNvme || p.param16 == Tier::kNvme) return false;
  if (p.stage != ZeroStage::k3) return p.param16 == Tier::kGpu;
  return p.param16 == Tier::kGpu || p.optimizer_states == Tier::kCpu;
}

MemoryEstimate estimate_memory(const Workload& w, const MachineSpec& m, const TrainingSpec& t,
                               const Placement& p, const MemoryOptions& o) {
  const int gpus = m.gpu_count;
  const bool deepspeed = o.convention == Convention::kDeepSpeedEstimator;
  const int64_t gathered = deepspeed ? w.largest_module_params() : w.largest_layer_params();
  Account a(w.total_params(), gpus);
  gpu_params_and_grads(a, p, o, gpus, gathered);
  host_params(a, p);
  optimizer_states(a, p, o, gpus);
  if (o.scope == Scope::kEverything && !deepspeed) runtime_needs(a, w, t, p, o.buffers, gpus);
  construction_peak(a, w, p, o, gpus);
  if (deepspeed) {
    // DeepSpeed's additional_buffer_factor: 1.5 x the host figure.
    a.add(Tier::kCpu, "DeepSpeed additional_buffer_factor (x1.5)", std::nullopt, a.sum(Tier::kCpu) / 2);
  }
  MemoryEstimate e{.placement = p, .lines = {}, .tiers = {}};
  e.tiers = {TierBudget{Tier::kGpu, a.sum(Tier::kGpu), m.gpu.memory},
             TierBudget{Tier::kCpu, a.sum(Tier::kCpu), m.host.dram},
             TierBudget{Tier::kNvme, a.sum(Tier::kNvme), m.total_nvme_capacity()}};
  e.lines = a.take();
  // Group by tier (gpu, cpu, nvme) for reading; order within a tier is kept.
  std::stable_sort(e.lines.begin(), e.lines.end(),
                   [](const MemoryLine& x, const MemoryLine& y) { return x.tier < y.tier; });
  return e;
}

}  // namespace stowage::core
