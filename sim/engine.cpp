#include "sim/engine.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <queue>
#include <stdexcept>

#include "core/memory_gate.h"

namespace stowage::sim {
namespace {

using core::OpId;
using core::SimTime;

constexpr SimTime kNever = std::numeric_limits<SimTime>::max();

// An op flowing through shared resources.
struct Flow {
  OpId op;
  double remaining;  // units of work
  double rate = 0;   // units per second, set by share_fairly
};

// Max-min fair rates by progressive filling: raise every unfrozen flow's rate
// together until some resource saturates, freeze the flows using it, repeat
// (Bertsekas & Gallager, Data Networks, §6.5.2). A flow's own limit
// (Demand::max_rate) freezes it when the level reaches that limit first.
void share_fairly(std::vector<Flow>& flows, std::span<const Demand> demands, const Capacities& capacities) {
  Capacities left = capacities;
  std::vector<char> frozen(flows.size(), 0);
  size_t unfrozen = flows.size();
  // Each flow's own limit: Demand::crowded_max_rate while a flow of a crowd
  // it is crowded by runs.
  uint8_t running = 0;
  for (const Flow& f : flows) running |= demands[static_cast<size_t>(f.op)].crowds;
  std::vector<double> max_rate(flows.size());
  for (size_t i = 0; i < flows.size(); ++i) {
    const Demand& d = demands[static_cast<size_t>(flows[i].op)];
    max_rate[i] = (d.crowded_by & running) != 0 && d.crowded_max_rate > 0 ? d.crowded_max_rate : d.max_rate;
  }
  // A flow behind an earlier one of its queue waits (flows are in the order
  // they started).
  std::vector<int> served;
  for (size_t i = 0; i < flows.size(); ++i) {
    const int queue = demands[static_cast<size_t>(flows[i].op)].queue;
    if (queue <= 0) continue;
    if (std::find(served.begin(), served.end(), queue) == served.end()) {
      served.push_back(queue);
      continue;
    }
    flows[i].rate = 0;
    frozen[i] = 1;
    --unfrozen;
  }
  while (unfrozen > 0) {
    double best = std::numeric_limits<double>::infinity();
    int bottleneck = -1;
    for (int r = 0; r < kResourceCount; ++r) {
      double use = 0;
      for (size_t i = 0; i < flows.size(); ++i) {
        if (!frozen[i]) use += demands[static_cast<size_t>(flows[i].op)].per_unit[static_cast<size_t>(r)];
      }
      if (use <= 0) continue;
      const double share = std::max(0.0, left[static_cast<size_t>(r)]) / use;
      if (share < best) {
        best = share;
        bottleneck = r;
      }
    }
    double limit = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < flows.size(); ++i) {
      if (!frozen[i] && max_rate[i] > 0) limit = std::min(limit, max_rate[i]);
    }
    if (limit < best) {
      for (size_t i = 0; i < flows.size(); ++i) {
        const Demand& d = demands[static_cast<size_t>(flows[i].op)];
        if (frozen[i] || max_rate[i] != limit) continue;
        flows[i].rate = limit;
        frozen[i] = 1;
        --unfrozen;
        for (int r = 0; r < kResourceCount; ++r) left[static_cast<size_t>(r)] -= limit * d.per_unit[static_cast<size_t>(r)];
      }
      continue;
    }
    if (bottleneck < 0) throw std::logic_error("a flowing op uses no resource");
    for (size_t i = 0; i < flows.size(); ++i) {
      const auto& per_unit = demands[static_cast<size_t>(flows[i].op)].per_unit;
      if (frozen[i] || per_unit[static_cast<size_t>(bottleneck)] <= 0) continue;
      flows[i].rate = best;
      frozen[i] = 1;
      --unfrozen;
      for (int r = 0; r < kResourceCount; ++r) left[static_cast<size_t>(r)] -= best * per_unit[static_cast<size_t>(r)];
    }
  }
}

class Engine {
 public:
  Engine(const core::Schedule& s, std::span<const Demand> d, const Capacities& c, core::TimelineSink& sink)
      : s_(s), demands_(d), capacities_(c), sink_(sink), gate_(s), remaining_deps_(s.ops.size()), users_(s.ops.size()) {
    for (const core::Op& op : s.ops) {
      remaining_deps_[static_cast<size_t>(op.id)] = static_cast<int>(op.deps.size());
      for (OpId dep : op.deps) users_[static_cast<size_t>(dep)].push_back(op.id);
      lanes_[static_cast<size_t>(op.lane)].queue.push_back(op.id);
    }
    for (int l = 0; l < core::kLaneCount; ++l) lanes_[static_cast<size_t>(l)].slots.assign(static_cast<size_t>(s.lane_slots[static_cast<size_t>(l)]), kNoOp);
    in_use_ = s.resident;
    result_.peak = s.resident;
    slot_of_.assign(s.ops.size(), 0);
  }

