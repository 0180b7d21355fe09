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
  setColumnCount(6);
  setHorizontalHeaderLabels({tr("lane"), tr("ops"), tr("predicted\nbusy"), tr("measured\nbusy"),
                             tr("busy\nerror"), tr("median\n|op error|")});
  verticalHeader()->hide();
  verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  setEditTriggers(QAbstractItemView::NoEditTriggers);
}

void CompareSummaryView::set_comparison(const CompareModel& compare) {
  setRowCount(static_cast<int>(compare.lanes().size()) + 1);
  int r = 0;
  for (const LaneError& lane : compare.lanes()) {
    setItem(r, 0,
            cell(QString::fromStdString(std::string(core::to_string(lane.lane))),
                 Qt::AlignLeft | Qt::AlignVCenter));
    setItem(r, 1, cell(QString::number(lane.matched)));
    setItem(r, 2, cell(busy_text(lane.predicted_busy, lane.predicted_share)));
    setItem(r, 3, cell(busy_text(lane.measured_busy, lane.measured_share)));
    setItem(r, 4, cell(percent(lane.busy_error)));
    setItem(r, 5, cell(percent(lane.median_abs_op_error).remove('+')));
    ++r;
  }
  const double end_error = compare.predicted_end() > 0
                               ? static_cast<double>(compare.measured_end() - compare.predicted_end()) /
                                     static_cast<double>(compare.predicted_end())
                               : 0;
  setItem(r, 0, cell(tr("whole timeline"), Qt::AlignLeft | Qt::AlignVCenter));
  setItem(r, 1, cell(compare.unmatched() > 0 ? tr("%1 unmatched").arg(compare.unmatched()) : QString()));
  setItem(r, 2, cell(time_text(compare.predicted_end())));
  setItem(r, 3, cell(time_text(compare.measured_end())));
  setItem(r, 4, cell(percent(end_error)));
  setItem(r, 5, cell(QString()));
  // Tall enough for every lane: the op list under it takes the rest.
  resizeRowsToContents();
  setFixedHeight(horizontalHeader()->sizeHint().height() + verticalHeader()->length() + 2 * frameWidth() + 2);
}

void CompareSummaryView::clear_comparison() {
  setRowCount(0);
}

}  // namespace stowage::gui
