#include "planner/advice.h"

#include <algorithm>
#include <cmath>

namespace stowage::planner {
namespace {

using core::Bytes;

// Rounds up to a whole number of `unit`.
Bytes round_up(Bytes b, Bytes unit) { return Bytes((b.count() + unit.count() - 1) / unit.count() * unit.count()); }

}  // namespace

const Evaluation* closest(const PlanResult& result);

namespace {

Advice replan(std::string change, const core::MachineSpec& m, const core::ModelSpec& x, const core::TrainingSpec& t) {
  const PlanResult r = search(m, x, t, {.vary_micro_batch = false, .vary_checkpointing = false});
  Advice a{.change = std::move(change)};
  if (r.best) {
    a.step_seconds = r.best->step_seconds();
  } else if (const Evaluation* near = closest(r)) {
    a.still = near->reason;
  }
  return a;
}

}  // namespace

const Evaluation* closest(const PlanResult& result) {
  if (result.best) return nullptr;
  const Evaluation* best = nullptr;
  auto relative = [](const Evaluation& e) { return e.overflow_bytes.as_double() / std::max(1.0, e.capacity.as_double()); };
  for (const Evaluation& e : result.considered) {
    if (e.verdict == Verdict::kOverflows && (!best || relative(e) < relative(*best))) best = &e;
  }
  return best;
}

std::vector<Advice> advise(const core::MachineSpec& machine, const core::ModelSpec& model,
                           const core::TrainingSpec& training, const PlanResult& result,
                           const core::NvmeSpec& spare_drive) {
  std::vector<Advice> out;
  if (result.best) return out;
  // Grow the tier that stops the closest candidate by what it lacks.
  const Evaluation* near = closest(result);
  if (near != nullptr && near->overflow == core::Tier::kGpu) {
    core::MachineSpec bigger = machine;
    bigger.gpu.memory = round_up(near->capacity + near->overflow_bytes, Bytes(int64_t{8} << 30));
    out.push_back(replan("GPUs with " + core::format_bytes(bigger.gpu.memory, core::Prefix::kBinary) + " of memory instead of " +
                       core::format_bytes(machine.gpu.memory, core::Prefix::kBinary) + " (same speed)", bigger, model, training));
  }
  if (near != nullptr && near->overflow == core::Tier::kCpu) {
    core::MachineSpec bigger = machine;
    bigger.host.dram = round_up(machine.host.dram + near->overflow_bytes, Bytes(int64_t{16} << 30));
    out.push_back(replan("add " + core::format_bytes(bigger.host.dram - machine.host.dram, core::Prefix::kBinary) +
                       " of CPU RAM (to " + core::format_bytes(bigger.host.dram, core::Prefix::kBinary) + ")", bigger, model, training));
  }
  // NVMe: a drive where there is none, or larger drives where they fill up.
  if (machine.nvme_count == 0) {
    core::MachineSpec with = machine;
    with.nvme = spare_drive;
    with.nvme_count = 1;
    out.push_back(replan("add one " + spare_drive.label + " (" + core::format_bytes(spare_drive.capacity) + ")", with, model, training));
  } else if (near != nullptr && near->overflow == core::Tier::kNvme) {
    core::MachineSpec bigger = machine;
    const Bytes per_drive = round_up(Bytes((near->capacity + near->overflow_bytes).count() / machine.nvme_count),
                                     Bytes(int64_t{1'000'000'000'000}));
    bigger.nvme.capacity = per_drive;
    out.push_back(replan("NVMe drives of " + core::format_bytes(per_drive) + " each instead of " +
                       core::format_bytes(machine.nvme.capacity), bigger, model, training));
  }
  // Activations: a smaller micro-batch, and checkpointing.
  if (training.micro_batch > 1) {
    core::TrainingSpec smaller = training;
    smaller.gradient_accumulation *= smaller.micro_batch;
    smaller.micro_batch = 1;
    out.push_back(replan("micro-batch 1 with gradient accumulation " + std::to_string(smaller.gradient_accumulation), machine, model, smaller));
  }
  if (!training.activation_checkpointing) {
    core::TrainingSpec ckpt = training;
    ckpt.activation_checkpointing = true;
    out.push_back(replan("turn activation checkpointing on", machine, model, ckpt));
  }
  return out;
}

}  // namespace stowage::planner
