#include "gui/timeline_interaction.h"

#include <cmath>

namespace stowage::gui {
namespace {
constexpr double kClickSlop = 3;  // pixels a click may move and still be a click
}

void TimelineInteraction::wheel(const QWheelEvent& event) {
  const double notches = event.angleDelta().y() / 120.0;
  if (notches == 0) return;
  const double x = axis_x(event.position().x());
  axis_.update([&](TimeAxis& a) { a.zoom_around(x, std::pow(kZoomStep, notches)); });
}

bool TimelineInteraction::key(const QKeyEvent& event) {
  const double x = axis_x(cursor_.x() > label_width_ ? cursor_.x() : label_width_ + axis_.axis().width() / 2);
  switch (event.key()) {
    case Qt::Key_W:
    case Qt::Key_Plus:
    case Qt::Key_Equal:
      axis_.update([&](TimeAxis& a) { a.zoom_around(x, kZoomStep); });
      return true;
    case Qt::Key_S:
    case Qt::Key_Minus:
      axis_.update([&](TimeAxis& a) { a.zoom_around(x, 1 / kZoomStep); });
      return true;
    case Qt::Key_A:
    case Qt::Key_Left:
      axis_.update([](TimeAxis& a) { a.pan(kPanStepPixels); });
      return true;
    case Qt::Key_D:
    case Qt::Key_Right:
      axis_.update([](TimeAxis& a) { a.pan(-kPanStepPixels); });
      return true;
    case Qt::Key_F:
    case Qt::Key_Home:
      axis_.update([](TimeAxis& a) { a.fit_all(); });
      return true;
    case Qt::Key_Z:
      if (const auto span = hooks_.selection_span())
        axis_.update([&](TimeAxis& a) { a.fit(span->first, span->second); });
      return true;
    case Qt::Key_C:
      hooks_.toggle_critical_path();
      return true;
    case Qt::Key_Escape:
      hooks_.select(std::nullopt);
      return true;
    default:
      return false;
  }
}

void TimelineInteraction::press(const QMouseEvent& event) {
  press_at_ = last_at_ = cursor_ = event.position();
  moved_ = false;
  const bool band = event.button() == Qt::RightButton ||
                    (event.button() == Qt::LeftButton && (event.modifiers() & Qt::ShiftModifier));
  drag_ = band ? Drag::kZoomBand : (event.button() == Qt::LeftButton ? Drag::kPan : Drag::kNone);
}

void TimelineInteraction::move(const QMouseEvent& event) {
  cursor_ = event.position();
  if (drag_ == Drag::kNone) return;
  if (std::abs(cursor_.x() - press_at_.x()) + std::abs(cursor_.y() - press_at_.y()) > kClickSlop)
    moved_ = true;
  if (drag_ == Drag::kPan && moved_) {
    const double dx = cursor_.x() - last_at_.x();
    axis_.update([&](TimeAxis& a) { a.pan(dx); });
  }
  if (drag_ == Drag::kZoomBand) hooks_.repaint();
  last_at_ = cursor_;
}

void TimelineInteraction::release(const QMouseEvent& event) {
  cursor_ = event.position();
  const Drag was = drag_;
  drag_ = Drag::kNone;
  if (!moved_ && event.button() == Qt::LeftButton) return hooks_.select(hooks_.op_at(cursor_));
  if (was == Drag::kZoomBand && moved_) {
    const TimeAxis& a = axis_.axis();
    const SimTime t0 = a.to_time(axis_x(std::min(press_at_.x(), cursor_.x())));
    const SimTime t1 = a.to_time(axis_x(std::max(press_at_.x(), cursor_.x())));
    axis_.update([&](TimeAxis& axis) { axis.fit(t0, std::max(t1, t0 + 1)); });
  }
  hooks_.repaint();
}

std::optional<std::pair<double, double>> TimelineInteraction::rubber_band() const {
  if (drag_ != Drag::kZoomBand || !moved_) return std::nullopt;
  return std::pair(std::min(press_at_.x(), cursor_.x()), std::max(press_at_.x(), cursor_.x()));
}

}  // namespace stowage::gui
