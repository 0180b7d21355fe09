#include "sim/summary.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace stowage::sim {
namespace {

using core::Lane;
using core::OpId;
using core::SimTime;

bool is_data_movement(Lane lane) { return lane != Lane::kGpuCompute; }

// Busy time of one lane inside [from, to): the union of its ops' spans.
SimTime busy_in(const core::Schedule& s, const core::Timeline& t, Lane lane, SimTime from, SimTime to) {
  std::vector<std::pair<SimTime, SimTime>> spans;
  for (const core::Op& op : s.ops) {
    if (op.lane != lane) continue;
    const core::OpSpan& sp = t.spans[static_cast<size_t>(op.id)];
    const SimTime a = std::max(sp.start, from), b = std::min(sp.end, to);
    if (a < b) spans.emplace_back(a, b);
  }
  std::sort(spans.begin(), spans.end());
  SimTime busy = 0, reach = from;
  for (const auto& [a, b] : spans) {
    if (b <= reach) continue;
    busy += b - std::max(a, reach);
    reach = b;
  }
  return busy;
}

// Walks back from the op that ends last: each step goes to whichever
// predecessor (a dependency, or the op before it on its lane) ended last.
std::vector<OpId> critical_path(const core::Schedule& s, const core::Timeline& t) {
  if (s.ops.empty()) return {};
  std::vector<OpId> lane_prev(s.ops.size(), -1);
  std::array<OpId, core::kLaneCount> last{};
  last.fill(-1);
  for (const core::Op& op : s.ops) {
    lane_prev[static_cast<size_t>(op.id)] = last[static_cast<size_t>(op.lane)];
    last[static_cast<size_t>(op.lane)] = op.id;
  }
  auto end_of = [&](OpId id) { return t.spans[static_cast<size_t>(id)].end; };
  OpId at = 0;
  for (const core::Op& op : s.ops) {
    if (end_of(op.id) >= end_of(at)) at = op.id;
  }
  std::vector<OpId> path{at};
  while (true) {
    OpId best = -1;
    auto consider = [&](OpId p) {
      if (p >= 0 && end_of(p) <= t.spans[static_cast<size_t>(at)].start && (best < 0 || end_of(p) > end_of(best))) best = p;
    };
    for (OpId d : s.op(at).deps) consider(d);
    if (s.lane_slots[static_cast<size_t>(s.op(at).lane)] == 1) consider(lane_prev[static_cast<size_t>(at)]);
    if (best < 0) break;
    path.push_back(best);
    at = best;
  }
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace

core::TraceOptions predicted_trace_options(const Summary& summary, std::string title,
                                           const core::MachineSpec& machine) {
  return {.title = std::move(title),
          .source = "predicted",
          .steady_step = static_cast<SimTime>(std::llround(summary.step_time.value() * 1e9)),
          .falls_behind = summary.falls_behind,
          .origin = core::predicted_on(machine)};
}

Summary summarize(const core::Schedule& s, const core::Timeline& t, const std::array<core::Bytes, 3>& peak,
                  const StepFloor& floor) {
  Summary out;
  out.peak_memory = peak;
  SimTime makespan = 0;
  for (const core::OpSpan& sp : t.spans) makespan = std::max(makespan, sp.end);
  // First forward op of each step.
  std::vector<SimTime> step_start(static_cast<size_t>(s.steps), -1);
  for (const core::Op& op : s.ops) {
    if (op.kind == core::OpKind::kForward && step_start[static_cast<size_t>(op.step)] < 0) {
      step_start[static_cast<size_t>(op.step)] = t.spans[static_cast<size_t>(op.id)].start;
    }
  }
  // The measured window: the last two step intervals when there are three
  // steps or more, averaged, since a pipeline may settle into a period of two
  // steps (measured: a delayed update alternating 35.8 s and 34.5 s); else
  // the one interval there is, or the whole run.
  const int window_steps = s.steps >= 3 ? 2 : 1;
  SimTime from = 0, span = makespan;
  if (s.steps >= 2) {
    from = step_start[static_cast<size_t>(s.steps - 1 - window_steps)];
    span = step_start[static_cast<size_t>(s.steps - 1)] - from;
  }
  const SimTime to = from + span;
  const SimTime window_length = span / window_steps;
  const SimTime length = std::max(window_length, floor.length);
  // Named only past rounding: the engine rounds each op up to a whole
  // nanosecond, the floor sums exact seconds.
  if (length > window_length + window_length / 1000) out.falls_behind = floor.lane;
  out.window_start = to - window_length;
  out.window_step_time = core::Seconds(static_cast<double>(window_length) * 1e-9);
  out.step_time = core::Seconds(static_cast<double>(length) * 1e-9);
  if (length > 0) {
    out.tokens_per_second = static_cast<double>(s.tokens_per_step) / out.step_time.value();
    out.model_flops_per_second_per_gpu = s.model_flops_per_step.count() / out.step_time.value() / s.ranks;
    for (Lane lane : core::kAllLanes) {
      out.lane_busy[static_cast<size_t>(lane)] =
          static_cast<double>(busy_in(s, t, lane, from, to)) / static_cast<double>(span);
    }
  }
  // Exposed transfer time: gaps on the compute lane whose op waited on data.
  SimTime exposed = 0, previous_end = from;
  for (const core::Op& op : s.ops) {
    if (op.lane != Lane::kGpuCompute) continue;
    const core::OpSpan& sp = t.spans[static_cast<size_t>(op.id)];
    if (sp.start >= from && sp.start < to && sp.start > previous_end) {
      OpId latest = -1;
      for (OpId d : op.deps) {
        if (latest < 0 || t.spans[static_cast<size_t>(d)].end > t.spans[static_cast<size_t>(latest)].end) latest = d;
      }
      if (latest >= 0 && is_data_movement(s.op(latest).lane) && t.spans[static_cast<size_t>(latest)].end == sp.start) {
        exposed += sp.start - std::max(previous_end, from);
      }
    }
    if (sp.start >= from) previous_end = std::max(previous_end, sp.end);
  }
  // Work falling behind on a transfer lane would, in a longer run, hold the
  // compute lane for the rest of the floor.
  SimTime behind = 0;
  if (out.falls_behind && is_data_movement(*out.falls_behind)) behind = length - window_length;
  out.exposed_transfer_time = core::Seconds(static_cast<double>(exposed / window_steps + behind) * 1e-9);
  out.critical_path = critical_path(s, t);
  std::array<SimTime, core::kLaneCount> on_path{};
  for (OpId id : out.critical_path) {
    const core::OpSpan& sp = t.spans[static_cast<size_t>(id)];
    on_path[static_cast<size_t>(s.op(id).lane)] += sp.end - sp.start;
  }
  size_t busiest = 0;
  for (size_t i = 1; i < core::kLaneCount; ++i) {
    const double a = out.lane_busy[i], b = out.lane_busy[busiest];
    if (a > b || (a == b && on_path[i] > on_path[busiest])) busiest = i;
  }
  out.bounding_lane = out.falls_behind.value_or(static_cast<Lane>(busiest));
  return out;
}

}  // namespace stowage::sim
