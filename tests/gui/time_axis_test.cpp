// The time-to-pixel mapping and the zoom maths, with numbers worked by hand.
#include "gui/time_axis.h"

#include <gtest/gtest.h>

#include "gui/ruler_ticks.h"

namespace stowage::gui {
namespace {

// 1000 pixels over [0, 1 ms] with the 2 % margin each side: 1.04 ms across,
// so 1040 ns per pixel and pixel 0 at -20 µs.
TimeAxis fitted() {
  TimeAxis a;
  a.set_width(1000);
  a.set_bounds(0, 1'000'000);
  a.fit_all();
  return a;
}

TEST(TimeAxis, FitShowsTheBoundsWithAMargin) {
  const TimeAxis a = fitted();
  EXPECT_DOUBLE_EQ(a.ns_per_pixel(), 1040);
  EXPECT_DOUBLE_EQ(a.to_pixel(-20'000), 0);
  EXPECT_DOUBLE_EQ(a.to_pixel(0), 20000.0 / 1040);            // 19.23 px
  EXPECT_DOUBLE_EQ(a.to_pixel(1'000'000), 1020000.0 / 1040);  // 980.77 px
  EXPECT_EQ(a.to_time(0), -20'000);
  EXPECT_EQ(a.to_time(500), 500'000);  // -20 µs + 500 x 1.04 µs
}

TEST(TimeAxis, PixelToTimeAndBackIsTheIdentity) {
  const TimeAxis a = fitted();
  for (const SimTime t : {SimTime{0}, SimTime{1040}, SimTime{520'000}, SimTime{999'999}}) {
    EXPECT_NEAR(static_cast<double>(a.to_time(a.to_pixel(t))), static_cast<double>(t), 0.5);
  }
}

TEST(TimeAxis, ZoomKeepsTheTimeUnderTheCursor) {
  TimeAxis a = fitted();
  const SimTime under = a.to_time(250);  // 240 µs
  a.zoom_around(250, 4);
  EXPECT_DOUBLE_EQ(a.ns_per_pixel(), 260);  // 1040 / 4
  EXPECT_EQ(a.to_time(250), under);
  a.zoom_around(250, 0.25);
  EXPECT_DOUBLE_EQ(a.ns_per_pixel(), 1040);
  EXPECT_EQ(a.to_time(250), under);
}

TEST(TimeAxis, ZoomIsClampedBothWays) {
  TimeAxis a = fitted();
  a.zoom_around(0, 1e12);
  EXPECT_DOUBLE_EQ(a.ns_per_pixel(), TimeAxis::kMinNsPerPixel);
  a.zoom_around(0, 1e-12);
  // At most 20 times the 1 ms of data across 1000 pixels: 20 µs per pixel.
  EXPECT_DOUBLE_EQ(a.ns_per_pixel(), 20'000);
}

TEST(TimeAxis, PanMovesThePictureAndStopsNearTheData) {
  TimeAxis a = fitted();
  a.pan(100);  // picture right by 100 px: the view starts 104 µs earlier
  EXPECT_EQ(a.to_time(0), -124'000);
  a.pan(1e9);  // far past the start: a tenth of the view stays on the data
  EXPECT_NEAR(static_cast<double>(a.visible_end()), 0.1 * 1'040'000, 1);
}

TEST(TimeAxis, FitOnASpanZoomsToIt) {
  TimeAxis a = fitted();
  a.fit(100'000, 200'000);  // 100 µs + 4 % over 1000 px
  EXPECT_DOUBLE_EQ(a.ns_per_pixel(), 104);
  EXPECT_EQ(a.to_time(0), 98'000);
}

TEST(RulerTicks, StepIsOneTwoOrFiveTimesAPowerOfTen) {
  EXPECT_EQ(tick_step(1040, 100), 200'000);  // 104 µs wanted -> 200 µs
  EXPECT_EQ(tick_step(1, 100), 100);
  EXPECT_EQ(tick_step(3, 100), 500);
  EXPECT_EQ(tick_step(1e7, 110), 2'000'000'000);  // 1.1 s -> 2 s
}

TEST(RulerTicks, LongSpansStepInWholeMinutesAndHours) {
  EXPECT_EQ(tick_step(1e8, 110), 15'000'000'000);         // 11 s -> 15 s
  EXPECT_EQ(tick_step(3e10, 110), 3'600'000'000'000);     // 55 min -> 1 h
  EXPECT_EQ(tick_step(1e11, 110), 6 * 3'600'000'000'000);  // 11 000 s (3.06 h) -> 6 h
}

TEST(TimeFormat, PicksTheUnitAndTheDigitsTheValueNeeds) {
  EXPECT_EQ(format_time(0), "0 s");
  EXPECT_EQ(format_time(100), "100 ns");
  EXPECT_EQ(format_time(1500), "1.5 µs");
  EXPECT_EQ(format_time(820'000), "820 µs");
  EXPECT_EQ(format_time(1'234'567), "1.235 ms");   // four significant digits
  EXPECT_EQ(format_time(12'345'678'901), "12.35 s");
  EXPECT_EQ(format_time(-2000), "-2 µs");
  // From a minute on: hours, minutes, seconds, never "1.38889 h".
  EXPECT_EQ(format_time(5'000'000'000'000), "1 h 23 min 20 s");
  EXPECT_EQ(format_time(90'000'000'000), "1 min 30 s");
  EXPECT_EQ(format_time(7'200'000'000'000), "2 h");
}

TEST(TimeFormat, RulerLabelsShowTheTimeToTheStep) {
  constexpr SimTime kMinute = 60'000'000'000, kHour = 60 * kMinute;
  EXPECT_EQ(format_time(90 * kMinute, 30 * kMinute), "1 h 30 min");
  EXPECT_EQ(format_time(6 * kHour, 6 * kHour), "6 h");
  EXPECT_EQ(format_time(83 * kMinute + 20'000'000'000, kMinute), "1 h 23 min");  // 20 s rounds away
  EXPECT_EQ(format_time(1'500'000'000, 500'000'000), "1.5 s");
  EXPECT_EQ(format_time(2'000'000'000, 500'000'000), "2 s");
  EXPECT_EQ(format_time(1'200'000, 100'000), "1.2 ms");
  EXPECT_EQ(format_time(65'500'000'000, 500'000'000), "1 min 5.5 s");
}

TEST(RulerTicks, TicksFallOnMultiplesOfTheStep) {
  const TimeAxis a = fitted();
  const std::vector<Tick> t = ticks(a, 100);
  ASSERT_FALSE(t.empty());
  EXPECT_EQ(t.front().time, 0);
  EXPECT_EQ(t[1].time, 200'000);
  EXPECT_EQ(t[1].label, "200 µs");
}

}  // namespace
}  // namespace stowage::gui
