#include "gui/ruler_painter.h"

#include <algorithm>
#include <cmath>

#include "gui/palette.h"
#include "gui/ruler_ticks.h"

namespace stowage::gui {
namespace {

constexpr double kTickSpacing = 110;  // pixels between ruler labels, at least
constexpr double kLabelGap = 3;       // between a tick and its label
constexpr double kMinGap = 6;         // between two labels
constexpr double kMarkSpacing = 4;    // step marks closer than this are drawn as one

QString text_of(SimTime ns) {
  return QString::fromStdString(format_time(ns));
}

}  // namespace

QStringList steady_labels(const SteadyWindow& w) {
  const QString lane = QString::fromStdString(std::string(core::to_string(w.bound)));
  const QString step = text_of(w.step_time);
  const long busy = std::lround(w.bound_share * 100);
  QStringList labels = {QStringLiteral("steady state: %1 per step, bound by %2 (%3 % busy)").arg(step, lane).arg(busy),
                        QStringLiteral("steady %1/step, bound by %2").arg(step, lane),
                        QStringLiteral("steady %1/step").arg(step), step};
  // A measured trace's step time is the median of the window's steps, as
  // `stowage run` prints it; the label says so where it has room.
  // A predicted step set by a lane falling behind says so down to the
  // short forms.
  if (w.falls_behind) {
    labels = {QStringLiteral("steady state: %1 per step, %2 falling behind (%3 % busy)").arg(step, lane).arg(busy),
              QStringLiteral("steady %1/step, %2 falling behind").arg(step, lane),
              QStringLiteral("steady %1/step").arg(step), step};
  }
  if (w.median) {
    labels.prepend(QStringLiteral("steady state: %1 per step (median of %2 steps), bound by %3 (%4 % busy)")
                       .arg(step)
                       .arg(w.steps)
                       .arg(lane)
                       .arg(busy));
  }
  return labels;
}

// Right of its tick; left of it where the right edge is near; left out where
// it would run into the label before it.
std::vector<RulerLabel> RulerPainter::tick_labels(const QFontMetricsF& font) const {
  std::vector<RulerLabel> out;
  const double h = metrics_.time_height;
  for (const Tick& tick : ticks(axis_, kTickSpacing)) {
    const double x = metrics_.left + tick.pixel;
    if (x < metrics_.left || x > metrics_.right) continue;
    const QString text = QString::fromStdString(tick.label);
    const double w = font.horizontalAdvance(text);
    QRectF r(x + kLabelGap, 2, w, h - 10);
    if (r.right() > metrics_.right) r.moveRight(x - kLabelGap);
    if (r.left() < metrics_.left) continue;
    if (!out.empty() && r.left() < out.back().rect.right() + kMinGap) continue;
    out.push_back({r, text});
  }
  return out;
}

std::optional<RulerLabel> RulerPainter::steady_label_rect(const QFontMetricsF& font) const {
  const auto& w = steps_.steady;
  if (!w || steps_.steps.size() < 2) return std::nullopt;
  const double x0 = std::max(metrics_.left, x_of(w->begin)), x1 = std::min(metrics_.right, x_of(w->end));
  for (const QString& text : steady_labels(*w)) {
    const double tw = font.horizontalAdvance(text);
    if (x1 - x0 < tw + 2 * kLabelGap) continue;
    return RulerLabel{QRectF((x0 + x1 - tw) / 2, metrics_.time_height, tw, metrics_.step_height), text};
  }
  return std::nullopt;
}

// The steps whose marks are in view, at most one per kMarkSpacing pixels:
// a trace of many thousand short steps costs what its pixels do.
std::vector<RulerPainter::Mark> RulerPainter::visible_marks() const {
  std::vector<Mark> out;
  if (steps_.steps.size() < 2) return out;
  auto it = std::ranges::lower_bound(steps_.steps, axis_.visible_begin(), {}, &StepMarks::Step::start);
  for (; it != steps_.steps.end() && it->start <= axis_.visible_end(); ++it) {
    const double x = x_of(it->start);
    if (!out.empty() && x - out.back().x < kMarkSpacing) continue;
    out.push_back({.step = it->step, .x = x});
  }
  return out;
}

// Right of each step's mark, where it fits before the next mark and clear
// of the steady window's label.
std::vector<RulerLabel> RulerPainter::step_labels(const QFontMetricsF& font,
                                                  const std::optional<RulerLabel>& steady) const {
  std::vector<RulerLabel> out;
  const std::vector<Mark> marks = visible_marks();
  double taken_until = metrics_.left;  // labels must start right of this
  const double min_width = font.horizontalAdvance(QStringLiteral("0")) + 2 * kLabelGap;
  for (size_t i = 0; i < marks.size(); ++i) {
    const double x = marks[i].x;
    const double limit = i + 1 < marks.size() ? std::min(metrics_.right, marks[i + 1].x) : metrics_.right;
    if (limit - x < min_width) continue;  // no room even for a number
    // "step 3", or "3" where steps are close together.
    QString text = QStringLiteral("step %1").arg(marks[i].step);
    if (x + 2 * kLabelGap + font.horizontalAdvance(text) > limit) text = QString::number(marks[i].step);
    const QRectF r(x + kLabelGap, metrics_.time_height, font.horizontalAdvance(text), metrics_.step_height);
    if (x < metrics_.left || r.left() < taken_until || r.right() > limit - kLabelGap) continue;
    if (steady && r.adjusted(-kMinGap, 0, kMinGap, 0).intersects(steady->rect)) continue;
    out.push_back({r, text});
    taken_until = r.right() + kMinGap;
  }
  return out;
}

RulerLabels RulerPainter::label_rects(const QFontMetricsF& font) const {
  std::optional<RulerLabel> steady = steady_label_rect(font);
  std::vector<RulerLabel> steps = step_labels(font, steady);
  return {.ticks = tick_labels(font), .steps = std::move(steps), .steady = std::move(steady)};
}

void RulerPainter::paint_steady(QPainter& painter) const {
  const auto& w = steps_.steady;
  if (!w) return;
  const double x0 = std::max(metrics_.left, x_of(w->begin)), x1 = std::min(metrics_.right, x_of(w->end));
  if (x1 > x0)
    painter.fillRect(QRectF(x0, metrics_.time_height, x1 - x0, metrics_.step_height), steady_color());
}

void RulerPainter::paint(QPainter& painter) const {
  const double h = metrics_.height(), left = metrics_.left, right = metrics_.right;
  painter.fillRect(QRectF(left, 0, right - left, h), QColor(0xee, 0xee, 0xee));
  painter.fillRect(QRectF(left, metrics_.time_height, right - left, metrics_.step_height),
                   QColor(0xf6, 0xf6, 0xf6));
  painter.save();
  painter.setClipRect(QRectF(left, 0, right - left, h));
  paint_steady(painter);
  painter.setPen(QColor(0x66, 0x66, 0x66));
  for (const Tick& tick : ticks(axis_, kTickSpacing)) {
    const double x = left + tick.pixel;
    painter.drawLine(QPointF(x, metrics_.time_height - 8), QPointF(x, metrics_.time_height));
  }
  const RulerLabels labels = label_rects(QFontMetricsF(painter.font()));
  for (const RulerLabel& l : labels.ticks) painter.drawText(l.rect, Qt::AlignLeft | Qt::AlignVCenter, l.text);
  painter.setPen(QPen(step_color(), 2));
  for (const Mark& m : visible_marks()) {
    const double x = std::round(m.x) + 0.5;
    painter.drawLine(QPointF(x, metrics_.time_height), QPointF(x, h));
  }
  painter.setPen(step_color());
  if (labels.steady) {
    painter.fillRect(labels.steady->rect.adjusted(-kLabelGap, 1, kLabelGap, -1), steady_color());
    painter.drawText(labels.steady->rect, Qt::AlignLeft | Qt::AlignVCenter, labels.steady->text);
  }
  for (const RulerLabel& l : labels.steps) painter.drawText(l.rect, Qt::AlignLeft | Qt::AlignVCenter, l.text);
  painter.restore();
  painter.setPen(QColor(0x88, 0x88, 0x88));
  painter.drawLine(QPointF(left, metrics_.time_height - 0.5), QPointF(right, metrics_.time_height - 0.5));
  painter.drawLine(QPointF(0, h - 0.5), QPointF(right, h - 0.5));
}

void RulerPainter::paint_step_lines(QPainter& painter, double top, double bottom) const {
  if (steps_.steps.size() < 2) return;
  painter.save();
  painter.setClipRect(QRectF(metrics_.left, top, metrics_.right - metrics_.left, bottom - top));
  painter.setPen(QPen(step_color(), 1, Qt::DashLine));
  for (const Mark& m : visible_marks()) {
    const double x = std::round(m.x) + 0.5;
    painter.drawLine(QPointF(x, top), QPointF(x, bottom));
  }
  painter.restore();
}

}  // namespace stowage::gui
