// The colour key above the timeline: one swatch per op category, plus the
// highlight colours of a selection and of the critical path.
#pragma once

#include <QWidget>

namespace stowage::gui {

class LegendBar : public QWidget {
  Q_OBJECT
 public:
  explicit LegendBar(QWidget* parent = nullptr);
  [[nodiscard]] QSize sizeHint() const override { return {1200, 22}; }

 protected:
  void paintEvent(QPaintEvent* event) override;
};

}  // namespace stowage::gui
