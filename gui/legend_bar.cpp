#include "gui/legend_bar.h"

#include <QPainter>
#include <utility>
#include <vector>

#include "gui/palette.h"

namespace stowage::gui {

LegendBar::LegendBar(QWidget* parent) : QWidget(parent) {
  setFixedHeight(22);
}

void LegendBar::set_comparing(bool on) {
  comparing_ = on;
  update();
}

void LegendBar::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().window());
  std::vector<std::pair<QString, QColor>> keys;
  for (int c = 0; c < kOpCategoryCount; ++c) {
    const auto category = static_cast<OpCategory>(c);
    keys.emplace_back(QString::fromStdString(std::string(to_string(category))), color_of(category));
  }
  keys.emplace_back(tr("waits on"), waits_on_color());
  keys.emplace_back(tr("waited on by"), waited_by_color());
  keys.emplace_back(tr("critical path"), critical_color());
  const size_t outlines_end = keys.size();
  if (comparing_) {
    keys.emplace_back(tr("slower >10 %"), slower_color());
    keys.emplace_back(tr("faster >10 %"), faster_color());
  }
  double x = 8;
  const QFontMetrics metrics = painter.fontMetrics();
  for (size_t i = 0; i < keys.size(); ++i) {
    const bool outline = i >= static_cast<size_t>(kOpCategoryCount) && i < outlines_end;
    const bool strip = i >= outlines_end;
    const QRectF swatch(x, 5, 12, 12);
    if (strip) {
      painter.fillRect(swatch, QColor(0xcc, 0xcc, 0xcc));
      painter.fillRect(QRectF(x, 5, 12, 4), keys[i].second);
    } else if (outline) {
      painter.setPen(QPen(keys[i].second, 2));
      painter.setBrush(Qt::NoBrush);
      painter.drawRect(swatch);
    } else {
      painter.fillRect(swatch, keys[i].second);
    }
    painter.setPen(palette().windowText().color());
    painter.drawText(QPointF(x + 16, 15), keys[i].first);
    x += 16 + metrics.horizontalAdvance(keys[i].first) + 14;
  }
}

}  // namespace stowage::gui
