// The memory-per-tier widget under the timeline. It shares the timeline's
// AxisState (zooming either zooms both) and its label column width, so the
// two time axes line up pixel for pixel. Wheel and drag work here too;
// hovering a row shows the bytes in use at that time.
#pragma once

#include <QWidget>
#include <array>
#include <memory>
#include <optional>

#include "gui/axis_state.h"
#include "gui/timeline_document.h"
#include "gui/timeline_interaction.h"

namespace stowage::gui {

class MemoryView : public QWidget {
  Q_OBJECT
 public:
  explicit MemoryView(AxisState& axis, QWidget* parent = nullptr);
  void set_document(std::shared_ptr<const TimelineDocument> doc);
  // Capacities (per rank, by tier) known from elsewhere, such as the plan's
  // machine; they fill in what the timeline itself does not record.
  void set_capacity(const std::array<std::optional<core::Bytes>, 3>& capacity);
  // The measured side of a comparison, drawn over the document's memory; null clears it.
  void set_measured(std::shared_ptr<const TimelineDocument> measured);
  // What hovering `point` shows (MemoryPainter::readout); empty over nothing.
  [[nodiscard]] QString tooltip_at(QPointF point) const;
  // MemoryPainter::kDefaultRowHeight per tier.
  [[nodiscard]] QSize sizeHint() const override;

 protected:
  bool event(QEvent* event) override;
  void paintEvent(QPaintEvent* event) override;
  void wheelEvent(QWheelEvent* event) override { interaction_.wheel(*event); }
  void mousePressEvent(QMouseEvent* event) override { interaction_.press(*event); }
  void mouseMoveEvent(QMouseEvent* event) override { interaction_.move(*event); }
  void mouseReleaseEvent(QMouseEvent* event) override { interaction_.release(*event); }

 private:
  AxisState& axis_;
  std::shared_ptr<const TimelineDocument> doc_;
  std::shared_ptr<const TimelineDocument> measured_;
  std::array<std::optional<core::Bytes>, 3> capacity_;
  TimelineInteraction interaction_;
  [[nodiscard]] std::array<std::optional<core::Bytes>, 3> capacity() const;
  [[nodiscard]] int tier_count() const;
};

}  // namespace stowage::gui
