// The colour key above the timeline: one swatch per op category, plus the
// highlight colours of a selection and of the critical path, and when
// comparing the strips on measured ops that ran >10 % slower or faster.
#pragma once

#include <QWidget>

namespace stowage::gui {

class LegendBar : public QWidget {
  Q_OBJECT
 public:
  explicit LegendBar(QWidget* parent = nullptr);
  // Adds (or removes) the keys of a comparison's slower / faster strips.
  void set_comparing(bool on);
  [[nodiscard]] QSize sizeHint() const override { return {1200, 22}; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  bool comparing_ = false;
};

}  // namespace stowage::gui
