// The bits of fp32 <-> bf16 and IEEE binary16, one place for the optimizer's
// scalar path (cpu_adam.cpp) and the model's conversions (model/half_convert):
// the 16-bit copy the optimizer writes must be exactly what the model reads.
// The CUDA kernels (executor/cuda/) compile the very same functions.
#pragma once

#include <cstdint>

#include "core/training_spec.h"
#include "executor/host_device.h"

namespace stowage::executor {

// fp32 -> bf16, round to nearest even; a NaN stays a (quiet) NaN instead of
// carrying into the exponent and becoming infinity.
[[nodiscard]] STOWAGE_HOST_DEVICE inline uint16_t bf16_bits(float x) {
  const uint32_t bits = float_bits(x);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

// fp32 -> IEEE binary16, round to nearest even, as F16C's VCVTPS2PH does:
// overflow to infinity, gradual underflow to subnormals, NaN quieted with
// the top 10 payload bits kept.
[[nodiscard]] STOWAGE_HOST_DEVICE inline uint16_t fp16_bits(float x) {
  const uint32_t bits = float_bits(x);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 rounds to inf
  uint32_t result = 0;
  uint32_t rest = 0;         // the bits shifted out
  uint32_t half = 0;         // the value of rest that is exactly half a unit
  if (abs >= 0x38800000u) {  // >= 2^-14: normal half; rebias the exponent by 127 - 15
    result = (abs >> 13) - (112u << 10);
    rest = abs & 0x1fffu;
    half = 0x1000u;
  } else if (abs > 0x33000000u) {               // (2^-25, 2^-14): subnormal half, units of 2^-24
    const uint32_t shift = 126u - (abs >> 23);  // 14..24
    const uint32_t significand = (abs & 0x7fffffu) | 0x800000u;
    result = significand >> shift;
    rest = significand & ((1u << shift) - 1u);
    half = 1u << (shift - 1u);
  } else {
    return static_cast<uint16_t>(sign);  // <= 2^-25 rounds to zero (2^-25 itself ties to even 0)
  }
  if (rest > half || (rest == half && (result & 1u) != 0)) ++result;  // a carry into the exponent is right
  return static_cast<uint16_t>(sign | result);
}

// bf16 -> fp32: exact.
[[nodiscard]] STOWAGE_HOST_DEVICE inline float bf16_value(uint16_t bits) {
  return float_from_bits(static_cast<uint32_t>(bits) << 16);
}

// IEEE binary16 -> fp32: exact, subnormals included; a NaN comes out quiet
// with its payload, as F16C's VCVTPH2PS gives it.
[[nodiscard]] STOWAGE_HOST_DEVICE inline float fp16_value(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1fu) {
    const uint32_t quiet = mantissa != 0 ? 0x400000u : 0;  // infinity has no payload to quiet
    return float_from_bits(sign | 0x7f800000u | quiet | (mantissa << 13));
  }
  if (exponent != 0) return float_from_bits(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  // Zero or subnormal: mantissa * 2^-24, exact in fp32.
  const float magnitude = static_cast<float>(mantissa) * 0x1.0p-24f;
  return sign != 0 ? -magnitude : magnitude;
}

// The fp32 sum of two widened 16-bit values, or the default quiet NaN
// (0x7fc00000) where it is NaN: which operand's payload an addition keeps
// is not fixed by IEEE 754, and compilers may swap operands in one path and
// not another, so only a fixed NaN gives every path (and device) the same
// bits. Gradient accumulation over micro-steps rounds this once.
[[nodiscard]] STOWAGE_HOST_DEVICE inline float sum_or_default_nan(float a, float b) {
  const float sum = a + b;
  return is_nan(sum) ? float_from_bits(0x7fc00000u) : sum;
}

// The two above and the two widenings chosen by a training precision at
// compile time, for kernels templated on it.
template <core::Precision kPrecision>
[[nodiscard]] STOWAGE_HOST_DEVICE inline uint16_t half_bits_of(float x) {
  if constexpr (kPrecision == core::Precision::kBf16)
    return bf16_bits(x);
  else
    return fp16_bits(x);
}
template <core::Precision kPrecision>
[[nodiscard]] STOWAGE_HOST_DEVICE inline float half_value_of(uint16_t bits) {
  if constexpr (kPrecision == core::Precision::kBf16)
    return bf16_value(bits);
  else
    return fp16_value(bits);
}

}  // namespace stowage::executor
