// SavedStorage lays out what a layer's forward keeps; measured only, it
// counts without allocating (executor/model/saved_storage.h).
#include "executor/model/saved_storage.h"

#include <gtest/gtest.h>

namespace stowage::executor::model {
namespace {

TEST(SavedStorage, OwnStorageHoldsEveryView) {
  SavedStorage s;
  std::span<float> a, b;
  s.lay_out({{&a, 3}, {&b, 5}});
  EXPECT_EQ(s.floats(), 8);
  EXPECT_EQ(a.size(), 3u);
  EXPECT_EQ(b.size(), 5u);
  EXPECT_EQ(a.data() + 3, b.data());
}

// Measured only, the views stay empty (nothing to point into) and the count
// is what a real lay_out places.
TEST(SavedStorage, MeasuredOnlyItCountsAndAllocatesNothing) {
  SavedStorage s;
  s.measure_only();
  std::span<float> a, b;
  s.lay_out({{&a, 3}, {&b, 5}});
  EXPECT_EQ(s.floats(), 8);
  EXPECT_TRUE(a.empty());
  EXPECT_TRUE(b.empty());
  // A layer that would keep 4 TB is sized in no time and no memory.
  s.lay_out({{&a, int64_t{1} << 40}});
  EXPECT_EQ(s.floats(), int64_t{1} << 40);
  EXPECT_TRUE(a.empty());
}

}  // namespace
}  // namespace stowage::executor::model
