#include "planner/advice.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "planner/simulated.h"

namespace stowage::planner {
namespace {

using core::Bytes;

// Rounds up to a whole number of `unit`.
Bytes round_up(Bytes b, Bytes unit) { return Bytes((b.count() + unit.count() - 1) / unit.count() * unit.count()); }

}  // namespace

const Evaluation* closest(const PlanResult& result);

namespace {

// `simulations`: those of the searches before, when `m` differs from their
// machine in memory capacities alone (planner/simulated.h); else null.
Advice replan(std::string change, const core::MachineSpec& m, const core::ModelSpec& x, const core::TrainingSpec& t,
              std::shared_ptr<SimulationCache> simulations) {
  const PlanResult r =
      search(m, x, t, {.vary_micro_batch = false, .vary_checkpointing = false, .simulations = std::move(simulations)});
  Advice a{.change = std::move(change)};
  if (r.best) {
    a.step_seconds = r.best->step_seconds();
  } else if (const Evaluation* near = closest(r)) {
    a.still = near->reason;
  }
  return a;
}

// Grows GPU memory or host RAM by what the closest candidate lacks, rounded
// up, and re-plans; the memory model's floor can be short of the simulated
// peak, so it repeats with the new shortfall a few times.
Advice grow(const core::MachineSpec& machine, const core::ModelSpec& model, const core::TrainingSpec& training,
            const Evaluation& near, core::Tier tier, const std::shared_ptr<SimulationCache>& simulations) {
  const bool gpu = tier == core::Tier::kGpu;
  const Bytes step = gpu ? Bytes(int64_t{8} << 30) : Bytes(int64_t{16} << 30);
  core::MachineSpec bigger = machine;
  Bytes& size = gpu ? bigger.gpu.memory : bigger.host.dram;
  size = round_up(size + near.overflow_bytes, step);
  Advice a;
  for (int round = 0; round < 4; ++round) {
    const PlanResult r = search(bigger, model, training,
                                {.vary_micro_batch = false, .vary_checkpointing = false, .simulations = simulations});
    const Evaluation* still = closest(r);
    a = {.step_seconds = r.best ? std::optional<double>(r.best->step_seconds()) : std::nullopt,
         .still = still != nullptr ? still->reason : ""};
    if (r.best || still == nullptr || still->overflow != tier) break;
    size = round_up(size + still->overflow_bytes, step);
  }
  const Bytes was = gpu ? machine.gpu.memory : machine.host.dram;
  a.change = gpu ? "GPUs with " + core::format_bytes(size, core::Prefix::kBinary) + " of memory instead of " +
                       core::format_bytes(was, core::Prefix::kBinary) + " (same speed)"
                 : "add " + core::format_bytes(size - was, core::Prefix::kBinary) + " of CPU RAM (to " +
                       core::format_bytes(size, core::Prefix::kBinary) + ")";
  return a;
}

}  // namespace

// A change that still does not fit is no answer to "what would make it fit".
std::string advice_text(const std::vector<Advice>& advice) {
  const auto fits = [](const Advice& a) { return a.step_seconds.has_value(); };
  const bool any_fits = std::any_of(advice.begin(), advice.end(), fits);
  std::string out;
  if (any_fits) {
    out += "\nChanges that would make it fit (re-planned):\n";
    for (const Advice& a : advice) {
      if (fits(a))
        out += "  - " + a.change + ": fits, step time " +
               core::format_seconds(core::Seconds(*a.step_seconds)) + '\n';
    }
  } else {
    out += "\nNo single change tried makes it fit.\n";
  }
  bool heading = false;
  for (const Advice& a : advice) {
    if (fits(a)) continue;
    if (!heading)
      out += std::string(any_fits ? "\n" : "") + "Changes tried that are not enough on their own:\n";
    heading = true;
    out += "  - " + a.change + ": still does not fit (" + a.still + ")\n";
  }
  return out;
}

const Evaluation* closest(const PlanResult& result) {
  if (result.best) return nullptr;
  const Evaluation* best = nullptr;
  auto relative = [](const Evaluation& e) { return e.overflow_bytes.as_double() / std::max(1.0, e.capacity.as_double()); };
  for (const Evaluation& e : result.considered) {
    // Simulated overflows and candidates the memory model ruled out alike.
    const bool short_of_memory = e.verdict == Verdict::kOverflows || (e.verdict == Verdict::kPruned && e.overflow);
    if (short_of_memory && (!best || relative(e) < relative(*best))) best = &e;
  }
  return best;
}

std::vector<Advice> advise(const core::MachineSpec& machine, const core::ModelSpec& model,
                           const core::TrainingSpec& training, const PlanResult& result,
                           const std::optional<core::NvmeSpec>& spare_drive) {
  std::vector<Advice> out;
  if (result.best) return out;
  // Every change but the spare drive keeps the machine but for its memory,
  // so what the search simulated is judged again rather than simulated
  // again: most of a failing plan's time was these re-plans.
  auto simulations = std::make_shared<SimulationCache>();
  simulations->add_all(result.baselines);
  simulations->add_all(result.considered);
  // Grow the tier that stops the closest candidate by what it lacks.
  const Evaluation* near = closest(result);
  if (near != nullptr && near->overflow == core::Tier::kGpu) {
    out.push_back(grow(machine, model, training, *near, core::Tier::kGpu, simulations));
  }
  if (near != nullptr && near->overflow == core::Tier::kCpu) {
    out.push_back(grow(machine, model, training, *near, core::Tier::kCpu, simulations));
  }
  // NVMe: a drive where there is none, or larger drives where they fill up.
  if (machine.nvme_count == 0 && spare_drive) {
    core::MachineSpec with = machine;
    with.nvme = *spare_drive;
    with.nvme_count = 1;
    out.push_back(
        replan("add one " + spare_drive->label + " (" + core::format_bytes(spare_drive->capacity) + ")", with,
               model, training, nullptr));
  } else if (near != nullptr && near->overflow == core::Tier::kNvme) {
    core::MachineSpec bigger = machine;
    const Bytes per_drive = round_up(Bytes((near->capacity + near->overflow_bytes).count() / machine.nvme_count),
                                     Bytes(int64_t{1'000'000'000'000}));
    bigger.nvme.capacity = per_drive;
    out.push_back(replan("NVMe drives of " + core::format_bytes(per_drive) + " each instead of " +
                       core::format_bytes(machine.nvme.capacity), bigger, model, training, simulations));
  }
  // Activations: a smaller micro-batch, and checkpointing.
  if (training.micro_batch > 1) {
    core::TrainingSpec smaller = training;
    smaller.gradient_accumulation *= smaller.micro_batch;
    smaller.micro_batch = 1;
    out.push_back(replan("micro-batch 1 with gradient accumulation " + std::to_string(smaller.gradient_accumulation), machine, model, smaller, simulations));
  }
  if (!training.activation_checkpointing) {
    core::TrainingSpec ckpt = training;
    ckpt.activation_checkpointing = true;
    out.push_back(replan("turn activation checkpointing on", machine, model, ckpt, simulations));
  }
  return out;
}

}  // namespace stowage::planner
