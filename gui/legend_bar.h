// The colour key above the timeline: one swatch per op category, plus the
// highlight colours of a selection and of the critical path, and when
// comparing the strips on measured ops that ran >10 % slower or faster.
// Keys that do not fit on one line wrap onto more, and the bar grows to
// hold them, so no key is cut at any window width.
#pragma once

#include <QColor>
#include <QRectF>
#include <QString>
#include <QWidget>
#include <vector>

namespace stowage::gui {

struct LegendKey {
  enum class Style { kFill, kOutline, kStrip, kCritical };
  QString text;
  QColor color;
  Style style = Style::kFill;
  QRectF rect;  // swatch and text, widget pixels (set by LegendBar::layout_keys)
};

class LegendBar : public QWidget {
  Q_OBJECT
 public:
  static constexpr int kLineHeight = 22;

  explicit LegendBar(QWidget* parent = nullptr);
  // Adds (or removes) the keys of a comparison's slower / faster strips.
  void set_comparing(bool on);
  // The keys placed in lines across `width` pixels.
  [[nodiscard]] std::vector<LegendKey> layout_keys(int width) const;
  [[nodiscard]] QSize sizeHint() const override { return {1200, kLineHeight}; }
  [[nodiscard]] bool hasHeightForWidth() const override { return true; }
  [[nodiscard]] int heightForWidth(int width) const override;

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  [[nodiscard]] std::vector<LegendKey> keys() const;
  bool comparing_ = false;
};

}  // namespace stowage::gui
