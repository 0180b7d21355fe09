// The arithmetic of a step's gradient verdict: the divisor the optimizer
// applies (loss scale, accumulation mean, clipping), the order-free sum of
// squares behind the norm, and DeepSpeed's loss-scale hysteresis.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "executor/gradient_divisor.h"
#include "executor/loss_scaler.h"
#include "executor/square_sum.h"

namespace stowage::executor {
namespace {

TEST(GradientDivisor, AveragesMicroStepsAndUnscales) {
  // No clipping: scale 1024, 4 micro-steps summed -> divide by 4096.
  EXPECT_DOUBLE_EQ(gradient_divisor(1024, 4, 1e12, 0), 4096);
}

TEST(GradientDivisor, ClipsOnlyAboveTheNorm) {
  // Stored sum of squares 4096^2 * 9: the mean unscaled gradient has norm 3.
  // Clipping to 1 divides by 3 more (coefficient 1 / (3 + 1e-6)).
  const double carried = 4096;
  const double squares = carried * carried * 9;
  EXPECT_NEAR(gradient_divisor(1024, 4, squares, 1.0), carried * (3 + 1e-6), 1e-6);
  // A norm below the limit is left alone.
  EXPECT_DOUBLE_EQ(gradient_divisor(1024, 4, squares, 5.0), carried);
}

TEST(GradientDivisor, SummingInsteadOfAveragingWouldClipDifferently) {
  // Three micro-steps with gradient norm 0.5 each (identical batches): the
  // mean has norm 0.5, under max_norm 1, so nothing is clipped; a sum
  // (norm 1.5) would have been.
  const double stored_norm = 3 * 0.5;  // the 16-bit buffer holds the sum
  EXPECT_DOUBLE_EQ(gradient_divisor(1, 3, stored_norm * stored_norm, 1.0), 3);
}

TEST(SquareSum, DoesNotDependOnTheOrderOfItsTerms) {
  std::mt19937 rng(5);
  std::vector<double> values;
  for (int i = 0; i < 100000; ++i) {
    // Magnitudes from 1e-12 to 1e3, as gradients span them.
    const double magnitude = std::pow(10.0, std::uniform_real_distribution<double>(-12, 3)(rng));
    values.push_back(static_cast<float>(i % 2 ? magnitude : -magnitude));
  }
  SquareSum forward, backward, split_a, split_b;
  for (double v : values) forward.add(v);
  for (auto it = values.rbegin(); it != values.rend(); ++it) backward.add(*it);
  for (size_t i = 0; i < values.size(); ++i) (i % 7 == 3 ? split_a : split_b).add(values[i]);
  split_b.add(split_a);
  EXPECT_EQ(forward.value(), backward.value());
  EXPECT_EQ(forward.value(), split_b.value());
  double plain = 0;
  for (double v : values) plain += v * v;
  EXPECT_NEAR(forward.value(), plain, plain * 1e-12);
}

TEST(SquareSum, SaturatesInsteadOfWrapping) {
  SquareSum s;
  s.add(1.0);
  s.add(4e9);  // square 1.6e19 > 2^63
  EXPECT_TRUE(std::isinf(s.value()));
}

TEST(LossScaler, HysteresisDelaysTheFirstShrinkAsDeepSpeedDoes) {
  // DeepSpeed's defaults with a short window: hysteresis 2, window 3.
  LossScaler s = LossScaler::for_precision(
      core::Precision::kFp16, {.initial_scale = 1024, .window = 3, .min_scale = 1, .hysteresis = 2});
  s.update(true);  // first overflow: tolerated
  EXPECT_EQ(s.scale, 1024);
  s.update(true);  // second: shrinks, and the tolerance stays used up
  EXPECT_EQ(s.scale, 512);
  s.update(true);
  EXPECT_EQ(s.scale, 256);
  for (int i = 0; i < 3; ++i) s.update(false);  // a window of good steps grows and restores it
  EXPECT_EQ(s.scale, 512);
  s.update(true);
  EXPECT_EQ(s.scale, 512);
}

TEST(LossScaler, NeverGoesBelowTheMinimum) {
  LossScaler s = LossScaler::for_precision(
      core::Precision::kFp16, {.initial_scale = 4, .window = 1000, .min_scale = 2, .hysteresis = 1});
  for (int i = 0; i < 5; ++i) s.update(true);
  EXPECT_EQ(s.scale, 2);
}

TEST(LossScaler, Bf16HasNoScale) {
  EXPECT_EQ(LossScaler::for_precision(core::Precision::kBf16, {}).scale, 1);
}

}  // namespace
}  // namespace stowage::executor
