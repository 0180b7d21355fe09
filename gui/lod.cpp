#include "gui/lod.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>

namespace stowage::gui {
namespace {

bool narrow(const LodBox& b, SimTime threshold) {
  return b.end - b.start < threshold;
}

void absorb(LodBox& run, const LodBox& item) {
  // The run takes the category of whichever part kept its lane busier.
  if (item.lead > run.lead) run.category = item.category, run.lead = item.lead;
  run.end = std::max(run.end, item.end);
  run.count += item.count;
  run.busy += item.busy;
}

LodLevel make_level(SimTime threshold, std::vector<LodBox> boxes) {
  SimTime widest = 0;
  for (const LodBox& b : boxes) widest = std::max(widest, b.end - b.start);
  return {.threshold = threshold, .boxes = std::move(boxes), .widest = widest};
}

std::vector<LodBox> single_ops(const TraceModel& model, const Track& track) {
  std::vector<LodBox> boxes;
  boxes.reserve(track.ops.size());
  for (size_t p = 0; p < track.ops.size(); ++p) {
    const TraceOp& op = model.ops[static_cast<size_t>(track.ops[p])];
    boxes.push_back({.start = op.start,
                     .end = op.end,
                     .first = static_cast<int32_t>(p),
                     .count = 1,
                     .busy = op.duration(),
                     .lead = op.duration(),
                     .category = op.category});
  }
  return boxes;
}

TrackLod build_track(const TraceModel& model, const Track& track, const LodOptions& options) {
  std::vector<LodLevel> levels;
  levels.push_back(make_level(0, single_ops(model, track)));
  const SimTime span = model.end_time() - model.begin_time();
  // One working buffer, merged in place level after level: a fresh vector
  // per level cost a million-op trace about a gigabyte of pages faulted in
  // and given back (issue 18 item 7: perf put half of an open's page faults
  // here). Only the levels kept are copied, each at its exact size.
  std::vector<LodBox> working = levels.front().boxes;
  for (SimTime t = options.first_threshold; working.size() > 1 && t / options.growth <= span;
       t *= options.growth) {
    merge_level_in_place(working, t);
    // Keep a level only when it saves a tenth of the boxes: in between, the
    // finer level draws nearly as fast.
    if (working.size() * 10 <= levels.back().boxes.size() * 9) {
      levels.push_back(make_level(t, std::vector<LodBox>(working.begin(), working.end())));
    }
  }
  return TrackLod(std::move(levels));
}

}  // namespace

void merge_level_in_place(std::vector<LodBox>& items, SimTime threshold) {
  // Boxes are written at or before the position being read, so the merge
  // can run over its own input.
  size_t out = 0;         // boxes written so far
  bool run_open = false;  // does items[out - 1] accept more narrow items?
  for (size_t i = 0; i < items.size(); ++i) {
    const LodBox item = items[i];
    const bool small = narrow(item, threshold);
    if (run_open && small && item.start - items[out - 1].end < threshold) {
      absorb(items[out - 1], item);
      continue;
    }
    items[out++] = item;
    run_open = small || item.count > 1;
  }
  items.resize(out);
}

std::vector<LodBox> merge_level(std::span<const LodBox> items, SimTime threshold) {
  std::vector<LodBox> out(items.begin(), items.end());
  merge_level_in_place(out, threshold);
  return out;
}

const LodLevel& TrackLod::level_for(double max_threshold) const {
  const LodLevel* best = &levels_.front();
  for (const LodLevel& level : levels_) {
    if (static_cast<double>(level.threshold) <= max_threshold) best = &level;
  }
  return *best;
}

std::span<const LodBox> TrackLod::visible(const LodLevel& level, SimTime begin, SimTime end) {
  const auto& boxes = level.boxes;
  const auto first = std::ranges::lower_bound(boxes, begin - level.widest, {}, &LodBox::start);
  const auto last = std::ranges::upper_bound(first, boxes.end(), end, {}, &LodBox::start);
  return {first, last};
}

// Tracks are independent: they are built on up to hardware_concurrency()
// threads, each taking the next track not yet built.
std::vector<TrackLod> build_lod(const TraceModel& model, const LodOptions& options) {
  std::vector<std::optional<TrackLod>> built(model.tracks.size());
  std::atomic<size_t> next = 0;
  const auto work = [&] {
    for (size_t t = next++; t < built.size(); t = next++) built[t] = build_track(model, model.tracks[t], options);
  };
  {
    const size_t threads = std::min<size_t>(built.size(), std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::jthread> helpers;
    for (size_t k = 1; k < threads; ++k) helpers.emplace_back(work);
    work();
  }
  std::vector<TrackLod> out;
  out.reserve(built.size());
  for (std::optional<TrackLod>& lod : built) out.push_back(std::move(*lod));
  return out;
}

}  // namespace stowage::gui
