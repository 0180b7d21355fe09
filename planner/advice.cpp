#include "planner/advice.h"

#include <algorithm>
#include <cmath>

namespace stowage::planner {
namespace {

using core::Bytes;

// Rounds up to a whole number of `unit`.
Bytes round_up(Bytes b, Bytes unit) { return Bytes((b.count() + unit.count() - 1) / unit.count() * unit.count()); }

std::optional<double> replan(const core::MachineSpec& m, const core::ModelSpec& x, const core::TrainingSpec& t) {
  const PlanResult r = search(m, x, t, {.vary_micro_batch = false, .vary_checkpointing = false});
  if (!r.best) return std::nullopt;
  return r.best->step_seconds();
}

// The least memory a tier must hold for any simulated candidate to fit
// there: its capacity plus the smallest overflow seen on it.
std::optional<Bytes> least_overflow(const PlanResult& r, core::Tier tier) {
  std::optional<Bytes> least;
  for (const Evaluation& e : r.considered) {
    if (e.verdict != Verdict::kOverflows || e.overflow != tier) continue;
    if (!least || e.overflow_bytes < *least) least = e.overflow_bytes;
  }
  return least;
}

}  // namespace

std::optional<Shortfall> shortfall(const PlanResult& result) {
  if (result.best) return std::nullopt;
  std::optional<Shortfall> best;
  for (core::Tier t : core::kAllTiers) {
    if (std::optional<Bytes> by = least_overflow(result, t); by && (!best || *by < best->by)) best = Shortfall{t, *by};
  }
  return best;
}

std::vector<Advice> advise(const core::MachineSpec& machine, const core::ModelSpec& model,
                           const core::TrainingSpec& training, const PlanResult& result,
                           const core::NvmeSpec& spare_drive) {
  std::vector<Advice> out;
  if (result.best) return out;
  // More CPU RAM: enough for the candidate that came closest on the host.
  if (std::optional<Bytes> by = least_overflow(result, core::Tier::kCpu)) {
    core::MachineSpec bigger = machine;
    bigger.host.dram = round_up(machine.host.dram + *by, Bytes(int64_t{16} << 30));
    out.push_back({"add " + core::format_bytes(bigger.host.dram - machine.host.dram, core::Prefix::kBinary) +
                       " of CPU RAM (to " + core::format_bytes(bigger.host.dram, core::Prefix::kBinary) + ")",
                   replan(bigger, model, training)});
  }
  // NVMe: a drive where there is none, or larger drives where they fill up.
  if (machine.nvme_count == 0) {
    core::MachineSpec with = machine;
    with.nvme = spare_drive;
    with.nvme_count = 1;
    out.push_back({"add one " + spare_drive.label + " (" + core::format_bytes(spare_drive.capacity) + ")",
                   replan(with, model, training)});
  } else if (std::optional<Bytes> by = least_overflow(result, core::Tier::kNvme)) {
    core::MachineSpec bigger = machine;
    const Bytes per_drive = round_up(Bytes((machine.total_nvme_capacity() + *by).count() / machine.nvme_count),
                                     Bytes(int64_t{1'000'000'000'000}));
    bigger.nvme.capacity = per_drive;
    out.push_back({"NVMe drives of " + core::format_bytes(per_drive) + " each instead of " +
                       core::format_bytes(machine.nvme.capacity),
                   replan(bigger, model, training)});
  }
  // Activations: a smaller micro-batch, and checkpointing.
  if (training.micro_batch > 1) {
    core::TrainingSpec smaller = training;
    smaller.gradient_accumulation *= smaller.micro_batch;
    smaller.micro_batch = 1;
    out.push_back({"micro-batch 1 with gradient accumulation " + std::to_string(smaller.gradient_accumulation),
                   replan(machine, model, smaller)});
  }
  if (!training.activation_checkpointing) {
    core::TrainingSpec ckpt = training;
    ckpt.activation_checkpointing = true;
    out.push_back({"turn activation checkpointing on", replan(machine, model, ckpt)});
  }
  return out;
}

}  // namespace stowage::planner
