// GELU's element math (gelu.h), shared by the CPU model's loops (gelu.cpp)
// and the CUDA kernels (executor/cuda/gelu_kernel.cu). The operations are
// written out one rounding each, in gelu.cpp's order; tanh is the one
// library function, glibc's tanhf on the CPU and CUDA's on the GPU (both
// within 2 ulp, CUDA C Programming Guide, "Mathematical Functions").
#pragma once

#include "executor/host_device.h"

#if !defined(__CUDA_ARCH__)
#include <cmath>
#endif

namespace stowage::executor::model {

// float(sqrt(2 / pi)): gelu_math_test.cpp checks it against the double
// computation it once was.
inline constexpr float kGeluSqrt2OverPi = 0.7978845608028654f;
inline constexpr float kGeluCubic = 0.044715f;

[[nodiscard]] STOWAGE_HOST_DEVICE inline float gelu_tanh(float u) {
#if defined(__CUDA_ARCH__)
  return tanhf(u);
#else
  return std::tanh(u);
#endif
}

// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
[[nodiscard]] STOWAGE_HOST_DEVICE inline float gelu_value(float x) {
  const float u = kGeluSqrt2OverPi * (x + kGeluCubic * x * x * x);
  return 0.5f * x * (1.0f + gelu_tanh(u));
}

// dy * gelu'(x): the derivative of 0.5 x (1 + tanh u), u = c (x + a x^3), is
// 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) c (1 + 3 a x^2).
[[nodiscard]] STOWAGE_HOST_DEVICE inline float gelu_input_grad(float x, float dy) {
  const float u = kGeluSqrt2OverPi * (x + kGeluCubic * x * x * x);
  const float t = gelu_tanh(u);
  const float du = kGeluSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * x * x);
  return dy * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * du);
}

}  // namespace stowage::executor::model
