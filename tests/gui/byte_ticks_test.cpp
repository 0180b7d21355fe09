// The memory rows' y-axis: ticks at 1, 2 or 5 times a power of ten bytes,
// labelled in decimal units as the CLI prints sizes.
#include "gui/byte_ticks.h"

#include <gtest/gtest.h>

namespace stowage::gui {
namespace {

using core::Bytes;

TEST(ByteScale, GpuMemoryOfAboutTwentyFiveGigabytes) {
  // 25.2 GB with at most 5 ticks: a 5 GB step gives 0..25 (6 ticks), too
  // many; 10 GB gives 0, 10, 20.
  const ByteScale s = byte_scale(Bytes(25'200'000'000), 5);
  EXPECT_EQ(s.top, Bytes(25'200'000'000));
  EXPECT_EQ(s.step, Bytes(10'000'000'000));
  ASSERT_EQ(s.ticks.size(), 3u);
  EXPECT_EQ(s.ticks[0].label, "0 GB");
  EXPECT_EQ(s.ticks[1].label, "10 GB");
  EXPECT_EQ(s.ticks[2].label, "20 GB");
}

TEST(ByteScale, TwoTicksStillShowOneAboveZero) {
  // 137 GB and room for two ticks: a 200 GB step would leave only 0, so the
  // step is the largest under the top, 100 GB.
  const ByteScale s = byte_scale(Bytes(137'000'000'000), 2);
  ASSERT_EQ(s.ticks.size(), 2u);
  EXPECT_EQ(s.ticks[1].label, "100 GB");
}

TEST(ByteScale, SmallStepsGetDecimals) {
  // 1.8 GB over up to 5 ticks: 0.5 GB steps, 0, 0.5, 1, 1.5 GB.
  const ByteScale s = byte_scale(Bytes(1'800'000'000), 5);
  EXPECT_EQ(s.step, Bytes(500'000'000));
  ASSERT_EQ(s.ticks.size(), 4u);
  EXPECT_EQ(s.ticks[1].label, "0.5 GB");
  EXPECT_EQ(s.ticks[3].label, "1.5 GB");
}

TEST(ByteLabel, UnitFollowsTheScaleNotTheValue) {
  EXPECT_EQ(byte_label(Bytes(1'500'000'000), Bytes(500'000'000), Bytes(2'000'000'000)), "1.5 GB");
  EXPECT_EQ(byte_label(Bytes(0), Bytes(500'000'000'000), Bytes(2'000'000'000'000)), "0.0 TB");
  EXPECT_EQ(byte_label(Bytes(250'000), Bytes(250'000), Bytes(900'000)), "250 kB");
}

}  // namespace
}  // namespace stowage::gui
