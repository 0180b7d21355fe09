#include "gui/busy_time.h"

#include <algorithm>

namespace stowage::gui {
namespace {
constexpr auto kLanes = static_cast<size_t>(core::kLaneCount);
}  // namespace

BusyTime::BusyTime(std::vector<std::pair<SimTime, SimTime>> spans) {
  std::erase_if(spans, [](const auto& s) { return s.second <= s.first; });
  if (!std::ranges::is_sorted(spans)) std::ranges::sort(spans);
  for (const auto& [a, b] : spans) {
    if (!end_.empty() && a <= end_.back()) {
      end_.back() = std::max(end_.back(), b);
      continue;
    }
    begin_.push_back(a);
    end_.push_back(b);
  }
  prefix_.resize(begin_.size());
  SimTime sum = 0;
  for (size_t i = 0; i < begin_.size(); ++i) prefix_[i] = sum += end_[i] - begin_[i];
}

BusyTime BusyTime::union_of(std::span<const BusyTime* const> parts) {
  if (parts.size() == 1) return *parts.front();
  std::vector<std::pair<SimTime, SimTime>> spans;
  for (const BusyTime* p : parts) {
    for (size_t i = 0; i < p->begin_.size(); ++i) spans.emplace_back(p->begin_[i], p->end_[i]);
  }
  return BusyTime(std::move(spans));
}

// Intervals wholly before t count whole; the one containing t counts up to t.
SimTime BusyTime::covered_before(SimTime t) const {
  const auto it = std::ranges::upper_bound(begin_, t);  // first interval starting after t
  if (it == begin_.begin()) return 0;
  const auto i = static_cast<size_t>(it - begin_.begin()) - 1;  // the last starting at or before t
  const SimTime before = i > 0 ? prefix_[i - 1] : 0;
  return before + std::min(end_[i], t) - begin_[i];
}

SimTime BusyTime::busy_in(SimTime begin, SimTime end) const {
  if (end <= begin) return 0;
  return covered_before(end) - covered_before(begin);
}

double BusyTime::share_in(SimTime begin, SimTime end) const {
  if (end <= begin) return 0;
  return static_cast<double>(busy_in(begin, end)) / static_cast<double>(end - begin);
}

BusyTime busy_time_of(const TraceModel& model, std::span<const int32_t> ops) {
  std::vector<std::pair<SimTime, SimTime>> spans;
  spans.reserve(ops.size());
  for (const int32_t i : ops)
    spans.emplace_back(model.ops[static_cast<size_t>(i)].start, model.ops[static_cast<size_t>(i)].end);
  return BusyTime(std::move(spans));
}

const BusyTime* LaneBusy::of(int rank, core::Lane lane) const {
  const size_t i = static_cast<size_t>(rank) * kLanes + static_cast<size_t>(lane);
  return rank >= 0 && i < by_rank_lane.size() ? &by_rank_lane[i] : nullptr;
}

LaneBusy lane_busy(const TraceModel& model) {
  LaneBusy out;
  const auto ranks = static_cast<size_t>(std::max(1, model.rank_count()));
  std::vector<std::vector<const BusyTime*>> rank_lane(ranks * kLanes);
  out.by_track.reserve(model.tracks.size());
  for (const Track& track : model.tracks) out.by_track.push_back(busy_time_of(model, track.ops));
  for (size_t t = 0; t < model.tracks.size(); ++t) {
    const Track& track = model.tracks[t];
    rank_lane[static_cast<size_t>(track.rank) * kLanes + static_cast<size_t>(track.lane)].push_back(
        &out.by_track[t]);
  }
  out.by_rank_lane.reserve(rank_lane.size());
  for (const auto& group : rank_lane) out.by_rank_lane.push_back(BusyTime::union_of(group));
  for (size_t l = 0; l < kLanes; ++l) {
    std::vector<const BusyTime*> lane;
    for (size_t r = 0; r < ranks; ++r) lane.push_back(&out.by_rank_lane[r * kLanes + l]);
    out.by_lane[l] = BusyTime::union_of(lane);
  }
  return out;
}

}  // namespace stowage::gui
