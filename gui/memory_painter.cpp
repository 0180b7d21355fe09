#include "gui/memory_painter.h"

#include <algorithm>

#include "gui/memory_series.h"
#include "gui/palette.h"
#include "gui/ruler_ticks.h"

namespace stowage::gui {
namespace {

constexpr double kHeadroom = 1.08;  // the scale's top, relative to max(peak, capacity)
// A capacity more than this many times the peak would flatten the curve:
// the scale then follows the peak and the label gives the capacity.
constexpr double kCapacityOnScale = 1.6;

QString bytes_text(core::Bytes b) {
  return QString::fromStdString(core::format_bytes(b, core::Prefix::kBinary, 3));
}

}  // namespace

MemoryPainter::MemoryPainter(const TraceModel& model, const TimeAxis& axis, double label_width,
                             const std::array<std::optional<core::Bytes>, 3>& capacity)
    : model_(model), axis_(axis), label_width_(label_width), capacity_(capacity) {
  for (const core::Tier tier : core::kAllTiers) {
    if (!model.memory[static_cast<size_t>(tier)].empty()) tiers_.push_back(tier);
  }
}

void MemoryPainter::paint(QPainter& painter, int width, int height) const {
  painter.fillRect(QRectF(0, 0, width, height), Qt::white);
  if (tiers_.empty()) {
    painter.setPen(Qt::darkGray);
    painter.drawText(QRectF(0, 0, width, height), Qt::AlignCenter,
                     QStringLiteral("no memory samples in this timeline"));
    return;
  }
  const double row_height = static_cast<double>(height) / static_cast<double>(tiers_.size());
  for (size_t i = 0; i < tiers_.size(); ++i) {
    paint_tier(painter, tiers_[i], QRectF(0, static_cast<double>(i) * row_height, width, row_height));
  }
  painter.setPen(QColor(0xbb, 0xbb, 0xbb));
  painter.drawLine(QPointF(label_width_ - 0.5, 0), QPointF(label_width_ - 0.5, height));
}

void MemoryPainter::paint_tier(QPainter& painter, core::Tier tier, const QRectF& row) const {
  const auto& series = model_.memory[static_cast<size_t>(tier)];
  const std::optional<core::Bytes> capacity = capacity_[static_cast<size_t>(tier)];
  const core::Bytes peak = peak_of(series);
  const bool capacity_on_scale = capacity && capacity->as_double() <= kCapacityOnScale * peak.as_double();
  const double top_bytes =
      std::max(1.0, std::max(peak.as_double(), capacity_on_scale ? capacity->as_double() : 0) * kHeadroom);
  const QRectF plot(label_width_, row.top() + 4, row.width() - label_width_, row.height() - 6);
  const auto y_of = [&](core::Bytes b) { return plot.bottom() - plot.height() * b.as_double() / top_bytes; };

  painter.fillRect(QRectF(0, row.top(), row.width(), row.height()), QColor(0xfa, 0xfa, 0xfa));
  painter.setPen(QColor(0xe2, 0xe2, 0xe2));
  for (const Tick& tick : ticks(axis_, 110))
    painter.drawLine(QPointF(label_width_ + tick.pixel, row.top()),
                     QPointF(label_width_ + tick.pixel, row.bottom()));

  const QColor fill = color_of(tier);
  const auto columns = memory_columns(series, axis_, static_cast<int>(plot.width()), model_.end_time());
  for (size_t c = 0; c < columns.size(); ++c) {
    if (!columns[c]) continue;
    const double x = plot.left() + static_cast<double>(c);
    const double y = y_of(*columns[c]);
    painter.fillRect(QRectF(x, y, 1, plot.bottom() - y), fill.lighter(125));
    if (capacity && *columns[c] > *capacity) {
      painter.fillRect(QRectF(x, y, 1, y_of(*capacity) - y), QColor(0xd6, 0x00, 0x00));
    }
  }
  if (capacity && capacity_on_scale) {
    const double y = y_of(*capacity);
    painter.setPen(QPen(QColor(0x99, 0x00, 0x00), 1.2, Qt::DashLine));
    painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
    for (const TimeSpan& s : overflows(series, *capacity, model_.end_time())) {
      const double x0 = label_width_ + axis_.to_pixel(s.begin),
                   x1 = std::max(x0 + 2, label_width_ + axis_.to_pixel(s.end));
      const double left = std::max(x0, plot.left()), right = std::min(x1, plot.right());
      if (right > left) painter.fillRect(QRectF(left, row.top(), right - left, 3), Qt::red);
    }
  }
  painter.setPen(QColor(0x22, 0x22, 0x22));
  QString label = QStringLiteral("%1 memory\npeak %2")
                      .arg(QString::fromStdString(std::string(core::to_string(tier))), bytes_text(peak));
  if (capacity) {
    label += QStringLiteral("\nof %1%2")
                 .arg(bytes_text(*capacity), peak > *capacity    ? QStringLiteral(" OVER")
                                             : capacity_on_scale ? QString()
                                                                 : QStringLiteral("\n(line off scale)"));
  }
  painter.drawText(QRectF(6, row.top() + 2, label_width_ - 10, row.height() - 4),
                   Qt::AlignVCenter | Qt::AlignLeft, label);
  painter.setPen(QColor(0xcc, 0xcc, 0xcc));
  painter.drawLine(QPointF(0, row.bottom() - 0.5), QPointF(row.width(), row.bottom() - 0.5));
}

}  // namespace stowage::gui
