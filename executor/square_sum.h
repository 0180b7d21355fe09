// A sum of squares that does not depend on the order of its terms, for the
// global gradient norm: the same gradients give the same norm whether they
// rest on one tier or are split over three and summed by two check ops in
// either order, so placement never changes the clipping (and the losses).
// Each square is truncated to a multiple of 2^-64 and added as an integer
// (exact, associative); squares below 2^-64 vanish, which moves a norm by
// at most 2^-32 per 2^32 elements, far below what clipping can see. A
// square of 2^63 or more (|g| > 3e9) saturates: the norm is then "huge",
// which clips to almost nothing, as a norm that large would; so does a
// total that would pass 2^128 (three squares near 2^63 do).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>

#include "core/training_spec.h"
#include "executor/square_sum_bins.h"

namespace stowage::executor {

// GCC and Clang's 128-bit integer (__extension__: not ISO C++, -Wpedantic).
__extension__ typedef unsigned __int128 SquareSumTotal;

class SquareSum {
 public:
  void add(double value) {
    const double square = value * value;  // exact for 16-bit values (at most 22 significant bits)
    if (!(square < kLimit)) {
      saturated_ = true;  // also NaN and infinity; finiteness is judged apart
      return;
    }
    add_total(static_cast<SquareSumTotal>(std::ldexp(square, 64)));
  }
  void add(const SquareSum& other) {
    add_total(other.total_);
    saturated_ |= other.saturated_;
  }
  // The squares of 16-bit values given by their bits, each added exactly
  // as add(value) would add it (the same total to the bit), but with
  // integer arithmetic by exponent instead of a conversion per value: the
  // gradient check of a 57M-parameter step took 0.6 s this way (issue 14).
  // Returns whether every value was finite.
  bool add_bf16_bits(std::span<const uint16_t> bits);
  bool add_fp16_bits(std::span<const uint16_t> bits);
  // Per-exponent sums of M^2 (square_sum_bins.h), as a GPU gathers them,
  // each shifted once: the same total as add_*_bits over the same values.
  // Returns whether every value was finite.
  bool add_bins(const SquareSumBins& bins, core::Precision precision) {
    add_total(bins.truncated);
    const bool bf16 = precision == core::Precision::kBf16;
    for (uint32_t exp = 0; exp < 256; ++exp)
      add_shifted(bins.by_exponent[exp], bf16 ? bf16_square_shift(exp) : fp16_square_shift(exp));
    if (bins.saturated != 0 || bins.not_finite != 0) saturated_ = true;
    return bins.not_finite == 0;
  }
  [[nodiscard]] double value() const {
    if (saturated_) return std::numeric_limits<double>::infinity();
    return std::ldexp(static_cast<double>(total_), -64);
  }

 private:
  static constexpr double kLimit = 9223372036854775808.0;  // 2^63: a square's term is below 2^127
  void add_total(SquareSumTotal term) {
    if (total_ + term < total_) saturated_ = true;  // past 2^128
    total_ += term;
  }
  // Adds `sum << shift`, saturating where the result would pass 2^128.
  void add_shifted(uint64_t sum, int shift) {
    if (sum == 0) return;
    if (shift > 64 && (sum >> (128 - shift)) != 0) {
      saturated_ = true;
      return;
    }
    add_total(static_cast<SquareSumTotal>(sum) << shift);
  }
  SquareSumTotal total_ = 0;
  bool saturated_ = false;
};

}  // namespace stowage::executor
