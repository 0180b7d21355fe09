// Busy time as the union of op spans: overlapping slots count once, and a
// query over part of the timeline counts the parts of spans inside it.
#include "gui/busy_time.h"

#include <gtest/gtest.h>

#include "gui_test_data.h"

namespace stowage::gui {
namespace {

TEST(BusyTime, OverlappingSpansCountOnce) {
  // [0, 10) and [5, 20) overlap: busy [0, 20), 20 ns; [30, 40) adds 10.
  const BusyTime b({{5, 20}, {0, 10}, {30, 40}, {7, 7}});
  EXPECT_EQ(b.intervals(), 2u);
  EXPECT_EQ(b.total(), 30);
  EXPECT_EQ(b.busy_in(0, 100), 30);
  // [15, 35): 5 ns of the first interval, 5 of the second.
  EXPECT_EQ(b.busy_in(15, 35), 10);
  EXPECT_DOUBLE_EQ(b.share_in(15, 35), 0.5);
  EXPECT_EQ(b.busy_in(20, 30), 0);
  EXPECT_EQ(b.busy_in(35, 35), 0);
  EXPECT_EQ(b.busy_in(-50, 3), 3);
}

TEST(LaneBusy, ALaneIsBusyWhileAnyOfItsSlotsIs) {
  // Two tracks of one lane (nvme.read and nvme.read #2), each busy
  // [0, 100) and [50, 150): the lane is busy [0, 150), 150 ns, not 200.
  TraceModel m;
  m.tracks.push_back({.name = "nvme.read", .lane = core::Lane::kNvmeRead});
  m.tracks.push_back({.name = "nvme.read #2", .lane = core::Lane::kNvmeRead});
  for (int i = 0; i < 2; ++i) {
    m.ops.push_back(
        {.id = i, .track = i, .lane = core::Lane::kNvmeRead, .start = 50 * i, .end = 50 * i + 100});
    m.tracks[static_cast<size_t>(i)].ops.push_back(i);
  }
  m.finish();
  const LaneBusy busy = lane_busy(m);
  ASSERT_NE(busy.of(0, core::Lane::kNvmeRead), nullptr);
  EXPECT_EQ(busy.of(0, core::Lane::kNvmeRead)->total(), 150);
  EXPECT_EQ(busy.by_lane[static_cast<size_t>(core::Lane::kNvmeRead)].total(), 150);
  EXPECT_EQ(busy.by_track[1].total(), 100);
  EXPECT_EQ(busy.of(0, core::Lane::kGpuCompute)->total(), 0);
}

}  // namespace
}  // namespace stowage::gui
