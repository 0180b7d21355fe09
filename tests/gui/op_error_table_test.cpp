// The compare panel's list of the ops with the largest error: largest
// absolute error first, sortable by number, and a click jumps to the op.
#include "gui/op_error_table.h"

#include <gtest/gtest.h>

#include <QSignalSpy>
#include <QTest>

#include "gui_test_data.h"

namespace stowage::gui {
namespace {

// 10 ops of 1000 ns on one track; measured: op 3 +500 ns, op 7 -800 ns,
// op 5 +100 ns, the rest as predicted.
struct Pair {
  TraceModel predicted = testing::synthetic_model(10, 1, 1000, 0);
  TraceModel measured = predicted;
  Pair() {
    measured.ops[3].end += 500;
    measured.ops[7].end -= 800;
    measured.ops[5].end += 100;
  }
};

TEST(CompareModel, LargestErrorsComeFirst) {
  const Pair p;
  const CompareModel c(p.predicted, p.measured);
  const std::vector<OpError> top = c.largest_errors(3);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].measured_op, 7);
  EXPECT_EQ(top[0].error(), -800);
  EXPECT_DOUBLE_EQ(top[0].relative(), -0.8);
  EXPECT_EQ(top[1].measured_op, 3);
  EXPECT_EQ(top[2].measured_op, 5);
  EXPECT_EQ(c.largest_errors(100).size(), 10u);
}

TEST(OpErrorTable, SortsByNumberAndAClickJumpsToTheOp) {
  const Pair p;
  const CompareModel c(p.predicted, p.measured);
  OpErrorTable table;
  table.resize(600, 400);
  table.set_comparison(c, p.measured);
  table.show();
  ASSERT_EQ(table.rowCount(), 10);
  EXPECT_EQ(table.measured_op_at(0), 7);  // largest |error| first
  EXPECT_EQ(table.item(0, 3)->text(), "-800 ns");
  ASSERT_NE(table.item(0, 4), nullptr);
  EXPECT_EQ(table.item(0, 4)->text(), "-80.0");
  // Sorted by error, ascending: -800 ns first; descending: +500 ns first
  // (as numbers: "+500 ns" is not below "+100 ns" as text would have it).
  table.sortItems(3, Qt::DescendingOrder);
  EXPECT_EQ(table.measured_op_at(0), 3);
  EXPECT_EQ(table.measured_op_at(1), 5);
  table.sortItems(3, Qt::AscendingOrder);
  EXPECT_EQ(table.measured_op_at(0), 7);

  QSignalSpy jumps(&table, &OpErrorTable::jumpTo);
  const QRect cell = table.visualItemRect(table.item(0, 0));
  QTest::mouseClick(table.viewport(), Qt::LeftButton, {}, cell.center());
  ASSERT_EQ(jumps.count(), 1);
  EXPECT_EQ(jumps.front().front().toInt(), 7);
}

}  // namespace
}  // namespace stowage::gui
