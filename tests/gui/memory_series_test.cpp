// Memory per tier in pixel columns: the most held within each column, the
// step held across columns without samples, and the overflow spans.
#include "gui/memory_series.h"

#include <gtest/gtest.h>

namespace stowage::gui {
namespace {

using core::Bytes;

TEST(MemoryColumns, EachColumnHoldsTheMostInItsSpan) {
  TimeAxis a;
  a.set_width(10);
  a.set_bounds(0, 1000);
  a.fit(0, 100);  // 104 ns over 10 px: 10.4 ns per pixel from -2 ns
  const std::vector<MemoryPoint> series = {
      {.time = 0, .bytes = Bytes(100)}, {.time = 31, .bytes = Bytes(500)}, {.time = 33, .bytes = Bytes(200)}};
  const auto columns = memory_columns(series, a, 10, 100);
  ASSERT_EQ(columns.size(), 10u);
  // Column 0 covers [-2, 8): the sample at 0 gives 100.
  EXPECT_EQ(columns[0], Bytes(100));
  EXPECT_EQ(columns[2], Bytes(100));  // [19, 29): held
  // Column 3 covers [29, 40): 500 for 2 ns, then 200; the peak shows.
  EXPECT_EQ(columns[3], Bytes(500));
  EXPECT_EQ(columns[4], Bytes(200));  // held after
}

TEST(MemoryColumns, NothingBeforeTheFirstSampleOrPastTheEnd) {
  TimeAxis a;
  a.set_width(10);
  a.set_bounds(0, 1000);
  a.fit(0, 100);
  const std::vector<MemoryPoint> series = {{.time = 50, .bytes = Bytes(7)}};
  const auto columns = memory_columns(series, a, 10, 70);
  EXPECT_FALSE(columns[0].has_value());
  EXPECT_EQ(columns[5], Bytes(7));       // [50, 60)
  EXPECT_FALSE(columns[9].has_value());  // [91.6, 102): after the end at 70
}

TEST(MemorySeries, PeakAndOverflowSpans) {
  const std::vector<MemoryPoint> series = {{.time = 0, .bytes = Bytes(10)},
                                           {.time = 5, .bytes = Bytes(30)},
                                           {.time = 8, .bytes = Bytes(40)},
                                           {.time = 9, .bytes = Bytes(10)},
                                           {.time = 12, .bytes = Bytes(25)}};
  EXPECT_EQ(peak_of(series), Bytes(40));
  const std::vector<TimeSpan> over = overflows(series, Bytes(20), 15);
  ASSERT_EQ(over.size(), 2u);
  EXPECT_EQ(over[0].begin, 5);  // 30 then 40, until 10 at 9
  EXPECT_EQ(over[0].end, 9);
  EXPECT_EQ(over[1].begin, 12);  // 25 until the end
  EXPECT_EQ(over[1].end, 15);
}

}  // namespace
}  // namespace stowage::gui
