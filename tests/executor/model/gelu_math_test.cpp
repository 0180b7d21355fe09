// The constants of gelu_math.h, written as literals so that nvcc can use
// them in device code, are the values gelu.cpp once computed at run time.
#include "executor/model/gelu_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

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

}  // namespace
}  // namespace stowage::executor::model
