#include <algorithm>
#include <memory>

#include "core/lower.h"
#include "planner/candidate.h"
#include "planner/memory_floor.h"
#include "planner/simulated.h"
#include "sim/simulator.h"

namespace stowage::planner {
namespace {

std::vector<std::pair<std::string, core::Bytes>> resident_holders(const core::Schedule& s, core::Tier t) {
  std::vector<std::pair<std::string, core::Bytes>> out;
  for (const core::MemoryEffect& e : s.resident_items) {
    if (e.tier == t) out.emplace_back(e.tensor, e.bytes);
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  out.resize(std::min<size_t>(4, out.size()));
  return out;
}

}  // namespace

Evaluation evaluate(const Candidate& candidate, const core::MachineSpec& machine, const core::ModelSpec& model,
                    SimulationCache* simulations) {
  if (simulations != nullptr) {
    if (std::shared_ptr<const Simulated> known = simulations->find(candidate))
      return judge(candidate, std::move(known), rank_capacity(machine));
  }
  const core::Workload workload(model, candidate.training.sequence_length);
  const int steps = core::steady_state_steps(candidate.policy);
  auto schedule = core::lower(candidate.policy, machine, workload, candidate.training, {.steps = steps, .validate = false});
  if (!schedule) {
    return Evaluation{.candidate = candidate, .verdict = Verdict::kInvalid, .reason = schedule.error().front().what};
  }
  for (const core::MemoryEffect& pool : candidate.runtime_pools) {
    schedule->resident[static_cast<size_t>(pool.tier)] += pool.bytes;
    schedule->resident_items.push_back(pool);
  }
  const sim::Prediction p = sim::simulate(*schedule, machine);
  auto s = std::make_shared<Simulated>();
  s->summary = p.summary;
  s->ranks = schedule->ranks;
  for (const core::Op& op : schedule->ops) {
    if (op.lane == core::Lane::kNvmeWrite && op.step == 0) s->nvme_bytes_written += op.bytes * schedule->ranks;
  }
  for (core::Tier t : core::kAllTiers) {
    const size_t i = static_cast<size_t>(t);
    s->resident[i] = schedule->resident[i];
    s->resident_holders[i] = resident_holders(*schedule, t);
    for (const sim::PeakRise& r : p.engine.rises[i]) s->rises[i].push_back({r.seq, schedule->op(r.op).name, r.in_use});
  }
  if (simulations != nullptr) simulations->add(candidate, s);
  std::vector<std::pair<std::string, core::Bytes>> holders;
  if (p.engine.overflow) {
    const auto& h = p.engine.overflow->holders;
    holders.assign(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(4, h.size())));
  }
  return judge(candidate, std::move(s), schedule->capacity, std::move(holders));
}

}  // namespace stowage::planner
