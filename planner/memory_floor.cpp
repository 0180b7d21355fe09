#include "planner/memory_floor.h"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/gather_pieces.h"
#include "core/lower.h"
#include "core/memory_estimate.h"

namespace stowage::planner {
namespace {

using Tiers = std::array<core::Bytes, 3>;

// One allocation by the op at `from` in a lane's order, freed by the op at
// `to` of the same lane (`to` >= `from`).
struct Held {
  size_t from, to;
  core::Tier tier;
  core::Bytes bytes;
};

// The allocations of a lane's ops (in issue order) that an op of the same
// lane frees, matched first in, first out by tier and tensor name. Keys
// view the schedule's names: the planner takes the floor of thousands of
// lowered candidates, and copying every name into an ordered map was a
// tenth of planning a trillion-parameter model.
std::vector<Held> matched_on_lane(const core::Schedule& s, const std::vector<core::OpId>& lane) {
  struct Open {
    std::vector<std::pair<size_t, core::Bytes>> allocations;
    size_t next = 0;  // the first not yet freed
  };
  std::array<std::unordered_map<std::string_view, Open>, 3> open;
  std::vector<Held> out;
  for (size_t k = 0; k < lane.size(); ++k) {
    const core::Op& op = s.op(lane[k]);
    for (const core::MemoryEffect& e : op.allocs)
      open[static_cast<size_t>(e.tier)][e.tensor].allocations.emplace_back(k, e.bytes);
    for (const core::MemoryEffect& e : op.frees) {
      auto& by_name = open[static_cast<size_t>(e.tier)];
      auto it = by_name.find(e.tensor);
      if (it == by_name.end() || it->second.next == it->second.allocations.size())
        continue;  // allocated on another lane
      const auto& [from, bytes] = it->second.allocations[it->second.next++];
      out.push_back({from, k, e.tier, bytes});
    }
  }
  return out;
}

// The most a one-op-at-a-time lane holds for certain at the start of one of
// its ops, by tier (memory_floor's rule), besides what is resident.
Tiers lane_floor(const core::Schedule& s, const std::vector<core::OpId>& lane) {
  // held[k]: what earlier ops allocated and op k or a later one frees.
  std::vector<Tiers> delta(lane.size() + 1);
  for (const Held& h : matched_on_lane(s, lane)) {
    if (h.to == h.from) continue;  // the op's own, counted below
    delta[h.from + 1][static_cast<size_t>(h.tier)] += h.bytes;
    delta[h.to + 1][static_cast<size_t>(h.tier)] -= h.bytes;
  }
  Tiers running{}, best{};
  for (size_t k = 0; k < lane.size(); ++k) {
    for (size_t t = 0; t < 3; ++t) running[t] += delta[k][t];
    Tiers at = running;
    for (const core::MemoryEffect& e : s.op(lane[k]).allocs) at[static_cast<size_t>(e.tier)] += e.bytes;
    for (size_t t = 0; t < 3; ++t) best[t] = std::max(best[t], at[t]);
  }
  return best;
}

// Which ops are certain to have started no later than a given op starts,
// in any run: on each lane ops start in issue order, and an op starts only
// once its dependencies have ended (so after they started). started_by[x]
// holds, per lane, the highest issue index on that lane among such ops (x
// itself included), or -1. Ops are numbered in an order where dependencies
// and lane predecessors come first (core::lower's topological order).
struct Precedence {
  std::array<std::vector<core::OpId>, core::kLaneCount> lanes;
  std::vector<int32_t> index;  // an op's place in its lane
  std::vector<std::array<int32_t, core::kLaneCount>> started_by;

