#include "gui/op_error_table.h"

#include <QHeaderView>
#include <cmath>

#include "gui/time_format.h"

namespace stowage::gui {
namespace {

constexpr int kKeyRole = Qt::UserRole;     // the number a column sorts by
constexpr int kOpRole = Qt::UserRole + 1;  // the measured op index, on column 0

// Sorts by kKeyRole when both items have it, else by text.
class SortItem : public QTableWidgetItem {
 public:
  SortItem(const QString& text, double key) : QTableWidgetItem(text) {
    setData(kKeyRole, key);
    setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
  }
  bool operator<(const QTableWidgetItem& other) const override {
    return data(kKeyRole).toDouble() < other.data(kKeyRole).toDouble();
  }
};

QTableWidgetItem* text_item(const QString& text) {
  auto* item = new QTableWidgetItem(text);
  item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
  return item;
}

QString time_text(SimTime ns) {
  return QString::fromStdString(format_time(ns));
}

}  // namespace

OpErrorTable::OpErrorTable(QWidget* parent) : QTableWidget(parent) {
  setColumnCount(5);
  setHorizontalHeaderLabels({tr("op"), tr("predicted"), tr("measured"), tr("error"), tr("error\n%")});
  verticalHeader()->hide();
  // Op names are long ("write states layers.39 s5"): they take the width
  // left and wrap, and rows grow to hold them.
  horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  setWordWrap(true);
  setEditTriggers(QAbstractItemView::NoEditTriggers);
  setSelectionBehavior(QAbstractItemView::SelectRows);
  setSelectionMode(QAbstractItemView::SingleSelection);
  setToolTip(tr("The ops whose measured duration differs most from the prediction; click one to see it"));
  connect(this, &QTableWidget::cellClicked, this, [this](int row, int) { emit jumpTo(measured_op_at(row)); });
}

void OpErrorTable::set_comparison(const CompareModel& compare, const TraceModel& measured) {
  setSortingEnabled(false);
  const std::vector<OpError> errors = compare.largest_errors(kRows);
  setRowCount(static_cast<int>(errors.size()));
  for (int r = 0; r < rowCount(); ++r) {
    const OpError& e = errors[static_cast<size_t>(r)];
    const TraceOp& op = measured.ops[static_cast<size_t>(e.measured_op)];
    QTableWidgetItem* name = text_item(QString::fromUtf8(measured.text(op.name)));
    name->setData(kOpRole, e.measured_op);
    name->setToolTip(QString::fromStdString(std::string(core::to_string(op.lane))));
    setItem(r, 0, name);
    setItem(r, 1, new SortItem(time_text(e.predicted), static_cast<double>(e.predicted)));
    setItem(r, 2, new SortItem(time_text(e.measured), static_cast<double>(e.measured)));
    const SimTime err = e.error();
    setItem(r, 3, new SortItem((err >= 0 ? "+" : "-") + time_text(std::abs(err)), static_cast<double>(err)));
    setItem(r, 4,
            new SortItem(QStringLiteral("%1%2").arg(err >= 0 ? "+" : "").arg(e.relative() * 100, 0, 'f', 1),
                         e.relative()));
  }
  horizontalHeader()->setSortIndicator(-1, Qt::DescendingOrder);  // keep largest |error| first until asked
  setSortingEnabled(true);
}

void OpErrorTable::clear_comparison() {
  setRowCount(0);
}

int32_t OpErrorTable::measured_op_at(int row) const {
  const QTableWidgetItem* name = item(row, 0);
  return name ? name->data(kOpRole).toInt() : -1;
}

}  // namespace stowage::gui
