#include "planner/step_bound.h"

#include <algorithm>

#include "core/compute_work.h"
#include "core/gather_pieces.h"
#include "sim/lane_models.h"

namespace stowage::planner {
namespace {

// The GPU compute lane's total work: the forward, recompute and backward
// ops lowering makes for each layer, gather piece and micro-step (each
// piece its share of the layer's FLOPs and bytes, as core/lower.cpp cuts
// them), costed by the simulator's own model: the lane runs them one at a
// time, so their sum bounds the step. Costed piece by piece, not as one
// layer, because an op's rate may depend on its size
// (CostParameters::compute_rate_by_flops).
double compute_seconds(const Candidate& c, const core::Workload& w, const sim::ModelContext& context) {
  const int64_t tokens = c.training.tokens_per_micro_batch();
  const bool ckpt = c.policy.activation_checkpointing;
  double total_ns = 0;
  for (size_t index = 0; index < w.layers().size(); ++index) {
    const core::Layer& l = w.layers()[index];
    const core::ComputeFootprint f = w.footprint(index, tokens);
    const core::Bytes param16(2 * l.param_count());
    // The op of `kind` on a piece holding `share` of the layer's parameters.
    auto cost = [&](core::OpKind kind, double share) {
      const core::ComputeWork work = core::compute_work(kind, l, f, tokens, ckpt, param16);
      const core::Op op{.kind = kind, .lane = core::Lane::kGpuCompute,
                        .bytes = core::Bytes(static_cast<int64_t>(work.bytes.as_double() * share)),
                        .flops = work.flops * share};
      return static_cast<double>(sim::gpu_compute_demand(op, context).fixed);
    };
    double per_micro = 0;
    for (const core::GatherPiece& piece : core::gather_pieces(l, c.policy.gather_params)) {
      const double share =
          l.param_count() > 0 ? static_cast<double>(piece.params) / static_cast<double>(l.param_count()) : 1.0;
      per_micro += cost(core::OpKind::kForward, share) + cost(core::OpKind::kBackward, share);
      if (ckpt && l.kind == core::LayerKind::kBlock) per_micro += cost(core::OpKind::kRecompute, share);
    }
    total_ns += per_micro * static_cast<double>(c.training.gradient_accumulation);
  }
  return total_ns * 1e-9;
}

}  // namespace

double step_lower_bound(const Candidate& c, const core::MachineSpec& m, const core::Workload& w,
                        const std::optional<sim::CostParameters>& given) {
  using core::Tier;
  const sim::CostParameters& params = given ? *given : m.calibration;
  const sim::ModelContext context{.machine = m, .params = params, .ranks = m.gpu_count,
                                  .pinned = c.policy.pinned_memory,
                                  .bf16 = c.training.precision == core::Precision::kBf16};
  const sim::Capacities cap = sim::capacities_for(context);
  const core::Policy& p = c.policy;
  const int g = m.gpu_count;
  const double param_ranks = p.stage == core::ZeroStage::k3 ? g : 1;
  const double state_ranks = p.stage >= core::ZeroStage::k1 ? g : 1;
  const double grad_ranks = p.stage >= core::ZeroStage::k2 ? g : 1;
  const double accum = static_cast<double>(c.training.gradient_accumulation);
  double h2d = 0, d2h = 0, nvme_read = 0, nvme_write = 0, optimizer = 0;
  const std::vector<core::Partition> parts = core::partitions_of(w, p.sub_group_params);
  for (size_t j = 0; j < parts.size() && j < p.partitions.size(); ++j) {
    const core::PartitionPolicy& pp = p.partitions[j];
    const double n = static_cast<double>(parts[j].params);
    // Fetched for forward and backward; a checkpointed block gathered in
    // pieces fetches each piece once more for its recompute (core/lower.cpp).
    const core::Layer& layer = w.layers()[static_cast<size_t>(parts[j].layer)];
    const bool refetch = p.activation_checkpointing && layer.kind == core::LayerKind::kBlock &&
                         core::gather_pieces(layer, p.gather_params).size() > 1;
    const double fetches = (refetch ? 3 : 2) * accum;
    if (pp.param16 != Tier::kGpu) h2d += 2 * n / param_ranks * fetches;
    if (pp.param16 == Tier::kNvme) {
      nvme_read += 2 * n / param_ranks * fetches;
      nvme_write += 2 * n / param_ranks;
    }
    if (pp.optimizer == core::OptimizerDevice::kCpu) {
      optimizer += static_cast<double>(core::adam_bytes_per_param(p.optimizer_state_precision)) * n / state_ranks;
      if (pp.param16 == Tier::kGpu) h2d += 2 * n / state_ranks;  // updated parameters
    }
    if (pp.gradients == Tier::kCpu) d2h += 2 * n / grad_ranks * accum;
    // A GPU optimizer's updated parameters go back where they rest.
    if (pp.optimizer == core::OptimizerDevice::kGpu && pp.param16 != Tier::kGpu) d2h += 2 * n / state_ranks;
    if (pp.optimizer_states == Tier::kNvme) {
      const double states = static_cast<double>(core::state_bytes_per_param(p.optimizer_state_precision));
      nvme_read += states * n / state_ranks;
      nvme_write += states * n / state_ranks;
    }
  }
  auto at = [&](sim::Resource r) { return cap[static_cast<size_t>(r)]; };
  double bound = compute_seconds(c, w, context);
  bound = std::max(bound, h2d / at(sim::Resource::kPcieH2d));
  bound = std::max(bound, d2h / at(sim::Resource::kPcieD2h));
  if (nvme_read + nvme_write > 0 && m.nvme_count > 0) {
    // Each direction at most its own rate, both together at most
    // nvme_duplex of the drive (sim/nvme_model.cpp).
    const double reading = nvme_read / sim::nvme_rank_rate(context, core::Lane::kNvmeRead);
    const double writing = nvme_write / sim::nvme_rank_rate(context, core::Lane::kNvmeWrite);
    bound = std::max({bound, reading, writing, (reading + writing) / at(sim::Resource::kNvme)});
  }
  const double dram = h2d + d2h + nvme_read + nvme_write + optimizer;
  bound = std::max(bound, dram / at(sim::Resource::kDram));
  return bound;
}

}  // namespace stowage::planner
