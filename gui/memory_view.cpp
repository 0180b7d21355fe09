#include "gui/memory_view.h"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

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

MemoryPainter MemoryView::memory_painter() const {
  MemoryPainter p(doc_->model, axis_.axis(), LayoutMetrics{}.label_width, capacity(),
                  measured_ ? &measured_->model : nullptr);
  p.set_row_states(states_);
  return p;
}

QSize MemoryView::sizeHint() const {
  if (!doc_ || tier_count() == 0) return {1200, static_cast<int>(MemoryPainter::kDefaultRowHeight)};
  return {1200, static_cast<int>(memory_painter().preferred_height())};
}

void MemoryView::toggle_row(core::Tier tier) {
  RowState& s = states_[static_cast<size_t>(tier)];
  s = s == RowState::kCollapsed ? RowState::kExpanded : RowState::kCollapsed;
  updateGeometry();
  update();
  emit rowsChanged();
}

// A press on a row's label toggles it; anywhere else it starts a pan or a zoom.
void MemoryView::mousePressEvent(QMouseEvent* event) {
  if (doc_ && event->button() == Qt::LeftButton && event->position().x() < LayoutMetrics{}.label_width) {
    for (const MemoryRow& row : memory_painter().rows(width(), height())) {
      if (row.row.contains(event->position())) return toggle_row(row.tier);
    }
  }
  interaction_.press(*event);
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
  return memory_painter().readout(point, width(), height());
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
  memory_painter().paint(painter, width(), height());
  if (const auto band = interaction_.rubber_band()) {
    painter.fillRect(QRectF(band->first, 0, band->second - band->first, height()),
                     QColor(0x30, 0x60, 0xc0, 50));
  }
}

}  // namespace stowage::gui
