// Paints the time ruler over the timeline: tick labels on top, and under
// them the step strip, with a mark where each training step begins and the
// steady-state window (gui/step_marks.h) shaded and labelled with its step
// time and the lane that bounds it. Labels that would not fit are moved to
// the left of their tick or left out, never clipped; label_rects() says
// where each one goes, so tests can check that they fit.
#pragma once

#include <QFontMetricsF>
#include <QPainter>
#include <QRectF>
#include <QString>
#include <QStringList>
#include <optional>
#include <vector>

#include "gui/step_marks.h"
#include "gui/time_axis.h"

namespace stowage::gui {

struct RulerMetrics {
  double left = 0;          // widget x of the axis's pixel 0
  double right = 0;         // widget x of the plotting area's right edge
  double time_height = 24;  // the tick labels' band, from the top
  double step_height = 20;  // the step strip under it
  [[nodiscard]] double height() const { return time_height + step_height; }
};

struct RulerLabel {
  QRectF rect;  // where the text is drawn, widget pixels
  QString text;
};

struct RulerLabels {
  std::vector<RulerLabel> ticks;     // time labels
  std::vector<RulerLabel> steps;     // "step 3"
  std::optional<RulerLabel> steady;  // the steady window's, when it fits in the window
};

class RulerPainter {
 public:
  RulerPainter(const TimeAxis& axis, const StepMarks& steps, const RulerMetrics& metrics)
      : axis_(axis), steps_(steps), metrics_(metrics) {}

  // Where each label goes with `font`'s metrics.
  [[nodiscard]] RulerLabels label_rects(const QFontMetricsF& font) const;
  // The ruler over [0, right) x [0, height()).
  void paint(QPainter& painter) const;
  // Step boundaries as dashed lines over the tracks, [top, bottom).
  void paint_step_lines(QPainter& painter, double top, double bottom) const;
  [[nodiscard]] double x_of(SimTime t) const { return metrics_.left + axis_.to_pixel(t); }

 private:
  struct Mark {
    int step = 0;
    double x = 0;  // widget x
  };
  [[nodiscard]] std::vector<Mark> visible_marks() const;
  [[nodiscard]] std::vector<RulerLabel> tick_labels(const QFontMetricsF& font) const;
  [[nodiscard]] std::optional<RulerLabel> steady_label_rect(const QFontMetricsF& font) const;
  [[nodiscard]] std::vector<RulerLabel> step_labels(const QFontMetricsF& font,
                                                    const std::optional<RulerLabel>& steady) const;
  void paint_steady(QPainter& painter) const;

  const TimeAxis& axis_;
  const StepMarks& steps_;
  RulerMetrics metrics_;
};

// The steady window's labels, longest first: "steady state: 36.23 s per
// step, bound by nvme.write (99 % busy)" (or "..., nvme.write falling
// behind (99 % busy)") down to "36.23 s"; the ruler shows the longest that
// fits in the window.
[[nodiscard]] QStringList steady_labels(const SteadyWindow& window);

}  // namespace stowage::gui
