// Level of detail for drawing: ops narrower than about 3 pixels are merged
// into runs before painting, so a million-op trace draws a few thousand
// boxes (as KDAB/hotspot and tracy do). Built once per model, off the GUI
// thread, as a pyramid of levels with growing merge thresholds; the painter
// picks the coarsest level whose threshold is still under 3 pixels.
// GUI-free. Every op's [start, end] lies inside some box of every level.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "gui/trace_model.h"

namespace stowage::gui {

// A box to draw: one op (count == 1) or a run of `count` consecutive ops of
// a track (positions [first, first + count) of Track::ops) merged.
struct LodBox {
  SimTime start = 0;
  SimTime end = 0;
  int32_t first = 0;  // position in Track::ops
  int32_t count = 1;
  SimTime busy = 0;                            // sum of the merged ops' durations, ns
  SimTime lead = 0;                            // the longest merged op's duration, ns: it gives the category
  OpCategory category = OpCategory::kCompute;  // of the longest merged op
};

struct LodLevel {
  SimTime threshold = 0;      // items narrower than this (ns) were merged; 0: none
  std::vector<LodBox> boxes;  // by start
  SimTime widest = 0;         // the widest box, for finding the first visible one
};

class TrackLod {
 public:
  explicit TrackLod(std::vector<LodLevel> levels) : levels_(std::move(levels)) {}
  // The coarsest level whose threshold is at most `max_threshold` ns.
  [[nodiscard]] const LodLevel& level_for(double max_threshold) const;
  // Boxes of `level` that may overlap [begin, end].
  [[nodiscard]] static std::span<const LodBox> visible(const LodLevel& level, SimTime begin, SimTime end);
  [[nodiscard]] const std::vector<LodLevel>& levels() const { return levels_; }

 private:
  std::vector<LodLevel> levels_;  // level 0 holds every op alone
};

struct LodOptions {
  SimTime first_threshold = 4;  // ns; each further level multiplies it by `growth`
  int growth = 4;
};

// One TrackLod per track of `model`, in track order.
[[nodiscard]] std::vector<TrackLod> build_lod(const TraceModel& model, const LodOptions& options = {});

// Merges `items` (sorted by start) the way one level does: a run of
// consecutive items each narrower than `threshold`, with gaps under it,
// becomes one box. Exposed for tests.
[[nodiscard]] std::vector<LodBox> merge_level(std::span<const LodBox> items, SimTime threshold);
// The same merge over `items` itself, keeping its allocation.
void merge_level_in_place(std::vector<LodBox>& items, SimTime threshold);

}  // namespace stowage::gui
