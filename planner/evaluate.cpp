#include <algorithm>

#include "core/lower.h"
#include "planner/candidate.h"
#include "sim/simulator.h"

namespace stowage::planner {
namespace {

// The engine flags a tier when an op's allocation crosses its capacity.
// What rests there from the start (reserves, states at rest) can exceed it
// with no op allocating on that tier: all-gpu on a host with less RAM than
// the host reserve said "fits" (issue 12). Such a tier overflows from the
// start, held by the schedule's resident items.
std::optional<core::Tier> over_from_the_start(const core::Schedule& s) {
  for (core::Tier t : core::kAllTiers) {
    if (s.resident[static_cast<size_t>(t)] > s.capacity[static_cast<size_t>(t)]) return t;
  }
  return std::nullopt;
}

std::vector<std::pair<std::string, core::Bytes>> resident_holders(const core::Schedule& s, core::Tier t) {
  std::vector<std::pair<std::string, core::Bytes>> out;
  for (const core::MemoryEffect& e : s.resident_items) {
    if (e.tier == t) out.emplace_back(e.tensor, e.bytes);
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

}  // namespace

Evaluation evaluate(const Candidate& candidate, const core::MachineSpec& machine, const core::ModelSpec& model) {
  Evaluation e{.candidate = candidate};
  const core::Workload workload(model, candidate.training.sequence_length);
  const int steps = core::steady_state_steps(candidate.policy);
  auto schedule = core::lower(candidate.policy, machine, workload, candidate.training, {.steps = steps, .validate = false});
  if (!schedule) {
    e.verdict = Verdict::kInvalid;
    e.reason = schedule.error().front().what;
    return e;
  }
  for (const core::MemoryEffect& pool : candidate.runtime_pools) {
    schedule->resident[static_cast<size_t>(pool.tier)] += pool.bytes;
    schedule->resident_items.push_back(pool);
  }
  const sim::Prediction p = sim::simulate(*schedule, machine);
  e.summary = p.summary;
  for (const core::Op& op : schedule->ops) {
    if (op.lane == core::Lane::kNvmeWrite && op.step == 0) e.nvme_bytes_written += op.bytes * schedule->ranks;
  }
  const std::optional<core::Tier> at_start = over_from_the_start(*schedule);
  if (p.engine.overflow || at_start) {
    e.verdict = Verdict::kOverflows;
    e.overflow = p.engine.overflow ? p.engine.overflow->tier : *at_start;
    const size_t t = static_cast<size_t>(*e.overflow);
    const int scale = core::ranks_in_scope(*e.overflow, schedule->ranks);
    e.overflow_bytes = (p.engine.peak[t] - schedule->capacity[t]) * scale;
    e.capacity = schedule->capacity[t] * scale;
    // Empty when the tier is over before any op runs.
    if (p.engine.overflow) e.overflow_op = schedule->op(p.engine.overflow->op).name;
    const auto holders =
        p.engine.overflow ? p.engine.overflow->holders : resident_holders(*schedule, *e.overflow);
    e.holders.assign(holders.begin(), holders.begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(4, holders.size())));
    e.reason = std::string(core::to_string(*e.overflow)) + " needs " +
               core::format_bytes(p.engine.peak[t] * scale) + " of " + core::format_bytes(schedule->capacity[t] * scale);
    return e;
  }
  e.verdict = Verdict::kFits;
  return e;
}

}  // namespace stowage::planner
