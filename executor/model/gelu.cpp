// gelu.h. The derivative of 0.5 x (1 + tanh u), u = c (x + a x^3):
//   0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) c (1 + 3 a x^2).
#include "executor/model/gelu.h"

#include <cmath>
#include <numbers>

namespace stowage::executor::model {
namespace {

const float kSqrt2OverPi = static_cast<float>(std::sqrt(2.0 / std::numbers::pi));
constexpr float kCubic = 0.044715f;

}  // namespace

void gelu_forward(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float u = kSqrt2OverPi * (x[i] + kCubic * x[i] * x[i] * x[i]);
    y[i] = 0.5f * x[i] * (1.0f + std::tanh(u));
  }
}

void gelu_backward(const float* x, const float* dy, float* dx, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float u = kSqrt2OverPi * (x[i] + kCubic * x[i] * x[i] * x[i]);
    const float t = std::tanh(u);
    const float du = kSqrt2OverPi * (1.0f + 3.0f * kCubic * x[i] * x[i]);
    dx[i] = dy[i] * (0.5f * (1.0f + t) + 0.5f * x[i] * (1.0f - t * t) * du);
  }
}

}  // namespace stowage::executor::model
