// Paints a timeline: the time ruler, a labelled row per track (rank
// headers when there are several ranks), ops as boxes coloured by category,
// runs of ops narrower than 3 pixels merged, and the highlights of a
// selection and of the critical path. Stateless between calls: everything
// it draws comes from the document, the layout, the axis and the highlight.
#pragma once

#include <QPainter>
#include <QRectF>
#include <optional>

#include "gui/selection.h"
#include "gui/time_axis.h"
#include "gui/timeline_document.h"
#include "gui/timeline_layout.h"

namespace stowage::gui {

struct TimelineHighlight {
  Selection selection;
  bool critical_path = false;
};

// Boxes narrower than this many pixels are merged with their neighbours.
inline constexpr double kMergeBelowPixels = 3.0;

class TimelinePainter {
 public:
  TimelinePainter(const TimelineDocument& doc, const TimelineLayout& layout, const TimeAxis& axis)
      : doc_(doc), layout_(layout), axis_(axis) {}

  // Paints over [0, width) x [0, layout.height()). The axis's pixel 0 is at
  // x = layout.metrics().label_width. Returns the number of boxes drawn.
  int paint(QPainter& painter, int width, const TimelineHighlight& highlight) const;

  // Where op `op` is drawn, at least 3 pixels wide; nullopt if its track has no row.
  [[nodiscard]] std::optional<QRectF> op_rect(int32_t op) const;

 private:
  void paint_ruler(QPainter& painter, int width) const;
  void paint_rows(QPainter& painter, int width) const;
  int paint_track(QPainter& painter, const LayoutRow& row) const;
  void paint_selection(QPainter& painter, const Selection& selection) const;
  void paint_critical_path(QPainter& painter) const;
  [[nodiscard]] double x_of(SimTime t) const { return layout_.metrics().label_width + axis_.to_pixel(t); }

  const TimelineDocument& doc_;
  const TimelineLayout& layout_;
  const TimeAxis& axis_;
};

}  // namespace stowage::gui
