#include "core/memory_gate.h"

namespace stowage::core {
namespace {

uint8_t tiers_of(const std::vector<MemoryEffect>& effects) {
  uint8_t bits = 0;
  for (const MemoryEffect& e : effects) bits = static_cast<uint8_t>(bits | (1u << static_cast<unsigned>(e.tier)));
  return bits;
}

}  // namespace

MemoryGate::MemoryGate(const Schedule& schedule)
    : schedule_(schedule),
      ordered_(!schedule.memory_order.empty()),
      start_of_(schedule.ops.size(), kNone),
      end_of_(schedule.ops.size(), kNone) {
  if (!ordered_) return;
  events_.reserve(schedule.memory_order.size());
  for (const MemoryStep& step : schedule.memory_order) {
    const Op& op = schedule.op(step.op);
    const auto index = static_cast<int32_t>(events_.size());
    events_.push_back({.step = step, .tiers = tiers_of(step.start ? op.allocs : op.frees)});
    (step.start ? start_of_ : end_of_)[static_cast<size_t>(step.op)] = index;
    for (size_t t = 0; t < 3; ++t) {
      if ((events_.back().tiers >> t) & 1u) queue_[t].push_back(index);
    }
  }
}

bool MemoryGate::next_on_its_tiers(int32_t event) const {
  const Event& e = events_[static_cast<size_t>(event)];
  for (size_t t = 0; t < 3; ++t) {
    if (((e.tiers >> t) & 1u) && (next_[t] == queue_[t].size() || queue_[t][next_[t]] != event)) return false;
  }
  return true;
}

bool MemoryGate::may_start(OpId op) const {
  const int32_t event = ordered_ ? start_of_[static_cast<size_t>(op)] : kNone;
  return event == kNone || next_on_its_tiers(event);
}

std::optional<MemoryStep> MemoryGate::waits_for(OpId op) const {
  const int32_t event = ordered_ ? start_of_[static_cast<size_t>(op)] : kNone;
  if (event == kNone) return std::nullopt;
  const Event& e = events_[static_cast<size_t>(event)];
  for (size_t t = 0; t < 3; ++t) {
    if (((e.tiers >> t) & 1u) && next_[t] < queue_[t].size() && queue_[t][next_[t]] != event)
      return events_[static_cast<size_t>(queue_[t][next_[t]])].step;
  }
  return std::nullopt;
}

void MemoryGate::take(int32_t event, const Apply& apply) {
  const Event& e = events_[static_cast<size_t>(event)];
  for (size_t t = 0; t < 3; ++t) {
    if ((e.tiers >> t) & 1u) ++next_[t];
  }
  if (!e.abandoned) apply(e.step);
}

// Applies every held free (and skips every abandoned event) that has come
// to the front of all its tiers, until none has.
void MemoryGate::drain(const Apply& apply) {
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t t = 0; t < 3; ++t) {
      while (next_[t] < queue_[t].size()) {
        const int32_t event = queue_[t][next_[t]];
        if (!events_[static_cast<size_t>(event)].ready || !next_on_its_tiers(event)) break;
        take(event, apply);
        progress = true;
      }
    }
  }
}

void MemoryGate::started(OpId op, const Apply& apply) {
  const Op& o = schedule_.op(op);
  if (!ordered_) {
    if (!o.allocs.empty()) apply({op, true});
    return;
  }
  if (const int32_t event = start_of_[static_cast<size_t>(op)]; event != kNone) {
    take(event, apply);
    drain(apply);
  }
}

void MemoryGate::ended(OpId op, const Apply& apply) {
  const Op& o = schedule_.op(op);
  if (!ordered_) {
    if (!o.frees.empty()) apply({op, false});
    return;
  }
  if (const int32_t event = end_of_[static_cast<size_t>(op)]; event != kNone) {
    events_[static_cast<size_t>(event)].ready = true;
    drain(apply);
  }
}

void MemoryGate::abandon(OpId op, const Apply& apply) {
  if (!ordered_) return;
  for (const int32_t event : {start_of_[static_cast<size_t>(op)], end_of_[static_cast<size_t>(op)]}) {
    if (event == kNone) continue;
    events_[static_cast<size_t>(event)].ready = true;
    events_[static_cast<size_t>(event)].abandoned = true;
  }
  drain(apply);
}

std::vector<std::string> validate_memory_order(const Schedule& schedule) {
  if (schedule.memory_order.empty()) return {};
  std::vector<std::string> problems;
  std::vector<int> starts(schedule.ops.size(), 0), ends(schedule.ops.size(), 0);
  for (size_t k = 0; k < schedule.memory_order.size(); ++k) {
    const MemoryStep& step = schedule.memory_order[k];
    const std::string where = "memory_order[" + std::to_string(k) + "]";
    if (step.op < 0 || static_cast<size_t>(step.op) >= schedule.ops.size()) {
      problems.push_back(where + ": no op " + std::to_string(step.op));
      continue;
    }
    const Op& op = schedule.op(step.op);
    if ((step.start ? op.allocs : op.frees).empty())
      problems.push_back(where + ": " + op.name + " has no " + (step.start ? "allocations" : "frees"));
    if (!step.start && starts[static_cast<size_t>(step.op)] == 0 && !op.allocs.empty())
      problems.push_back(where + ": " + op.name + " ends before it starts");
    ++(step.start ? starts : ends)[static_cast<size_t>(step.op)];
  }
  for (const Op& op : schedule.ops) {
    const auto i = static_cast<size_t>(op.id);
    if (starts[i] != (op.allocs.empty() ? 0 : 1) || ends[i] != (op.frees.empty() ? 0 : 1))
      problems.push_back(op.name + ": " + std::to_string(starts[i]) + " start and " + std::to_string(ends[i]) +
                         " end steps in memory_order (one of each effect it has)");
  }
  if (!problems.empty()) return problems;
  // Can every op run? Ops that ran would have ended, so run each at once:
  // a started op only ever lets more ops start (a wait never undoes), so
  // running whatever may start until nothing may finds a way if there is one.
  MemoryGate gate(schedule);
  const MemoryGate::Apply nothing = [](const MemoryStep&) {};
  std::array<std::vector<OpId>, kLaneCount> lanes;
  for (const Op& op : schedule.ops) lanes[static_cast<size_t>(op.lane)].push_back(op.id);
  std::array<size_t, kLaneCount> next{};
  std::vector<char> done(schedule.ops.size(), 0);
  size_t ran = 0;
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t l = 0; l < kLaneCount; ++l) {
      while (next[l] < lanes[l].size()) {
        const Op& op = schedule.op(lanes[l][next[l]]);
        bool ready = gate.may_start(op.id);
        for (OpId d : op.deps) ready = ready && done[static_cast<size_t>(d)];
        if (!ready) break;
        gate.started(op.id, nothing);
        gate.ended(op.id, nothing);
        done[static_cast<size_t>(op.id)] = 1;
        ++next[l];
        ++ran;
        progress = true;
      }
    }
  }
  if (ran != schedule.ops.size()) {
    for (size_t l = 0; l < kLaneCount; ++l) {
      if (next[l] < lanes[l].size()) {
        problems.push_back("memory_order: " + schedule.op(lanes[l][next[l]]).name +
                           " can never start (it waits for an effect that can only come after it)");
        break;
      }
    }
  }
  return problems;
}

}  // namespace stowage::core
