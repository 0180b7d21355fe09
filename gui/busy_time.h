// How long a lane (or a track) was busy within any span of time: the union
// of its ops' spans, so ops that overlap on a lane's slots count once (a
// lane is busy while at least one of its slots is). Built once per
// timeline, off the GUI thread; a query is two binary searches, so lane
// headers can show their busy share for every repaint. GUI-free.
#pragma once

#include <span>
#include <utility>
#include <vector>

#include "gui/trace_model.h"

namespace stowage::gui {

class BusyTime {
 public:
  BusyTime() = default;
  // `spans`: [start, end) pairs in ns, in any order; empty ones are ignored.
  explicit BusyTime(std::vector<std::pair<SimTime, SimTime>> spans);
  // The union of several (a lane's slots): cheaper than from their ops, as
  // each is already a sorted list of disjoint intervals.
  [[nodiscard]] static BusyTime union_of(std::span<const BusyTime* const> parts);

  // ns within [begin, end) covered by at least one span; 0 when end <= begin.
  [[nodiscard]] SimTime busy_in(SimTime begin, SimTime end) const;
  // busy_in(begin, end) / (end - begin); 0 for an empty span.
  [[nodiscard]] double share_in(SimTime begin, SimTime end) const;
  [[nodiscard]] SimTime total() const { return prefix_.empty() ? 0 : prefix_.back(); }
  [[nodiscard]] size_t intervals() const { return begin_.size(); }

 private:
  // Disjoint intervals by start; prefix_[i] is the length of intervals [0, i].
  std::vector<SimTime> begin_, end_, prefix_;
  [[nodiscard]] SimTime covered_before(SimTime t) const;  // busy within (-inf, t)
};

// The ops of `ops` (indices into model.ops) as spans.
[[nodiscard]] BusyTime busy_time_of(const TraceModel& model, std::span<const int32_t> ops);

// Busy time per track and per (rank, lane), as the lane headers show it.
struct LaneBusy {
  std::vector<BusyTime> by_track;                  // by track index
  std::vector<BusyTime> by_rank_lane;              // rank * kLaneCount + lane
  std::array<BusyTime, core::kLaneCount> by_lane;  // all ranks together, as sim::Summary counts
  [[nodiscard]] const BusyTime* of(int rank, core::Lane lane) const;
};
[[nodiscard]] LaneBusy lane_busy(const TraceModel& model);

}  // namespace stowage::gui