  EngineResult run();

 private:
  static constexpr OpId kNoOp = -1;
  struct LaneState {
    std::vector<OpId> queue;  // ops in issue order
    size_t next = 0;
    std::vector<OpId> slots;  // op running in each slot, or kNoOp
  };
  using Event = std::pair<SimTime, OpId>;

  void start_ready();
  void start(OpId op, core::Lane lane, int slot);
  void complete(OpId op);
  void apply(const core::MemoryStep& step);
  void record_overflow(core::Tier tier, OpId op);

  const core::Schedule& s_;
  std::span<const Demand> demands_;
  const Capacities& capacities_;
  core::TimelineSink& sink_;
  core::MemoryGate gate_;
  core::MemoryGate::Apply apply_ = [this](const core::MemoryStep& step) { apply(step); };
  SimTime now_ = 0;
  std::vector<int> remaining_deps_;
  std::vector<std::vector<OpId>> users_;
  std::array<LaneState, core::kLaneCount> lanes_;
  std::vector<int> slot_of_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> timed_;  // fixed ops and latency tails
  std::vector<Flow> flows_;
  bool flows_changed_ = false;
  size_t completed_ = 0;
  std::array<core::Bytes, 3> in_use_;
  std::vector<std::pair<OpId, bool>> history_;  // (op, started?) in order, for overflow holders
  int64_t memory_steps_ = 0;                      // applied so far (PeakRise::seq)
  EngineResult result_;
};

// One op's allocations (as it starts) or frees (as it ends, or when the
// memory gate lets them apply).
void Engine::apply(const core::MemoryStep& step) {
  const core::Op& o = s_.op(step.op);
  if (!result_.overflow) history_.emplace_back(step.op, step.start);
  std::array<bool, 3> touched{};
  for (const core::MemoryEffect& e : step.start ? o.allocs : o.frees) {
    const size_t t = static_cast<size_t>(e.tier);
    in_use_[t] += step.start ? e.bytes : core::Bytes(0) - e.bytes;
    touched[t] = true;
  }
  for (size_t t = 0; t < 3; ++t) {
    if (!touched[t]) continue;
    sink_.memory_changed(static_cast<core::Tier>(t), now_, in_use_[t]);
    if (in_use_[t] > result_.peak[t]) result_.rises[t].push_back({.seq = memory_steps_, .op = step.op, .in_use = in_use_[t]});
    result_.peak[t] = std::max(result_.peak[t], in_use_[t]);
    if (step.start && !result_.overflow && in_use_[t] > s_.capacity[t])
      record_overflow(static_cast<core::Tier>(t), step.op);
  }
  ++memory_steps_;
}

void Engine::record_overflow(core::Tier tier, OpId op) {
  Overflow o{.tier = tier, .at = now_, .op = op, .in_use = in_use_[static_cast<size_t>(tier)],
             .capacity = s_.capacity[static_cast<size_t>(tier)]};
  std::map<std::string, core::Bytes> held;
  for (const core::MemoryEffect& e : s_.resident_items) {
    if (e.tier == tier) held[e.tensor] += e.bytes;
  }
  for (const auto& [id, started] : history_) {
    const core::Op& h = s_.op(id);
    for (const core::MemoryEffect& e : started ? h.allocs : h.frees) {
      if (e.tier == tier) held[e.tensor] += started ? e.bytes : core::Bytes(0) - e.bytes;
    }
  }
  for (const auto& [name, bytes] : held) {
    if (bytes.count() > 0) o.holders.emplace_back(name, bytes);
  }
  std::stable_sort(o.holders.begin(), o.holders.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  result_.overflow = std::move(o);
}

void Engine::start(OpId op, core::Lane lane, int slot) {
  lanes_[static_cast<size_t>(lane)].slots[static_cast<size_t>(slot)] = op;
  slot_of_[static_cast<size_t>(op)] = slot;
  sink_.op_started(op, now_, slot);
  gate_.started(op, apply_);
  const Demand& d = demands_[static_cast<size_t>(op)];
  if (d.work > 0) {
    flows_.push_back({op, d.work});
    flows_changed_ = true;
  } else {
    timed_.push({now_ + std::max<SimTime>(1, d.fixed), op});
  }
}

// Starts every op that may start now, until none may: an op that starts
// may let another lane's op past the memory gate.
void Engine::start_ready() {
  for (bool progress = true; progress;) {
    progress = false;
    for (int l = 0; l < core::kLaneCount; ++l) {
      LaneState& lane = lanes_[static_cast<size_t>(l)];
      while (lane.next < lane.queue.size()) {
        const OpId op = lane.queue[lane.next];
        if (remaining_deps_[static_cast<size_t>(op)] > 0) break;  // in order: the lane waits
        if (!gate_.may_start(op)) break;                          // its memory is not free yet
        const auto free_slot = std::find(lane.slots.begin(), lane.slots.end(), kNoOp);
        if (free_slot == lane.slots.end()) break;
        ++lane.next;
        start(op, static_cast<core::Lane>(l), static_cast<int>(free_slot - lane.slots.begin()));
        progress = true;
      }
    }
  }
}

void Engine::complete(OpId op) {
  const core::Op& o = s_.op(op);
  gate_.ended(op, apply_);
  sink_.op_finished(op, now_);
  lanes_[static_cast<size_t>(o.lane)].slots[static_cast<size_t>(slot_of_[static_cast<size_t>(op)])] = kNoOp;
  for (OpId u : users_[static_cast<size_t>(op)]) --remaining_deps_[static_cast<size_t>(u)];
  ++completed_;
}

EngineResult Engine::run() {
  // Every tier starts at its resident bytes, so each has a counter from 0.
  for (core::Tier t : core::kAllTiers) sink_.memory_changed(t, 0, in_use_[static_cast<size_t>(t)]);
  start_ready();
  while (completed_ < s_.ops.size()) {
    if (flows_changed_) {
      share_fairly(flows_, demands_, capacities_);
      flows_changed_ = false;
    }
    SimTime next = timed_.empty() ? kNever : timed_.top().first;
    std::vector<SimTime> finish(flows_.size());
    for (size_t i = 0; i < flows_.size(); ++i) {
      if (flows_[i].rate <= 0) {  // waits in its queue
        finish[i] = kNever;
        continue;
      }
      finish[i] = now_ + std::max<SimTime>(1, static_cast<SimTime>(std::ceil(flows_[i].remaining / flows_[i].rate * 1e9)));
      next = std::min(next, finish[i]);
    }
    if (next == kNever) throw std::logic_error("simulation stalled: ops wait on each other");
    const double dt = static_cast<double>(next - now_) * 1e-9;
    now_ = next;
    // Flows that finish now hand over to their latency tail; the rest advance.
    std::vector<Flow> still;
    for (size_t i = 0; i < flows_.size(); ++i) {
      if (finish[i] == now_) {
        timed_.push({now_ + demands_[static_cast<size_t>(flows_[i].op)].latency, flows_[i].op});
        flows_changed_ = true;
      } else {
        flows_[i].remaining -= flows_[i].rate * dt;
        still.push_back(flows_[i]);
      }
    }
    flows_.swap(still);
    while (!timed_.empty() && timed_.top().first == now_) {
      const OpId op = timed_.top().second;
      timed_.pop();
      complete(op);
    }
    start_ready();
  }
  result_.makespan = now_;
  return result_;
}

}  // namespace

std::vector<double> fair_rates(std::span<const Demand> demands, const Capacities& capacities) {
  std::vector<Flow> flows;
  for (size_t i = 0; i < demands.size(); ++i) flows.push_back({static_cast<OpId>(i), demands[i].work});
  share_fairly(flows, demands, capacities);
  std::vector<double> rates;
  for (const Flow& f : flows) rates.push_back(f.rate);
  return rates;
}

EngineResult run_engine(const core::Schedule& schedule, std::span<const Demand> demands,
                        const Capacities& capacities, core::TimelineSink& sink) {
  return Engine(schedule, demands, capacities, sink).run();
}

}  // namespace stowage::sim
