// Paints a timeline: the time ruler with its step strip (ruler_painter.h),
// a labelled row per track with its busy share in view (rank headers when
// there are several ranks), ops as boxes coloured by category, runs of ops
// narrower than 3 pixels merged, and the highlights of a selection and of
// the critical path (everything off the path dimmed). Stateless between calls: everything
// it draws comes from the document, the layout, the axis and the highlight.
#pragma once

#include <QPainter>
#include <QRectF>
#include <memory>
#include <optional>
#include <vector>

#include "gui/compare_model.h"
#include "gui/ruler_painter.h"
#include "gui/selection.h"
#include "gui/time_axis.h"
#include "gui/timeline_document.h"
#include "gui/timeline_layout.h"

namespace stowage::gui {

struct TimelineHighlight {
  Selection selection;
  bool critical_path = false;
  // By op index: measured ops more than 10 % off their prediction get a
  // strip (compare_model.h); null outside the measured side of a comparison.
  std::shared_ptr<const std::vector<DurationChange>> changes;
};

// Boxes narrower than this many pixels are merged with their neighbours.
inline constexpr double kMergeBelowPixels = 3.0;

// A box as the painter draws it at the current zoom: one op (count 1) or a
// run of `count` consecutive ops of a track merged.
struct DrawnBox {
  double x0 = 0, x1 = 0;  // widget x
  int count = 0;
  int32_t first = 0;           // position in Track::ops of the first op
  SimTime start = 0, end = 0;  // ns: from the first op's start to the last end
  SimTime busy = 0;            // ns: the merged ops' durations summed
  SimTime lead = 0;            // the longest merged op's duration, ns: it gives the category
  OpCategory category = OpCategory::kCompute;
  [[nodiscard]] bool narrow() const { return x1 - x0 < kMergeBelowPixels; }
};

class TimelinePainter {
 public:
  TimelinePainter(const TimelineDocument& doc, const TimelineLayout& layout, const TimeAxis& axis)
      : doc_(doc), layout_(layout), axis_(axis) {}

  // Paints over [0, width) x [0, layout.height()). The axis's pixel 0 is at
  // x = layout.metrics().label_width. Returns the number of boxes drawn.
  int paint(QPainter& painter, int width, const TimelineHighlight& highlight) const;

  // Where op `op` is drawn, at least 3 pixels wide; nullopt if its track has no row.
  [[nodiscard]] std::optional<QRectF> op_rect(int32_t op) const;

  // The boxes of track `track` in view, merged exactly as paint() draws them.
  [[nodiscard]] std::vector<DrawnBox> track_boxes(int32_t track) const;
  // The box drawn under widget x on track `track`, within `slack` pixels.
  [[nodiscard]] std::optional<DrawnBox> box_at(int32_t track, double x, double slack = 1.0) const;

  // The share of the visible span (clipped to the data) that track `track`'s
  // lane was busy, 0..1, as its header shows it: the whole lane (its slots'
  // union) on the lane's first track, the slot alone on the others.
  [[nodiscard]] double busy_share(int32_t track) const;
  // The text of a track's header: "nvme.read" and "99 %".
  [[nodiscard]] QString busy_text(int32_t track) const;
  [[nodiscard]] RulerPainter ruler(int width) const;

 private:
  void paint_rows(QPainter& painter, int width) const;
  void paint_track_label(QPainter& painter, const LayoutRow& row) const;
  int paint_track(QPainter& painter, const LayoutRow& row, const TimelineHighlight& highlight) const;
  void paint_name(QPainter& painter, const QRectF& box, int32_t op, const QColor& fill) const;
  [[nodiscard]] bool first_of_lane(int32_t track) const;
  void paint_change(QPainter& painter, const QRectF& box, DurationChange change) const;
  void paint_selection(QPainter& painter, const Selection& selection) const;
  void paint_critical_path(QPainter& painter) const;
  [[nodiscard]] double x_of(SimTime t) const { return layout_.metrics().label_width + axis_.to_pixel(t); }

  const TimelineDocument& doc_;
  const TimelineLayout& layout_;
  const TimeAxis& axis_;
};

}  // namespace stowage::gui
