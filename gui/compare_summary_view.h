// The summary of a comparison: per lane, the ops matched, how long the lane
// was busy as predicted and as measured, the error of that, and the mean
// error per op; and the error of the whole timeline's length.
#pragma once

#include <QTableWidget>

#include "gui/compare_model.h"

namespace stowage::gui {

class CompareSummaryView : public QTableWidget {
  Q_OBJECT
 public:
  explicit CompareSummaryView(QWidget* parent = nullptr);
  void set_comparison(const CompareModel& compare);
  void clear_comparison();
};

}  // namespace stowage::gui
