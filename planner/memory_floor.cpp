#include "planner/memory_floor.h"

#include <algorithm>
#include <deque>
#include <map>
#include <string>
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
// lane frees, matched first in, first out by tier and tensor name.
std::vector<Held> matched_on_lane(const core::Schedule& s, const std::vector<core::OpId>& lane) {
  std::map<std::pair<core::Tier, std::string>, std::deque<std::pair<size_t, core::Bytes>>> open;
  std::vector<Held> out;
  for (size_t k = 0; k < lane.size(); ++k) {
    const core::Op& op = s.op(lane[k]);
    for (const core::MemoryEffect& e : op.allocs) open[{e.tier, e.tensor}].emplace_back(k, e.bytes);
    for (const core::MemoryEffect& e : op.frees) {
      auto it = open.find({e.tier, e.tensor});
      if (it == open.end() || it->second.empty()) continue;  // allocated on another lane
      out.push_back({it->second.front().first, k, e.tier, it->second.front().second});
      it->second.pop_front();
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
  Tiers floor = s.resident;
  for (size_t t = 0; t < 3; ++t) floor[t] += extra[t];
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
