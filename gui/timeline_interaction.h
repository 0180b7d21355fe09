// Turns wheel, mouse and keys into changes of the shared time axis and of
// the selection: wheel and W/S or +/- zoom around the cursor, dragging and
// A/D or the arrow keys pan, F or Home fits all, a Shift- or right-button
// drag zooms to the dragged span, Z zooms to the selected op and its
// neighbours, a click selects, C toggles the critical path, Esc clears.
// Knows nothing of painting; the view supplies hit testing through hooks.
#pragma once

#include <QKeyEvent>
#include <QMouseEvent>
#include <QWheelEvent>
#include <functional>
#include <optional>

#include "gui/axis_state.h"

namespace stowage::gui {

struct InteractionHooks {
  std::function<std::optional<int32_t>(QPointF)> op_at;  // the op under a widget point
  std::function<void(std::optional<int32_t>)> select;
  std::function<void()> toggle_critical_path;
  std::function<std::optional<std::pair<SimTime, SimTime>>()> selection_span;  // for Z
  std::function<void()> repaint;
};

// The zoom for one wheel notch (120 units of angleDelta) or one key press.
inline constexpr double kZoomStep = 1.25;
inline constexpr double kPanStepPixels = 80;

class TimelineInteraction {
 public:
  TimelineInteraction(AxisState& axis, double label_width, InteractionHooks hooks)
      : axis_(axis), label_width_(label_width), hooks_(std::move(hooks)) {}

  void wheel(const QWheelEvent& event);
  // Returns whether the key was used.
  bool key(const QKeyEvent& event);
  void press(const QMouseEvent& event);
  void move(const QMouseEvent& event);
  void release(const QMouseEvent& event);
  // The span being dragged for zoom-to-selection, in widget x; for painting.
  [[nodiscard]] std::optional<std::pair<double, double>> rubber_band() const;

 private:
  [[nodiscard]] double axis_x(double widget_x) const { return widget_x - label_width_; }

  AxisState& axis_;
  double label_width_;
  InteractionHooks hooks_;
  enum class Drag { kNone, kPan, kZoomBand };
  Drag drag_ = Drag::kNone;
  QPointF press_at_, last_at_, cursor_;
  bool moved_ = false;
};

}  // namespace stowage::gui
