// fp32 <-> bf16 and fp32 <-> IEEE binary16 conversion. The model computes
// in fp32 only; the executor keeps 16-bit parameters and gradients and
// converts at the boundary with these. Rounding is to nearest even with NaN
// kept NaN, the same bits as the copy executor/cpu_adam.cpp writes (checked
// in half_convert_test.cpp), so a parameter converted here and one written by
// the optimizer agree.
#pragma once

#include <cstdint>
#include <span>

#include "core/training_spec.h"

namespace stowage::executor::model {

// fp32 -> bf16 bits, round to nearest even; NaN stays a quiet NaN (a plain
// rounding would carry a NaN's payload into the exponent: infinity).
[[nodiscard]] uint16_t float_to_bf16(float x);
// bf16 bits -> fp32: exact (bf16 is the top half of an fp32).
[[nodiscard]] float bf16_to_float(uint16_t bits);

// fp32 -> binary16 bits, round to nearest even as F16C's VCVTPS2PH does:
// overflow to infinity, gradual underflow to subnormals, NaN quieted with
// the top 10 payload bits kept.
[[nodiscard]] uint16_t float_to_fp16(float x);
// binary16 bits -> fp32: exact, subnormals included.
[[nodiscard]] float fp16_to_float(uint16_t bits);

// Whole arrays in a training precision's 16-bit format. Throws
// std::invalid_argument when the lengths differ (a caller's bug).
void to_half(core::Precision precision, std::span<const float> in, std::span<uint16_t> out);
void from_half(core::Precision precision, std::span<const uint16_t> in, std::span<float> out);

}  // namespace stowage::executor::model
