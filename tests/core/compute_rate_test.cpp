#include "core/compute_rate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace stowage::core {
namespace {

const FlopsPerSecond kPeak(1e12);
const std::vector<RatePoint> kCurve{{.flops = 1e6, .rate = FlopsPerSecond(10e9)},
                                    {.flops = 1e8, .rate = FlopsPerSecond(30e9)},
                                    {.flops = 1e9, .rate = FlopsPerSecond(20e9)}};

TEST(ComputeRate, WithoutACurveEveryOpRunsAtThePeak) {
  EXPECT_EQ(compute_rate({}, kPeak, 1e3).value(), 1e12);
  EXPECT_EQ(compute_rate({}, kPeak, 1e15).value(), 1e12);
}

TEST(ComputeRate, AtAPointItsRate) {
  for (const RatePoint& p : kCurve) EXPECT_DOUBLE_EQ(compute_rate(kCurve, kPeak, p.flops).value(), p.rate.value());
}

TEST(ComputeRate, BetweenTwoPointsLinearInLogFlops) {
  // 1e7 is halfway from 1e6 to 1e8 in log FLOPs: halfway from 10 to 30.
  EXPECT_NEAR(compute_rate(kCurve, kPeak, 1e7).value(), 20e9, 1e-3);
  // A quarter of the way from 1e8 to 1e9: a quarter of the way down to 20.
  EXPECT_NEAR(compute_rate(kCurve, kPeak, 1e8 * std::pow(10.0, 0.25)).value(), 27.5e9, 1e-3);
}

TEST(ComputeRate, BeyondTheEndsTheNearestPointsRate) {
  EXPECT_EQ(compute_rate(kCurve, kPeak, 1).value(), 10e9);
  EXPECT_EQ(compute_rate(kCurve, kPeak, 0).value(), 10e9);
  EXPECT_EQ(compute_rate(kCurve, kPeak, 1e15).value(), 20e9);
  const std::vector<RatePoint> one{{.flops = 5e6, .rate = FlopsPerSecond(7e9)}};
  EXPECT_EQ(compute_rate(one, kPeak, 1).value(), 7e9);
  EXPECT_EQ(compute_rate(one, kPeak, 1e12).value(), 7e9);
}

}  // namespace
}  // namespace stowage::core
