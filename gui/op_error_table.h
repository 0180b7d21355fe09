// The ops of a comparison with the largest absolute error (measured minus
// predicted duration), a row each: name (its lane in the tooltip), both
// durations, the error and its share. Sortable by any column (numbers sort as numbers); a click
// on a row asks to jump to that op in the measured timeline.
#pragma once

#include <QTableWidget>

#include "gui/compare_model.h"
#include "gui/trace_model.h"

namespace stowage::gui {

class OpErrorTable : public QTableWidget {
  Q_OBJECT
 public:
  static constexpr size_t kRows = 50;

  explicit OpErrorTable(QWidget* parent = nullptr);
  // `measured` names the ops; the comparison's models must be the ones it was built from.
  void set_comparison(const CompareModel& compare, const TraceModel& measured);
  void clear_comparison();
  // The measured op index row `row` shows, as sorted now.
  [[nodiscard]] int32_t measured_op_at(int row) const;

 signals:
  void jumpTo(int32_t measured_op);
};

}  // namespace stowage::gui
