#include "sim/step_floor.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace stowage::sim {
namespace {

using core::Lane;

// Seconds of each resource's capacity, and of each lane's slots, one step's
// ops take; and how much of each resource each lane's ops take.
struct StepWork {
  std::array<double, kResourceCount> resource{};
  std::array<double, core::kLaneCount> lane{};
  std::array<std::array<double, core::kLaneCount>, kResourceCount> resource_by_lane{};
};

void add(StepWork& w, const core::Op& op, const Demand& d, const Capacities& capacities, int slots) {
  const auto lane = static_cast<size_t>(op.lane);
  double alone_seconds = static_cast<double>(d.fixed) * 1e-9;
  if (d.work > 0) {
    alone_seconds = d.work / alone_rate(d, capacities) + static_cast<double>(d.latency) * 1e-9;
    for (size_t r = 0; r < w.resource.size(); ++r) {
      if (d.per_unit[r] <= 0 || capacities[r] <= 0) continue;
      const double seconds = d.work * d.per_unit[r] / capacities[r];
      w.resource[r] += seconds;
      w.resource_by_lane[r][lane] += seconds;
    }
  }
  w.lane[lane] += alone_seconds / std::max(1, slots);
}

}  // namespace

StepFloor step_floor(const core::Schedule& s, std::span<const Demand> demands, const Capacities& capacities) {
  // The steps read: between the fill and the drain, or the first.
  const int first = s.steps >= 3 ? 1 : 0;
  const int last = s.steps >= 3 ? s.steps - 2 : 0;
  StepWork work;
  for (const core::Op& op : s.ops) {
    const int step = std::max(0, op.step);
    if (step < first || step > last) continue;
    add(work, op, demands[static_cast<size_t>(op.id)], capacities, s.lane_slots[static_cast<size_t>(op.lane)]);
  }
  const double steps = last - first + 1;
  StepFloor out;
  double longest = 0;
  for (Lane lane : core::kAllLanes) {
    const double seconds = work.lane[static_cast<size_t>(lane)];
    if (seconds > longest) longest = seconds, out.lane = lane;
  }
  for (size_t r = 0; r < work.resource.size(); ++r) {
    if (work.resource[r] <= longest) continue;
    longest = work.resource[r];
    const auto& by_lane = work.resource_by_lane[r];
    out.lane = static_cast<Lane>(std::max_element(by_lane.begin(), by_lane.end()) - by_lane.begin());
  }
  out.length = std::llround(longest / steps * 1e9);
  return out;
}

}  // namespace stowage::sim
