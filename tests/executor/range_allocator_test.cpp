// RangeAllocator: the device arena's sub-allocator, with the numbers of
// each case worked out in its comment.
#include "executor/range_allocator.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace stowage::executor {
namespace {

TEST(RangeAllocator, HandsOutAlignedRangesFirstFit) {
  RangeAllocator ranges(4096, 256);
  // 100 B occupies one 256 B unit, 300 B two: offsets 0 and 256.
  const auto a = ranges.allocate(100);
  const auto b = ranges.allocate(300);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->offset, 0);
  EXPECT_EQ(b->offset, 256);
  EXPECT_EQ(b->bytes, 300);
  EXPECT_EQ(ranges.in_use(), 768);
}

TEST(RangeAllocator, FailsNamingBytesUseAndCap) {
  RangeAllocator ranges(1000, 256);  // 768 usable: three whole units
  ASSERT_TRUE(ranges.allocate(512));
  const auto c = ranges.allocate(300);  // needs 512, 256 left
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().bytes, 300);
  EXPECT_EQ(c.error().in_use, 512);
  EXPECT_EQ(c.error().capacity, 1000);
  EXPECT_EQ(c.error().largest_free, 256);
}

TEST(RangeAllocator, ReleaseMergesNeighboursSoTheWholeArenaIsFreeAgain) {
  RangeAllocator ranges(1024, 256);
  const auto a = ranges.allocate(256);
  const auto b = ranges.allocate(256);
  const auto c = ranges.allocate(256);
  ASSERT_TRUE(a && b && c);
  // Free a and c: 512 B free in two runs of 256 and 256 (c merges with the
  // tail 768..1024); a 768 B range does not fit in one piece.
  ranges.release(*a);
  ranges.release(*c);
  EXPECT_EQ(ranges.largest_free(), 512);
  EXPECT_FALSE(ranges.allocate(768));
  // Freeing b joins all three into the whole 1024.
  ranges.release(*b);
  EXPECT_EQ(ranges.in_use(), 0);
  EXPECT_EQ(ranges.largest_free(), 1024);
  const auto all = ranges.allocate(1024);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->offset, 0);
}

TEST(RangeAllocator, EmptyRequestsOccupyNothing) {
  RangeAllocator ranges(0, 256);
  const auto empty = ranges.allocate(0);
  ASSERT_TRUE(empty);
  ranges.release(*empty);
  EXPECT_EQ(ranges.in_use(), 0);
  EXPECT_FALSE(ranges.allocate(1));
}

TEST(RangeAllocator, ReleasingAnUnknownRangeIsABug) {
  RangeAllocator ranges(1024, 256);
  EXPECT_THROW(ranges.release(ArenaRange{.offset = 256, .bytes = 10}), std::logic_error);
  EXPECT_THROW(RangeAllocator(1024, 100), std::invalid_argument);
}

}  // namespace
}  // namespace stowage::executor
