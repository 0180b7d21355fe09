// The memory-per-tier widget under the timeline. It shares the timeline's
// AxisState (zooming either zooms both) and its label column width, so the
// two time axes line up pixel for pixel. Wheel and drag work here too;
// hovering a row shows the bytes in use at that time, and clicking a row's
// label collapses it to a thin strip (or expands it again).
#pragma once

#include <QWidget>
#include <array>
#include <memory>
#include <optional>

#include "gui/axis_state.h"
#include "gui/memory_painter.h"
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
  // MemoryPainter::kDefaultRowHeight per expanded row, less for collapsed ones.
  [[nodiscard]] QSize sizeHint() const override;
  void toggle_row(core::Tier tier);
  [[nodiscard]] const RowStates& row_states() const { return states_; }

 signals:
  // A row was collapsed or expanded: the preferred height changed.
  void rowsChanged();

 protected:
  bool event(QEvent* event) override;
  void paintEvent(QPaintEvent* event) override;
  void wheelEvent(QWheelEvent* event) override { interaction_.wheel(*event); }
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override { interaction_.move(*event); }
  void mouseReleaseEvent(QMouseEvent* event) override { interaction_.release(*event); }

 private:
  AxisState& axis_;
  std::shared_ptr<const TimelineDocument> doc_;
  std::shared_ptr<const TimelineDocument> measured_;
  std::array<std::optional<core::Bytes>, 3> capacity_;
  RowStates states_{};
  TimelineInteraction interaction_;
  [[nodiscard]] MemoryPainter memory_painter() const;
  [[nodiscard]] std::array<std::optional<core::Bytes>, 3> capacity() const;
  [[nodiscard]] int tier_count() const;
};

}  // namespace stowage::gui
