#include "calibration/trace_metrics.h"

#include <algorithm>
#include <limits>
#include <set>

#include "core/measured_steps.h"

namespace stowage::calibration {
namespace {

using core::Lane;
using core::SimTime;
using Spans = std::vector<std::pair<SimTime, SimTime>>;

// Sorted, merged, disjoint.
Spans merged(Spans spans) {
  std::sort(spans.begin(), spans.end());
  Spans out;
  for (auto [a, b] : spans) {
    if (b <= a) continue;
    if (!out.empty() && a <= out.back().second) {
      out.back().second = std::max(out.back().second, b);
    } else {
      out.emplace_back(a, b);
    }
  }
  return out;
}

SimTime length(const Spans& disjoint) {
  SimTime total = 0;
  for (auto [a, b] : disjoint) total += b - a;
  return total;
}

// Length of the intersection of two sorted disjoint lists.
SimTime overlap(const Spans& x, const Spans& y) {
  SimTime total = 0;
  size_t i = 0, j = 0;
  while (i < x.size() && j < y.size()) {
    const SimTime a = std::max(x[i].first, y[j].first), b = std::min(x[i].second, y[j].second);
    if (b > a) total += b - a;
    (x[i].second < y[j].second) ? ++i : ++j;
  }
  return total;
}

std::vector<SimTime> step_lengths(const TimingView& v, SimTime begin) {
  core::StepEnds ends;
  for (const OpTiming& op : v.ops) ends.add(op.step, op.end);
  std::vector<SimTime> out;
  for (const core::MeasuredStep& step : ends.steps(begin)) out.push_back(step.length);
  return out;
}

// Charges each gap of the compute lane to the lane its next op waited on.
void charge_gpu_waits(const TimingView& v, SimTime begin, TraceMetrics& m) {
  SimTime reach = begin;
  for (const OpTiming& op : v.ops) {  // issue order is the lane's order
    if (op.lane != Lane::kGpuCompute) continue;
    if (op.start > reach) {
      Lane waited = Lane::kGpuCompute;
      SimTime latest = std::numeric_limits<SimTime>::min();
      for (int32_t k = op.first_dep; k < op.end_dep; ++k) {
        const OpTiming& dep = v.ops[static_cast<size_t>(v.deps[static_cast<size_t>(k)])];
        if (dep.lane != Lane::kGpuCompute && dep.end > latest) {
          latest = dep.end;
          waited = dep.lane;
        }
      }
      m.gpu_waits_on[static_cast<size_t>(waited)] += op.start - reach;
    }
    reach = std::max(reach, op.end);
  }
}

// Each lane's busy time per step over the steps after the first (all of
// them when there is one): the warm-up is left out, as steady_step_time
// leaves it out (core/measured_steps.h; ops before step 0 count as step 0
// there and here).
void steady_busy(const TimingView& v, TraceMetrics& m) {
  auto step_of = [](const OpTiming& op) { return std::max(0, op.step); };
  int first = std::numeric_limits<int>::max(), last = std::numeric_limits<int>::min();
  for (const OpTiming& op : v.ops) first = std::min(first, step_of(op)), last = std::max(last, step_of(op));
  const bool skip_first = last > first;
  std::array<Spans, core::kLaneCount> spans;
  std::set<int> steps;
  for (const OpTiming& op : v.ops) {
    if (skip_first && step_of(op) == first) continue;
    spans[static_cast<size_t>(op.lane)].emplace_back(op.start, op.end);
    steps.insert(step_of(op));
  }
  const auto count = static_cast<SimTime>(std::max<size_t>(1, steps.size()));
  for (size_t l = 0; l < spans.size(); ++l) m.lanes[l].steady_busy = length(merged(std::move(spans[l]))) / count;
}

}  // namespace

SimTime union_length(Spans spans) { return length(merged(std::move(spans))); }

SimTime TraceMetrics::steady_step_time() const {
  return core::steady_step_length(step_times);
}

TraceMetrics trace_metrics(const core::Schedule& s, const core::Timeline& t) {
  TimingView v;
  v.ops.reserve(s.ops.size());
  for (const core::Op& op : s.ops) {
    const core::OpSpan& sp = t.spans[static_cast<size_t>(op.id)];
    const auto first = static_cast<int32_t>(v.deps.size());
    v.deps.insert(v.deps.end(), op.deps.begin(), op.deps.end());
    v.ops.push_back({.lane = op.lane, .step = op.step, .bytes = op.bytes.count(), .start = sp.start, .end = sp.end,
                     .first_dep = first, .end_dep = static_cast<int32_t>(v.deps.size())});
  }
  return trace_metrics(v);
}

TraceMetrics trace_metrics(const TimingView& v) {
  TraceMetrics m;
  std::array<Spans, core::kLaneCount> spans;
  SimTime begin = std::numeric_limits<SimTime>::max(), end = std::numeric_limits<SimTime>::min();
  for (const OpTiming& op : v.ops) {
    spans[static_cast<size_t>(op.lane)].emplace_back(op.start, op.end);
    LaneMetrics& lane = m.lanes[static_cast<size_t>(op.lane)];
    lane.bytes += op.bytes;
    ++lane.ops;
    begin = std::min(begin, op.start);
    end = std::max(end, op.end);
  }
  if (v.ops.empty()) return m;
  m.makespan = end - begin;
  std::array<Spans, core::kLaneCount> disjoint;
  Spans every_lane;
  for (size_t l = 0; l < spans.size(); ++l) {
    disjoint[l] = merged(std::move(spans[l]));
    m.lanes[l].busy = length(disjoint[l]);
    every_lane.insert(every_lane.end(), disjoint[l].begin(), disjoint[l].end());
  }
  m.any_lane_busy = union_length(std::move(every_lane));
  const Spans& compute = disjoint[static_cast<size_t>(Lane::kGpuCompute)];
  for (Lane lane : core::kAllLanes) {
    if (is_transfer_lane(lane)) m.lanes[static_cast<size_t>(lane)].hidden = overlap(disjoint[static_cast<size_t>(lane)], compute);
  }
  m.gpu_idle = m.makespan - m.lanes[static_cast<size_t>(Lane::kGpuCompute)].busy;
  charge_gpu_waits(v, begin, m);
  m.step_times = step_lengths(v, begin);
  steady_busy(v, m);
  return m;
}

}  // namespace stowage::calibration
