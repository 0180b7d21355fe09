#include "gui/timeline_layout.h"

namespace stowage::gui {

TimelineLayout::TimelineLayout(const TraceModel& model, const LayoutMetrics& metrics) : metrics_(metrics) {
  const bool grouped = model.rank_count() > 1;
  double y = metrics.ruler_height;
  int rank = -1;
  for (size_t t = 0; t < model.tracks.size(); ++t) {
    if (grouped && model.tracks[t].rank != rank) {
      rank = model.tracks[t].rank;
      rows_.push_back(
          {.kind = LayoutRow::Kind::kRankHeader, .index = rank, .top = y, .height = metrics.header_height});
      y += metrics.header_height;
    }
    rows_.push_back({.kind = LayoutRow::Kind::kTrack,
                     .index = static_cast<int>(t),
                     .top = y,
                     .height = metrics.track_height});
    y += metrics.track_height + metrics.track_gap;
  }
  height_ = y;
}

std::optional<int32_t> TimelineLayout::track_at(double y) const {
  for (const LayoutRow& row : rows_) {
    if (row.kind == LayoutRow::Kind::kTrack && y >= row.top && y < row.top + row.height) return row.index;
  }
  return std::nullopt;
}

std::optional<LayoutRow> TimelineLayout::row_of_track(int32_t track) const {
  for (const LayoutRow& row : rows_) {
    if (row.kind == LayoutRow::Kind::kTrack && row.index == track) return row;
  }
  return std::nullopt;
}

int TimelineLayout::track_row_count() const {
  int n = 0;
  for (const LayoutRow& row : rows_) n += row.kind == LayoutRow::Kind::kTrack ? 1 : 0;
  return n;
}

}  // namespace stowage::gui
