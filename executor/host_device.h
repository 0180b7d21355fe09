// One spelling for functions that both backends compile: the CPU build
// (g++) and the CUDA kernels (nvcc) share element-wise math (STYLE.md §11,
// issue 15 item 3), so the CPU tests check the arithmetic the GPU runs.
// Under nvcc STOWAGE_HOST_DEVICE is `__host__ __device__`; in plain C++ it
// is nothing. The helpers below are the few operations whose spelling
// differs between the two (bit casts, fused multiply-add, square root); each
// is correctly rounded on both sides, so a shared formula gives the same
// bits wherever the compiler fuses nothing else (see executor/cuda/CMakeLists.txt).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define STOWAGE_HOST_DEVICE __host__ __device__
#else
#define STOWAGE_HOST_DEVICE
#endif

#if !defined(__CUDA_ARCH__)
#include <bit>
#include <cmath>
#endif

namespace stowage::executor {

[[nodiscard]] STOWAGE_HOST_DEVICE inline uint32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  return std::bit_cast<uint32_t>(x);
#endif
}

[[nodiscard]] STOWAGE_HOST_DEVICE inline float float_from_bits(uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  return std::bit_cast<float>(bits);
#endif
}

// a * b + c rounded once (IEEE 754 fusedMultiplyAdd).
[[nodiscard]] STOWAGE_HOST_DEVICE inline float fused_multiply_add(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

// Correctly rounded even under --use_fast_math, which would otherwise
// replace sqrtf and division by approximations.
[[nodiscard]] STOWAGE_HOST_DEVICE inline float rounded_sqrt(float x) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(x);
#else
  return std::sqrt(x);
#endif
}
[[nodiscard]] STOWAGE_HOST_DEVICE inline float rounded_divide(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

[[nodiscard]] STOWAGE_HOST_DEVICE inline bool is_nan(float x) {
#if defined(__CUDA_ARCH__)
  return isnan(x);
#else
  return std::isnan(x);
#endif
}

}  // namespace stowage::executor
