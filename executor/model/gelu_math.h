// GELU's element math (gelu.h), shared by the CPU model's loops (gelu.cpp)
// and the CUDA kernels (executor/cuda/model_kernels.cu). The operations are
// written out one rounding each, in gelu.cpp's order, tanh included: no
// library function, so that both backends round every step the same way
// (nvcc compiles them with --fmad=false, g++ for a baseline x86-64 with no
// FMA to contract into) and the CPU's loops vectorise. glibc's tanhf was a
// call per element: perf put tanhf and the expm1f under it at 22 % of a
// tiny-gpt training run, half of what all its matrix products took.
#pragma once

#include <cstdint>

#include "executor/host_device.h"

namespace stowage::executor::model {

// float(sqrt(2 / pi)): gelu_math_test.cpp checks it against the double
// computation it once was.
inline constexpr float kGeluSqrt2OverPi = 0.7978845608028654f;
inline constexpr float kGeluCubic = 0.044715f;

// Cody and Waite's two-part ln 2 (the high part ends in 9 zero bits, so
// k * kLn2High is exact for the |k| <= 26 used here), and log2(e).
inline constexpr float kLn2High = 0.693145751953125f;
inline constexpr float kLn2Low = 1.428606820309417e-06f;
inline constexpr float kLog2E = 1.4426950408889634f;
// Beyond |u| = 9, tanh u is within half an ulp of +-1.
inline constexpr float kTanhSaturates = 9.0f;

// tanh u = (e - 1) / (e + 1) with e = exp(2u): 2u = k ln2 + r, |r| <= ln2/2,
// exp(r) by its Taylor polynomial to r^6 (the terms left out are under
// 1.3e-7 of it), times 2^k made from the exponent bits. Absolute error a
// few 1e-7 (gelu_math_test.cpp measures it against the double tanh); the
// relative error near 0 is larger, which GELU never sees: it adds tanh u
// to 1. NaN stays NaN; +-inf give +-1.
[[nodiscard]] STOWAGE_HOST_DEVICE inline float gelu_tanh(float u) {
  const float c = u > -kTanhSaturates ? (u < kTanhSaturates ? u : kTanhSaturates) : -kTanhSaturates;
  const float two_u = 2.0f * c;
  // Round to nearest: 2u log2(e) lies in [-26, 26], so the sum is positive
  // and the conversion's truncation is a floor.
  const int k = static_cast<int>(two_u * kLog2E + 64.5f) - 64;
  const float kf = static_cast<float>(k);
  const float r = (two_u - kf * kLn2High) - kf * kLn2Low;
  float p = 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const float e = p * float_from_bits(static_cast<uint32_t>(k + 127) << 23);
  const float t = rounded_divide(e - 1.0f, e + 1.0f);
  return u == u ? t : u;
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
