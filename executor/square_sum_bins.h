// SquareSum's total (square_sum.h) gathered per exponent, the form a GPU can
// build with integer atomics: a 16-bit value is M * 2^E with an integer
// significand M, and its term in the total is M^2 shifted by an amount that
// depends on the exponent field alone. Summing M^2 per exponent and
// shifting each sum once (SquareSum::add_bins) gives the total of
// SquareSum::add_bf16_bits / add_fp16_bits to the bit, in any order of the
// values (square_sum_bins_test.cpp checks every bf16 and fp16 pattern).
// Shared by the CUDA gradient-stats kernel and the CPU tests.
#pragma once

#include <cstdint>

#include "executor/host_device.h"

namespace stowage::executor {

// The sums of M^2 by exponent field, plus what does not bin. Each M^2 is
// below 2^22, so a bin holds the sum of 2^42 values without wrapping.
struct SquareSumBins {
  uint64_t by_exponent[256] = {};  // bf16 uses 102..158, fp16 0..30
  uint64_t truncated = 0;          // bf16 exp 94..101: terms truncated one by one
  uint32_t saturated = 0;          // nonzero: some square reached 2^63 (or was not finite)
  uint32_t not_finite = 0;         // nonzero: some value was infinite or NaN
};

enum class SquareTermKind : uint8_t { kBinned, kTruncated, kSaturates, kNotFinite, kVanishes };

// Where one value's square goes. kBinned: `amount` (M^2) into bin
// `exponent`; kTruncated: `amount` is its already shifted term.
struct SquareTerm {
  SquareTermKind kind = SquareTermKind::kVanishes;
  uint32_t exponent = 0;
  uint64_t amount = 0;
};

// bf16: 8 exponent bits, 7 stored significand bits; M = 128 + man and the
// shift is 2 exp - 204 (square_sum.cpp works the numbers). exp < 102
// truncates each term (below 94 to 0); a square of 2^63 or more saturates
// (exp > 158, or exp 158 with M^2 >= 2^15); exp 255 is infinity or NaN.
[[nodiscard]] STOWAGE_HOST_DEVICE inline SquareTerm bf16_square_term(uint16_t x) {
  const uint32_t exp = (x >> 7) & 0xffu;
  const uint64_t m = (x & 0x7fu) | 0x80u;
  const uint64_t square = m * m;
  if (exp == 255) return {SquareTermKind::kNotFinite, exp, 0};
  if (exp > 158 || (exp == 158 && square >= (uint64_t{1} << 15))) return {SquareTermKind::kSaturates, exp, 0};
  if (exp >= 102) return {SquareTermKind::kBinned, exp, square};
  if (exp >= 94) return {SquareTermKind::kTruncated, exp, square >> (204 - 2 * exp)};
  return {};
}
[[nodiscard]] STOWAGE_HOST_DEVICE inline int bf16_square_shift(uint32_t exponent) {
  return static_cast<int>(2 * exponent) - 204;
}

// IEEE binary16: 5 exponent bits, 10 stored; M = 1024 + man (man for a
// subnormal, exp 0); every square is below 2^32 and every shift positive.
[[nodiscard]] STOWAGE_HOST_DEVICE inline SquareTerm fp16_square_term(uint16_t x) {
  const uint32_t exp = (x >> 10) & 0x1fu;
  if (exp == 31) return {SquareTermKind::kNotFinite, exp, 0};
  const uint64_t m = (x & 0x3ffu) | (exp != 0 ? 0x400u : 0u);
  return {SquareTermKind::kBinned, exp, m * m};
}
[[nodiscard]] STOWAGE_HOST_DEVICE inline int fp16_square_shift(uint32_t exponent) {
  return exponent == 0 ? 16 : static_cast<int>(2 * exponent) + 14;
}

// Adds one term to `bins` (single-threaded; the kernel does the same with
// atomics).
STOWAGE_HOST_DEVICE inline void add_square_term(SquareSumBins& bins, const SquareTerm& t) {
  switch (t.kind) {
    case SquareTermKind::kBinned:
      bins.by_exponent[t.exponent] += t.amount;
      break;
    case SquareTermKind::kTruncated:
      bins.truncated += t.amount;
      break;
    case SquareTermKind::kSaturates:
      bins.saturated = 1;
      break;
    case SquareTermKind::kNotFinite:
      bins.saturated = 1;
      bins.not_finite = 1;
      break;
    case SquareTermKind::kVanishes:
      break;
  }
}

}  // namespace stowage::executor
