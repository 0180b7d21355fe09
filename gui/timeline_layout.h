// Where each track of a timeline sits vertically: a row per track, with a
// header row per rank when the trace holds several. GUI-free; the painter
// draws it and the interaction asks it which track is under the mouse.
#pragma once

#include <optional>
#include <vector>

#include "gui/trace_model.h"

namespace stowage::gui {

struct LayoutRow {
  enum class Kind { kRankHeader, kTrack };
  Kind kind = Kind::kTrack;
  int index = 0;  // the rank of a header, the track of a track row
  double top = 0;
  double height = 0;
};

struct LayoutMetrics {
  double ruler_height = 44;  // time labels (24) over the step strip (20): RulerMetrics
  double track_height = 22;
  double track_gap = 2;
  double header_height = 18;
  double label_width = 170;  // the column of track names (and busy shares) left of the plotting area
};

class TimelineLayout {
 public:
  TimelineLayout(const TraceModel& model, const LayoutMetrics& metrics);
  [[nodiscard]] const std::vector<LayoutRow>& rows() const { return rows_; }
  [[nodiscard]] const LayoutMetrics& metrics() const { return metrics_; }
  [[nodiscard]] double height() const { return height_; }
  // The track whose row covers y (widget pixels), if any.
  [[nodiscard]] std::optional<int32_t> track_at(double y) const;
  [[nodiscard]] std::optional<LayoutRow> row_of_track(int32_t track) const;
  [[nodiscard]] int track_row_count() const;

 private:
  LayoutMetrics metrics_;
  std::vector<LayoutRow> rows_;
  double height_ = 0;
};

}  // namespace stowage::gui
