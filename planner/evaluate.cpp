#include <algorithm>

#include "core/lower.h"
#include "planner/candidate.h"
#include "sim/simulator.h"

namespace stowage::planner {

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
  const sim::Prediction p = sim::simulate(*schedule, machine);
  e.summary = p.summary;
  for (const core::Op& op : schedule->ops) {
    if (op.lane == core::Lane::kNvmeWrite && op.step == 0) e.nvme_bytes_written += op.bytes * schedule->ranks;
  }
  if (p.engine.overflow) {
    e.verdict = Verdict::kOverflows;
    e.overflow = p.engine.overflow->tier;
    const size_t t = static_cast<size_t>(*e.overflow);
    const int scale = core::ranks_in_scope(*e.overflow, schedule->ranks);
    e.overflow_bytes = (p.engine.peak[t] - schedule->capacity[t]) * scale;
    e.capacity = schedule->capacity[t] * scale;
    e.overflow_op = schedule->op(p.engine.overflow->op).name;
    const auto& holders = p.engine.overflow->holders;
    e.holders.assign(holders.begin(), holders.begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(4, holders.size())));
    e.reason = std::string(core::to_string(*e.overflow)) + " needs " +
               core::format_bytes(p.engine.peak[t] * scale) + " of " + core::format_bytes(schedule->capacity[t] * scale);
    return e;
  }
  e.verdict = Verdict::kFits;
  return e;
}

}  // namespace stowage::planner