  explicit Precedence(const core::Schedule& s) : index(s.ops.size()), started_by(s.ops.size()) {
    for (const core::Op& op : s.ops) {
      std::vector<core::OpId>& lane = lanes[static_cast<size_t>(op.lane)];
      const size_t i = static_cast<size_t>(op.id);
      std::array<int32_t, core::kLaneCount>& v = started_by[i];
      v.fill(-1);
      if (!lane.empty()) v = started_by[static_cast<size_t>(lane.back())];
      for (core::OpId d : op.deps) {
        const auto& w = started_by[static_cast<size_t>(d)];
        for (size_t l = 0; l < v.size(); ++l) v[l] = std::max(v[l], w[l]);
      }
      index[i] = static_cast<int32_t>(lane.size());
      v[static_cast<size_t>(op.lane)] = index[i];
      lane.push_back(op.id);
    }
  }
  // a starts no later than x, in every run.
  [[nodiscard]] bool precedes(const core::Schedule& s, core::OpId a, core::OpId x) const {
    return started_by[static_cast<size_t>(x)][static_cast<size_t>(s.op(a).lane)] >= index[static_cast<size_t>(a)];
  }
};

// What is held for certain at the start of some op, across lanes: an
// allocation made as op A starts and freed as op F ends is held when op X
// starts if A starts no later than X and X no later than F (F ends after
// it starts). Along one lane both conditions are monotone in X's place, so
// each allocation is held over a run of that lane's ops; the most any op
// of any lane sees, summed, is the floor. Only a tensor freed once, by the
// bytes its allocations add up to, is counted (a name reused could pair an
// allocation with another's free), and nothing never freed: the steady
// schedules free in a later step what this step's last ops allocate, which
// this one-step schedule cannot see.
Tiers cross_lane_floor(const core::Schedule& s) {
  // A tensor's allocations (a gathered layer's pieces each allocate their
  // share of one host gradient buffer) and its one free of them all.
  struct Life {
    std::vector<std::pair<core::OpId, core::Bytes>> allocs;
    core::OpId free = -1;
    int frees = 0;
    core::Bytes freed;
  };
  std::array<std::unordered_map<std::string_view, Life>, 3> lives;
  for (const core::Op& op : s.ops) {
    for (const core::MemoryEffect& e : op.allocs)
      lives[static_cast<size_t>(e.tier)][e.tensor].allocs.emplace_back(op.id, e.bytes);
    for (const core::MemoryEffect& e : op.frees) {
      Life& l = lives[static_cast<size_t>(e.tier)][e.tensor];
      l.free = op.id;
      l.freed = e.bytes;
      ++l.frees;
    }
  }
  std::array<std::vector<const Life*>, 3> counted;
  for (size_t t = 0; t < 3; ++t) {
    for (const auto& [name, l] : lives[t]) {
      core::Bytes allocated;
      for (const auto& [a, bytes] : l.allocs) allocated += bytes;
      if (l.frees == 1 && allocated == l.freed) counted[t].push_back(&l);
    }
  }
  const Precedence p(s);
  Tiers best{};
  for (size_t lane = 0; lane < p.lanes.size(); ++lane) {
    const std::vector<core::OpId>& ops = p.lanes[lane];
    if (ops.empty()) continue;
    std::array<std::vector<int64_t>, 3> delta;
    for (auto& d : delta) d.assign(ops.size() + 1, 0);
    for (size_t t = 0; t < 3; ++t) {
      for (const Life* l : counted[t]) {
        // ... up to the last op X of the lane that starts no later than F.
        const int64_t hi = p.started_by[static_cast<size_t>(l->free)][lane];
        if (hi < 0) continue;  // no op of the lane starts before F
        for (const auto& [a, bytes] : l->allocs) {
          // From the first op X of the lane that A starts no later than.
          const auto first = std::partition_point(ops.begin(), ops.end(),
                                                  [&](core::OpId x) { return !p.precedes(s, a, x); });
          const int64_t lo = first - ops.begin();
          if (lo > hi || bytes.count() <= 0) continue;
          delta[t][static_cast<size_t>(lo)] += bytes.count();
          delta[t][static_cast<size_t>(hi) + 1] -= bytes.count();
        }
      }
      int64_t running = 0;
      for (size_t k = 0; k < ops.size(); ++k) {
        running += delta[t][k];
        best[t] = std::max(best[t], core::Bytes(running));
      }
    }
  }
  return best;
}

}  // namespace

std::array<core::Bytes, 3> rank_capacity(const core::MachineSpec& m) {
  return {m.gpu.memory, m.host.dram / m.gpu_count, m.total_nvme_capacity() / m.gpu_count};
}

std::array<core::Bytes, 3> memory_floor(const core::Schedule& s) {
  std::array<std::vector<core::OpId>, core::kLaneCount> lanes;
  for (const core::Op& op : s.ops) lanes[static_cast<size_t>(op.lane)].push_back(op.id);
  Tiers extra{};
  for (size_t l = 0; l < lanes.size(); ++l) {
    // A lane with several slots runs ops side by side: only each op's own
    // allocations are certain at its start.
    const bool one_at_a_time = s.lane_slots[l] == 1;
    Tiers here{};
    if (one_at_a_time) {
      here = lane_floor(s, lanes[l]);
    } else {
      for (core::OpId id : lanes[l]) {
        Tiers own{};
        for (const core::MemoryEffect& e : s.op(id).allocs) own[static_cast<size_t>(e.tier)] += e.bytes;
        for (size_t t = 0; t < 3; ++t) here[t] = std::max(here[t], own[t]);
      }
    }
    for (size_t t = 0; t < 3; ++t) extra[t] = std::max(extra[t], here[t]);
  }
  const Tiers across = cross_lane_floor(s);
  Tiers floor = s.resident;
  for (size_t t = 0; t < 3; ++t) floor[t] += std::max(extra[t], across[t]);
  return floor;
}

std::array<core::Bytes, 3> resting_floor(const Candidate& c, const core::MachineSpec& machine,
                                         const core::Workload& workload) {
  const core::Policy& p = c.policy;
  const int g = machine.gpu_count;
  // Shards per rank as lowering takes them (core/lower.cpp: param_shard, state_params).
  const int param_ranks = p.stage == core::ZeroStage::k3 ? g : 1;
  const int state_ranks = p.stage >= core::ZeroStage::k1 ? g : 1;
  const std::vector<core::Partition> parts = core::partitions_of(workload, p.sub_group_params);
  Tiers floor{};
  for (size_t j = 0; j < parts.size() && j < p.partitions.size(); ++j) {
    floor[static_cast<size_t>(p.partitions[j].param16)] += core::Bytes(2 * parts[j].params / param_ranks);
    floor[static_cast<size_t>(p.partitions[j].optimizer_states)] +=
        core::Bytes(core::state_bytes_per_param(p.optimizer_state_precision) * (parts[j].params / state_ranks));
  }
  // One micro-batch's saved activations: the forward ops allocate them and
  // the backward ops of the same lane free them, so all are held when the
  // last forward starts (memory_floor's rule, summed as lowering sizes them).
  // Or, if more, the largest gathered piece's grad16 (a layer's unless
  // gathered by parameter), which its backward op allocates whole on the
  // GPU (core/lower.cpp).
  const int64_t tokens = c.training.tokens_per_micro_batch();
  core::Bytes activations;
  for (size_t l = 0; l < workload.layers().size(); ++l) {
    const core::ComputeFootprint f = workload.footprint(l, tokens);
    activations += p.activation_checkpointing ? f.checkpointed : f.saved;
  }
  const core::Bytes gradients(2 * core::largest_gather_piece(workload, p.gather_params));
  floor[static_cast<size_t>(core::Tier::kGpu)] += std::max(activations, gradients);
  const core::RuntimeBuffers reserves;
  floor[static_cast<size_t>(core::Tier::kGpu)] += reserves.gpu_reserve;
  floor[static_cast<size_t>(core::Tier::kCpu)] += reserves.host_reserve / g;
  return floor;
}

std::array<core::Bytes, 3> memory_floor(const Candidate& c, const core::MachineSpec& machine,
                                        const core::Workload& workload) {
  auto schedule = core::lower(c.policy, machine, workload, c.training, {.steps = 1, .validate = false});
  if (!schedule) return {};
  return memory_floor(*schedule);
}

}  // namespace stowage::planner
