#include "gui/memory_view.h"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

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
  setMouseTracking(true);
  setMinimumHeight(static_cast<int>(MemoryPainter::kMinRowHeight));
  connect(&axis_, &AxisState::changed, this, qOverload<>(&QWidget::update));
}

void MemoryView::set_document(std::shared_ptr<const TimelineDocument> doc) {
  doc_ = std::move(doc);
  setMinimumHeight(static_cast<int>(MemoryPainter::kMinRowHeight) * std::max(1, tier_count()));
  updateGeometry();
  update();
}

int MemoryView::tier_count() const {
  int n = 0;
  if (doc_) {
    for (const auto& series : doc_->model.memory) n += series.empty() ? 0 : 1;
  }
  return n;
}

QSize MemoryView::sizeHint() const {
  return {1200, static_cast<int>(MemoryPainter::kDefaultRowHeight) * std::max(1, tier_count())};
}

std::array<std::optional<core::Bytes>, 3> MemoryView::capacity() const {
  std::array<std::optional<core::Bytes>, 3> out = doc_ ? doc_->model.capacity : capacity_;
  for (size_t t = 0; t < out.size(); ++t) {
    if (!out[t]) out[t] = capacity_[t];
  }
  return out;
}

QString MemoryView::tooltip_at(QPointF point) const {
  if (!doc_) return {};
  return MemoryPainter(doc_->model, axis_.axis(), LayoutMetrics{}.label_width, capacity(),
                       measured_ ? &measured_->model : nullptr)
      .readout(point, width(), height());
}

bool MemoryView::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    const auto* help = static_cast<QHelpEvent*>(event);
    const QString text = tooltip_at(help->pos());
    if (text.isEmpty()) {
      QToolTip::hideText();
    } else {
      QToolTip::showText(help->globalPos(), text, this);
    }
    return true;
  }
  return QWidget::event(event);
}

void MemoryView::set_measured(std::shared_ptr<const TimelineDocument> measured) {
  measured_ = std::move(measured);
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
  MemoryPainter(doc_->model, axis_.axis(), LayoutMetrics{}.label_width, capacity(),
                measured_ ? &measured_->model : nullptr)
      .paint(painter, width(), height());
  if (const auto band = interaction_.rubber_band()) {
    painter.fillRect(QRectF(band->first, 0, band->second - band->first, height()),
                     QColor(0x30, 0x60, 0xc0, 50));
  }
}

}  // namespace stowage::gui
