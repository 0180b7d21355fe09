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
#include "executor/isa.h"

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
// binary16 bits -> fp32: exact, subnormals included; NaNs come out quiet
// (VCVTPH2PS's result).
[[nodiscard]] float fp16_to_float(uint16_t bits);

// Whole arrays in a training precision's 16-bit format, the same bits as
// the scalar functions above on every instruction set (`isa`, isa.h; kAuto:
// the widest this CPU has). The executor converts every parameter twice a
// step and every gradient once, so these run vectorised: fp16 through F16C,
// whose rounding the scalar path reproduces. Throws std::invalid_argument
// when the lengths differ (a caller's bug) or `isa` is not supported here.
void to_half(core::Precision precision, std::span<const float> in, std::span<uint16_t> out, Isa isa = Isa::kAuto);
void from_half(core::Precision precision, std::span<const uint16_t> in, std::span<float> out,
               Isa isa = Isa::kAuto);

// acc[i] = acc[i] + add[i], both widened exactly, the sum rounded once to
// `precision` (a NaN sum: the default quiet NaN, 0x7fc00000 rounded):
// gradient accumulation over micro-steps in 16 bits.
void accumulate_half(core::Precision precision, std::span<uint16_t> acc, std::span<const uint16_t> add,
                     Isa isa = Isa::kAuto);

}  // namespace stowage::executor::model
