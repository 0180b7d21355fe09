// Track placement follows the trace writer: an op goes on its slot's track
// while that is free at its start, else on the first free track past the
// lane's largest slot.
#include "gui/trace_from_timeline.h"

#include "core/memory_by_class.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace stowage::gui {
namespace {

TraceOp op_of(const core::Op& op, const core::OpSpan& span, TextRef name) {
  return {.id = op.id,
          .category = category_of(op.kind, op.lane),
          .kind = op.kind,
          .lane = op.lane,
          .start = span.start,
          .end = std::max(span.start, span.end),
          .name = name,
          .partition = op.partition,
          .layer = op.layer,
          .step = op.step,
          .micro_step = op.micro_step,
          .tensor_class = op.tensor_class,
          .bytes = op.bytes,
          .flops = op.flops};
}

// The ops of `lane` (indices into model.ops) grouped by track number.
std::map<int64_t, std::vector<int32_t>> place_lane(core::Lane lane, const TraceModel& model,
                                                   const std::vector<int>& slots) {
  std::vector<int32_t> ops;
  int64_t first_extra = 1;
  for (size_t i = 0; i < model.ops.size(); ++i) {
    if (model.ops[i].lane != lane) continue;
    ops.push_back(static_cast<int32_t>(i));
    first_extra = std::max(first_extra, int64_t{slots[i]} + 1);
  }
  const auto at = [&](int32_t i) -> const TraceOp& { return model.ops[static_cast<size_t>(i)]; };
  std::ranges::sort(ops, {}, [&](int32_t i) { return std::tuple(at(i).start, at(i).end, i); });
  std::map<int64_t, SimTime> free_from;
  std::map<int64_t, std::vector<int32_t>> tracks;
  for (const int32_t i : ops) {
    const auto busy = [&](int64_t n) {
      const auto it = free_from.find(n);
      return it != free_from.end() && it->second > at(i).start;
    };
    int64_t number = std::max(slots[static_cast<size_t>(i)], 0);
    if (busy(number)) {
      number = first_extra;
      while (busy(number)) ++number;
    }
    free_from[number] = at(i).end;
    tracks[number].push_back(i);
  }
  return tracks;
}

}  // namespace

TraceModel trace_from_timeline(const core::Schedule& schedule, const core::Timeline& timeline,
                               const core::TraceOptions& source) {
  TraceModel model;
  model.info = {.title = source.title,
                .source = source.source,
                .ranks = schedule.ranks,
                .steps = schedule.steps,
                .steady_step = source.steady_step,
                .falls_behind = source.falls_behind,
                .warnings = source.warnings,
                .origin = source.origin};
  std::vector<int> slots;
  for (size_t i = 0; i < schedule.ops.size() && i < timeline.spans.size(); ++i) {
    model.ops.push_back(op_of(schedule.ops[i], timeline.spans[i], model.add_text(schedule.ops[i].name)));
    slots.push_back(timeline.spans[i].slot);
  }
  for (size_t i = 0; i < model.ops.size(); ++i) {
    const std::vector<int64_t> ids(schedule.ops[i].deps.begin(), schedule.ops[i].deps.end());
    model.set_deps(static_cast<int32_t>(i), ids);
  }
  for (const core::Lane lane : core::kAllLanes) {
    for (auto& [number, ops] : place_lane(lane, model, slots)) {
      std::string name(core::to_string(lane));
      if (number > 0) name += " #" + std::to_string(number + 1);
      for (const int32_t i : ops)
        model.ops[static_cast<size_t>(i)].track = static_cast<int32_t>(model.tracks.size());
      model.tracks.push_back({.name = std::move(name), .rank = 0, .lane = lane, .ops = std::move(ops)});
    }
  }
  std::array<bool, 3> sampled{};
  for (const core::MemorySample& s : timeline.memory) {
    model.memory[static_cast<size_t>(s.tier)].push_back({.time = s.time, .bytes = s.bytes});
    sampled[static_cast<size_t>(s.tier)] = true;
  }
  // The breakdown a trace of this timeline would carry (core/chrome_trace.cpp).
  for (const core::ClassSample& c : core::memory_by_class(schedule, timeline)) {
    if (!sampled[static_cast<size_t>(c.tier)]) continue;
    ClassMemory& m = model.class_memory[static_cast<size_t>(c.tier)];
    m.begin_sample(c.time);
    for (size_t k = 0; k < core::kMemoryClassCount; ++k) {
      if (c.bytes[k].count() != 0) m.add(core::to_string(static_cast<core::MemoryClass>(k)), c.bytes[k]);
    }
  }
  for (const core::Tier tier : core::kAllTiers) {
    const core::Bytes cap = schedule.capacity[static_cast<size_t>(tier)];
    if (cap.count() > 0) model.capacity[static_cast<size_t>(tier)] = cap;
  }
  model.finish();
  return model;
}

}  // namespace stowage::gui
