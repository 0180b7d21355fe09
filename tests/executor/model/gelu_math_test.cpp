// The constants of gelu_math.h, written as literals so that nvcc can use
// them in device code, are the values gelu.cpp once computed at run time;
// its tanh, written out so that both backends round it alike, is within its
// stated error of the true tanh everywhere.
#include "executor/model/gelu_math.h"

#include "executor/model/gelu.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

namespace stowage::executor::model {
namespace {

TEST(GeluMath, Sqrt2OverPiIsTheRoundedDoubleComputation) {
  EXPECT_EQ(kGeluSqrt2OverPi, static_cast<float>(std::sqrt(2.0 / std::numbers::pi)));
}

TEST(GeluMath, MatchesTheFormulaAtHandPoints) {
  // gelu(0) = 0; gelu'(0) = 0.5; gelu(x) -> x for large x, -> 0 for very negative x.
  EXPECT_EQ(gelu_value(0.0f), 0.0f);
  EXPECT_EQ(gelu_input_grad(0.0f, 1.0f), 0.5f);
  EXPECT_FLOAT_EQ(gelu_value(10.0f), 10.0f);
  EXPECT_NEAR(gelu_value(-10.0f), 0.0f, 1e-6f);
  // gelu(1) = 0.5 (1 + tanh(0.7978846 * 1.044715)) = 0.841192 (PyTorch, approximate='tanh').
  EXPECT_NEAR(gelu_value(1.0f), 0.841192f, 1e-6f);
}

TEST(GeluMath, TheTwoPartLn2AndLog2eAreTheConstants) {
  // The low part is the float nearest ln 2 - kLn2High: within half its ulp (2^-44).
  EXPECT_NEAR(static_cast<double>(kLn2High) + static_cast<double>(kLn2Low), std::numbers::ln2, 0x1p-44);
  EXPECT_EQ(std::bit_cast<uint32_t>(kLn2High) & 0x1ffu, 0u);  // 9 zero bits: k * kLn2High is exact for |k| < 32
  EXPECT_EQ(kLog2E, static_cast<float>(std::numbers::log2e));
}

// Every float u in [-12, 12] at a spacing of 2^-10, odd points between
// them, and a million random ones: within 3e-7 of tanh (the double one).
TEST(GeluMath, TanhIsWithinAFewE7OfTheTrueTanh) {
  double worst = 0;
  float worst_at = 0;
  const auto check = [&](float u) {
    const double error = std::fabs(static_cast<double>(gelu_tanh(u)) - std::tanh(static_cast<double>(u)));
    if (error > worst) worst = error, worst_at = u;
  };
  for (int i = -12 * 1024; i <= 12 * 1024; ++i) {
    check(static_cast<float>(i) / 1024.0f);
    check(static_cast<float>(i) / 1024.0f + 0.000123f);
  }
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> any(-12.0f, 12.0f);
  for (int i = 0; i < 1'000'000; ++i) check(any(rng));
  EXPECT_LE(worst, 3e-7) << "at u = " << worst_at;
  // Saturation and the special values.
  EXPECT_EQ(gelu_tanh(0.0f), 0.0f);
  EXPECT_EQ(gelu_tanh(20.0f), 1.0f);
  EXPECT_EQ(gelu_tanh(-20.0f), -1.0f);
  EXPECT_EQ(gelu_tanh(std::numeric_limits<float>::infinity()), 1.0f);
  EXPECT_EQ(gelu_tanh(-std::numeric_limits<float>::infinity()), -1.0f);
  EXPECT_TRUE(std::isnan(gelu_tanh(std::numeric_limits<float>::quiet_NaN())));
}

// GELU itself against the formula in double: the value relative to
// |x| + 1e-3 (GELU of a tiny x is about x / 2, where only the absolute
// error is small); the gradient within what tanh's 3e-7 moves it by,
// (0.5 + |x| du) of it (du = d u / d x), plus a few roundings.
TEST(GeluMath, ValueAndGradientFollowTheDoubleFormula) {
  const auto value = [](double x) {
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
  };
  const auto grad = [](double x) {
    const double c = std::sqrt(2 / std::numbers::pi), t = std::tanh(c * (x + 0.044715 * x * x * x));
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * 0.044715 * x * x);
  };
  for (int i = -8000; i <= 8000; ++i) {
    const float x = static_cast<float>(i) / 1000.0f + 0.0003f;
    const double scale = std::fabs(static_cast<double>(x)) + 1e-3;
    ASSERT_LE(std::fabs(gelu_value(x) - value(x)) / scale, 1e-6) << x;
    const double du = std::sqrt(2 / std::numbers::pi) * (1 + 3 * 0.044715 * x * x);
    const double bound = 3e-7 * (0.5 + std::fabs(x) * du) + 4 * 0x1p-23 * std::max(1.0, std::fabs(grad(x)));
    ASSERT_LE(std::fabs(gelu_input_grad(x, 1.0f) - grad(x)), bound) << x;
  }
}

// The loops of gelu.cpp are vectorised with a scalar remainder; every
// element, wherever it falls, gets the element function's bits.
TEST(GeluMath, TheLoopsGiveEachElementTheElementFunctionsBits) {
  std::mt19937 rng(11);
  std::normal_distribution<float> any(0.0f, 3.0f);
  for (const int64_t n : {1, 3, 4, 7, 16, 1003}) {
    std::vector<float> x(static_cast<size_t>(n)), dy(x.size()), y(x.size()), dx(x.size());
    for (size_t i = 0; i < x.size(); ++i) x[i] = any(rng), dy[i] = any(rng);
    x[0] = std::numeric_limits<float>::quiet_NaN();
    gelu_forward(x.data(), y.data(), n);
    gelu_backward(x.data(), dy.data(), dx.data(), n);
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_EQ(std::bit_cast<uint32_t>(y[i]), std::bit_cast<uint32_t>(gelu_value(x[i]))) << n << " " << i;
      EXPECT_EQ(std::bit_cast<uint32_t>(dx[i]), std::bit_cast<uint32_t>(gelu_input_grad(x[i], dy[i]))) << n << " " << i;
    }
  }
}

}  // namespace
}  // namespace stowage::executor::model
