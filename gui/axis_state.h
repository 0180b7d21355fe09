// The time axis the timeline, the measured timeline and the memory view
// share: one TimeAxis behind a signal, so zooming one view zooms all.
#pragma once

#include <QObject>
#include <functional>

#include "gui/time_axis.h"

namespace stowage::gui {

class AxisState : public QObject {
  Q_OBJECT
 public:
  using QObject::QObject;
  [[nodiscard]] const TimeAxis& axis() const { return axis_; }
  // Applies `change` to the axis and tells the views.
  void update(const std::function<void(TimeAxis&)>& change);

 signals:
  void changed();

 private:
  TimeAxis axis_;
};

}  // namespace stowage::gui
