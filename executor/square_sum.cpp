#include "executor/square_sum.h"

#include <array>

namespace stowage::executor {
namespace {

// A 16-bit value is M * 2^E with an integer significand M, so its term in
// the total, floor(M^2 * 2^(2E + 64)), is M^2 shifted by s = 2E + 64. Values
// of one exponent share s: their M^2 are summed as integers per exponent
// and shifted once at the end, which is exact wherever s >= 0 (a sum of
// integers shifted left is the sum of the shifted integers). Four sets of
// sums, taken in turn, keep consecutive values of one exponent from
// waiting on each other's addition.
using Bins = std::array<std::array<uint64_t, 256>, 4>;

}  // namespace

// bf16: 8 exponent bits, 7 stored significand bits. Normal: M = 128 + man,
// E = exp - 134, so s = 2 exp - 204. Subnormal: M = man < 128, s = -202, so
// the term is 0. s < 0 (exp < 102) truncates each term, so those values
// are added one by one; below exp 94 the term is 0 (M^2 < 2^16). A square
// of 2^63 or more (the term reaches 2^127) saturates: exp > 158, or exp 158
// with M^2 >= 2^15. Exponent 255 is infinity or NaN.
bool SquareSum::add_bf16_bits(std::span<const uint16_t> bits) {
  Bins bins{};
  uint64_t small = 0;  // the truncated terms of exp 94..101, each below 2^14
  bool finite = true;
  size_t i = 0;
  for (uint16_t x : bits) {
    const uint32_t exp = (x >> 7) & 0xffu;
    const uint32_t m = (x & 0x7fu) | 0x80u;
    const uint64_t square = uint64_t{m} * m;
    if (exp >= 102 && exp < 158) {
      bins[i++ & 3][exp] += square;
    } else if (exp == 255) {
      finite = false;
      saturated_ = true;
    } else if (exp >= 158) {
      if (exp > 158 || square >= (uint64_t{1} << 15))
        saturated_ = true;
      else
        bins[i++ & 3][exp] += square;
    } else if (exp >= 94) {
      small += square >> (204 - 2 * exp);
    }
  }
  add_total(small);
  for (uint32_t exp = 102; exp <= 158; ++exp) {
    for (const auto& b : bins) add_shifted(b[exp], static_cast<int>(2 * exp) - 204);
  }
  return finite;
}

// IEEE binary16: 5 exponent bits, 10 stored significand bits. Normal:
// M = 1024 + man, E = exp - 25, so s = 2 exp + 14; subnormal (exp 0): M = man,
// E = -24, s = 16, the same as exp 1. Every s is positive and the largest
// square (65504^2 < 2^32) is far below 2^63: no value truncates or
// saturates. Exponent 31 is infinity or NaN.
bool SquareSum::add_fp16_bits(std::span<const uint16_t> bits) {
  Bins bins{};
  bool finite = true;
  size_t i = 0;
  for (uint16_t x : bits) {
    const uint32_t exp = (x >> 10) & 0x1fu;
    const uint32_t m = (x & 0x3ffu) | (exp != 0 ? 0x400u : 0u);
    if (exp == 31) {
      finite = false;
      saturated_ = true;
      continue;
    }
    bins[i++ & 3][exp] += uint64_t{m} * m;
  }
  for (const auto& b : bins) add_shifted(b[0], 16);
  for (uint32_t exp = 1; exp < 31; ++exp) {
    for (const auto& b : bins) add_shifted(b[exp], static_cast<int>(2 * exp) + 14);
  }
  return finite;
}

}  // namespace stowage::executor
