// The arithmetic of a step's gradient verdict: the divisor the optimizer
// applies (loss scale, accumulation mean, clipping), the order-free sum of
// squares behind the norm, and DeepSpeed's loss-scale hysteresis.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <span>
#include <vector>

#include "executor/gradient_divisor.h"
#include "executor/half_bits.h"
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

// Two squares near 2^63 each make a term near 2^127: the total passes
// 2^128 at the third and would wrap to a small norm that clips nothing.
TEST(SquareSum, SaturatesWhenTheTotalPasses2To128) {
  SquareSum s;
  for (int i = 0; i < 3; ++i) s.add(3e9);  // square 9e18, just under 2^63
  EXPECT_TRUE(std::isinf(s.value()));
  SquareSum a, b;
  a.add(3e9);
  a.add(3e9);
  b.add(3e9);
  b.add(3e9);
  a.add(b);
  EXPECT_TRUE(std::isinf(a.value()));
}

// The batched 16-bit paths give add(value)'s total to the bit, and the same
// finiteness, for every one of the 65,536 patterns alone and for a long mix
// weighted to the exponents where terms truncate (bf16 below 2^-25),
// saturate (bf16 near 2^31.5) or are subnormal.
void expect_bits_add_as_values(bool bf16) {
  const auto value_of = [bf16](uint16_t x) { return bf16 ? bf16_value(x) : fp16_value(x); };
  const auto add_bits = [bf16](SquareSum& s, std::span<const uint16_t> x) {
    return bf16 ? s.add_bf16_bits(x) : s.add_fp16_bits(x);
  };
  for (uint32_t x = 0; x < 65536; ++x) {
    const uint16_t bits = static_cast<uint16_t>(x);
    SquareSum by_value, by_bits;
    by_value.add(value_of(bits));
    const bool finite = add_bits(by_bits, std::span<const uint16_t>(&bits, 1));
    EXPECT_EQ(finite, std::isfinite(value_of(bits))) << bf16 << " " << x;
    EXPECT_EQ(by_bits.value(), by_value.value()) << bf16 << " " << x;
  }
  std::mt19937 rng(11);
  const int exp_bits = bf16 ? 8 : 5, man_bits = bf16 ? 7 : 10;
  std::vector<uint16_t> mix;
  for (int i = 0; i < 200000; ++i) {
    uint32_t exp = std::uniform_int_distribution<uint32_t>(0, (1u << exp_bits) - 2)(rng);  // finite
    if (bf16 && i % 3 == 0) exp = std::uniform_int_distribution<uint32_t>(90, 104)(rng);
    const uint32_t man = std::uniform_int_distribution<uint32_t>(0, (1u << man_bits) - 1)(rng);
    mix.push_back(static_cast<uint16_t>(((i & 1u) << 15) | (exp << man_bits) | man));
  }
  // Without the saturating values, so that the totals compared are numbers.
  std::erase_if(mix, [&](uint16_t x) { return std::abs(value_of(x)) > 1e6; });
  SquareSum by_value, by_bits;
  for (uint16_t x : mix) by_value.add(value_of(x));
  EXPECT_TRUE(add_bits(by_bits, mix));
  EXPECT_FALSE(std::isinf(by_value.value()));
  EXPECT_EQ(by_bits.value(), by_value.value()) << bf16;
}

TEST(SquareSum, Bf16BitsAddExactlyAsTheirValues) { expect_bits_add_as_values(true); }
TEST(SquareSum, Fp16BitsAddExactlyAsTheirValues) { expect_bits_add_as_values(false); }

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
