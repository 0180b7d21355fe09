#include "gui/legend_bar.h"

#include <QFontMetricsF>
#include <QPainter>
#include <algorithm>

#include "gui/palette.h"
#include "gui/trace_model.h"

namespace stowage::gui {
namespace {

constexpr double kSwatch = 12, kAfterSwatch = 4, kBetweenKeys = 14, kMargin = 8;

}  // namespace

LegendBar::LegendBar(QWidget* parent) : QWidget(parent) {
  setFixedHeight(kLineHeight);
}

void LegendBar::set_comparing(bool on) {
  comparing_ = on;
  setFixedHeight(heightForWidth(width()));
  update();
}

std::vector<LegendKey> LegendBar::keys() const {
  std::vector<LegendKey> keys;
  for (int c = 0; c < kOpCategoryCount; ++c) {
    const auto category = static_cast<OpCategory>(c);
    keys.push_back(
        {.text = QString::fromStdString(std::string(to_string(category))), .color = color_of(category)});
  }
  keys.push_back({.text = tr("waits on"), .color = waits_on_color(), .style = LegendKey::Style::kOutline});
  keys.push_back(
      {.text = tr("waited on by"), .color = waited_by_color(), .style = LegendKey::Style::kOutline});
  keys.push_back({.text = tr("critical path (the rest dimmed)"),
                  .color = color_of(OpCategory::kCompute),
                  .style = LegendKey::Style::kCritical});
  if (comparing_) {
    keys.push_back({.text = tr("slower >10 %"), .color = slower_color(), .style = LegendKey::Style::kStrip});
    keys.push_back({.text = tr("faster >10 %"), .color = faster_color(), .style = LegendKey::Style::kStrip});
  }
  return keys;
}

std::vector<LegendKey> LegendBar::layout_keys(int width) const {
  const QFontMetricsF metrics(font());
  std::vector<LegendKey> out = keys();
  double x = kMargin, y = 0;
  for (LegendKey& key : out) {
    const double w = kSwatch + kAfterSwatch + metrics.horizontalAdvance(key.text);
    if (x > kMargin && x + w > width - kMargin) x = kMargin, y += kLineHeight;
    key.rect = QRectF(x, y, w, kLineHeight);
    x += w + kBetweenKeys;
  }
  return out;
}

int LegendBar::heightForWidth(int width) const {
  const std::vector<LegendKey> placed = layout_keys(width);
  return placed.empty() ? kLineHeight : static_cast<int>(placed.back().rect.bottom());
}

void LegendBar::resizeEvent(QResizeEvent*) {
  const int h = heightForWidth(width());
  if (h != height()) setFixedHeight(h);
}

void LegendBar::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().window());
  for (const LegendKey& key : layout_keys(width())) {
    const QRectF swatch(key.rect.left(), key.rect.top() + 5, kSwatch, kSwatch);
    switch (key.style) {
      case LegendKey::Style::kFill:
        painter.fillRect(swatch, key.color);
        break;
      case LegendKey::Style::kOutline:
        painter.setPen(QPen(key.color, 2));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(swatch.adjusted(1, 1, -1, -1));
        break;
      case LegendKey::Style::kStrip:
        painter.fillRect(swatch, QColor(0xcc, 0xcc, 0xcc));
        painter.fillRect(QRectF(swatch.left(), swatch.top(), kSwatch, 4), key.color);
        break;
      case LegendKey::Style::kCritical:
        painter.fillRect(swatch, key.color);
        painter.setPen(QPen(critical_color(), 2));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(swatch.adjusted(1, 1, -1, -1));
        break;
    }
    painter.setPen(palette().windowText().color());
    painter.drawText(key.rect.adjusted(kSwatch + kAfterSwatch, 0, 0, 0), Qt::AlignLeft | Qt::AlignVCenter,
                     key.text);
  }
}

}  // namespace stowage::gui
