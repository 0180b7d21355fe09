#include "gui/compare_summary_view.h"

#include <QHeaderView>
#include <cmath>

#include "gui/ruler_ticks.h"

namespace stowage::gui {
namespace {

QTableWidgetItem* cell(const QString& text, Qt::Alignment align = Qt::AlignRight | Qt::AlignVCenter) {
  auto* item = new QTableWidgetItem(text);
  item->setTextAlignment(align);
  item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
  return item;
}

QString time_text(SimTime ns) {
  return QString::fromStdString(format_time(ns));
}
// "4 min 2 s\n90 %": the union of the lane's ops and its share of the timeline.
QString busy_text(SimTime ns, double share) {
  return QStringLiteral("%1\n%2 %").arg(time_text(ns)).arg(std::lround(share * 100));
}
QString percent(double ratio) {
  return QStringLiteral("%1%2 %").arg(ratio >= 0 ? "+" : "").arg(ratio * 100, 0, 'f', 1);
}

}  // namespace

CompareSummaryView::CompareSummaryView(QWidget* parent) : QTableWidget(parent) {
  setColumnCount(7);
  setHorizontalHeaderLabels({tr("lane"), tr("predicted\nbusy"), tr("measured\nbusy"), tr("predicted\nper step"),
                             tr("measured\nper step"), tr("per step\nerror"), tr("median\n|op error|")});
  verticalHeader()->hide();
  verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  setEditTriggers(QAbstractItemView::NoEditTriggers);
}

// Per lane: the whole trace's busy time and share (its error in the
// tooltip: the warm-up step is in it), then the busy time per step after
// the first with its error, as `stowage compare` prints them.
void CompareSummaryView::set_comparison(const CompareModel& compare) {
  setRowCount(static_cast<int>(compare.lanes().size()) + 2);
  int r = 0;
  for (const LaneError& lane : compare.lanes()) {
    setItem(r, 0,
            cell(QStringLiteral("%1\n%2 ops")
                     .arg(QString::fromStdString(std::string(core::to_string(lane.lane))))
                     .arg(lane.matched),
                 Qt::AlignLeft | Qt::AlignVCenter));
    setItem(r, 1, cell(busy_text(lane.predicted_busy, lane.predicted_share)));
    QTableWidgetItem* measured = cell(busy_text(lane.measured_busy, lane.measured_share));
    measured->setToolTip(tr("whole trace, warm-up included: %1").arg(percent(lane.busy_error)));
    setItem(r, 2, measured);
    setItem(r, 3, cell(time_text(lane.predicted_steady_busy)));
    setItem(r, 4, cell(time_text(lane.measured_steady_busy)));
    setItem(r, 5, cell(percent(lane.steady_busy_error)));
    setItem(r, 6, cell(percent(lane.median_abs_op_error).remove('+')));
    ++r;
  }
  // The steady-state step: what `stowage compare` calls the step time.
  setItem(r, 0, cell(tr("steady step"), Qt::AlignLeft | Qt::AlignVCenter));
  for (const int c : {1, 2, 6}) setItem(r, c, cell(QString()));
  setItem(r, 3, cell(time_text(compare.predicted_step())));
  setItem(r, 4, cell(time_text(compare.measured_step())));
  setItem(r, 5, cell(percent(compare.step_error())));
  ++r;
  setItem(r, 0,
          cell(compare.unmatched() > 0 ? tr("whole timeline\n%1 unmatched").arg(compare.unmatched())
                                       : tr("whole timeline"),
               Qt::AlignLeft | Qt::AlignVCenter));
  setItem(r, 1, cell(time_text(compare.predicted_makespan())));
  QTableWidgetItem* measured_length = cell(time_text(compare.measured_makespan()));
  measured_length->setToolTip(tr("%1 against the predicted length").arg(percent(compare.makespan_error())));
  setItem(r, 2, measured_length);
  for (const int c : {3, 4, 5, 6}) setItem(r, c, cell(QString()));
  // Tall enough for every lane: the op list under it takes the rest.
  resizeRowsToContents();
  setFixedHeight(horizontalHeader()->sizeHint().height() + verticalHeader()->length() + 2 * frameWidth() + 2);
}

void CompareSummaryView::clear_comparison() {
  setRowCount(0);
}

}  // namespace stowage::gui
