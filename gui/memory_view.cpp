#include "gui/memory_view.h"

#include <QPainter>

#include "gui/memory_painter.h"
#include "gui/timeline_layout.h"

namespace stowage::gui {

MemoryView::MemoryView(AxisState& axis, QWidget* parent)
    : QWidget(parent),
      axis_(axis),
      interaction_(axis, LayoutMetrics{}.label_width,
                   {.op_at = [](QPointF) { return std::optional<int32_t>(); },
                    .select = [](std::optional<int32_t>) {},
                    .toggle_critical_path = [] {},
                    .selection_span = [] { return std::optional<std::pair<SimTime, SimTime>>(); },
                    .repaint = [this] { update(); }}) {
  setMinimumHeight(150);
  connect(&axis_, &AxisState::changed, this, qOverload<>(&QWidget::update));
}

void MemoryView::set_document(std::shared_ptr<const TimelineDocument> doc) {
  doc_ = std::move(doc);
  update();
}

void MemoryView::set_capacity(const std::array<std::optional<core::Bytes>, 3>& capacity) {
  capacity_ = capacity;
  update();
}

void MemoryView::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  if (!doc_) {
    painter.fillRect(rect(), Qt::white);
    return;
  }
  std::array<std::optional<core::Bytes>, 3> capacity = doc_->model.capacity;
  for (size_t t = 0; t < capacity.size(); ++t) {
    if (!capacity[t]) capacity[t] = capacity_[t];
  }
  MemoryPainter(doc_->model, axis_.axis(), LayoutMetrics{}.label_width, capacity)
      .paint(painter, width(), height());
  if (const auto band = interaction_.rubber_band()) {
    painter.fillRect(QRectF(band->first, 0, band->second - band->first, height()),
                     QColor(0x30, 0x60, 0xc0, 50));
  }
}

}  // namespace stowage::gui
