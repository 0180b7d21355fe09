// half_convert.h over the bit manipulations executor/half_bits.h shares with
// the CPU optimizer.
#include "executor/model/half_convert.h"

#include <stdexcept>

#include "executor/half_bits.h"

namespace stowage::executor::model {

uint16_t float_to_bf16(float x) { return bf16_bits(x); }
float bf16_to_float(uint16_t bits) { return bf16_value(bits); }
uint16_t float_to_fp16(float x) { return fp16_bits(x); }
float fp16_to_float(uint16_t bits) { return fp16_value(bits); }

void to_half(core::Precision precision, std::span<const float> in, std::span<uint16_t> out) {
  if (in.size() != out.size()) throw std::invalid_argument("to_half: input and output lengths differ");
  const bool bf16 = precision == core::Precision::kBf16;
  for (size_t i = 0; i < in.size(); ++i) out[i] = bf16 ? float_to_bf16(in[i]) : float_to_fp16(in[i]);
}

void from_half(core::Precision precision, std::span<const uint16_t> in, std::span<float> out) {
  if (in.size() != out.size()) throw std::invalid_argument("from_half: input and output lengths differ");
  const bool bf16 = precision == core::Precision::kBf16;
  for (size_t i = 0; i < in.size(); ++i) out[i] = bf16 ? bf16_to_float(in[i]) : fp16_to_float(in[i]);
}

}  // namespace stowage::executor::model
