// square_sum_bins.h against SquareSum::add_*_bits: the per-value rule the
// GPU kernel bins by gives the CPU's total to the bit, for every 16-bit
// pattern, alone and all together.
#include "executor/square_sum_bins.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "executor/square_sum.h"

namespace stowage::executor {
namespace {

SquareSumBins bins_of(std::span<const uint16_t> bits, core::Precision precision) {
  SquareSumBins bins;
  for (uint16_t x : bits)
    add_square_term(bins, precision == core::Precision::kBf16 ? bf16_square_term(x) : fp16_square_term(x));
  return bins;
}

struct Outcome {
  double value;
  bool finite;
};
Outcome by_bits(std::span<const uint16_t> bits, core::Precision precision) {
  SquareSum s;
  const bool finite = precision == core::Precision::kBf16 ? s.add_bf16_bits(bits) : s.add_fp16_bits(bits);
  return {s.value(), finite};
}
Outcome by_bins(std::span<const uint16_t> bits, core::Precision precision) {
  SquareSum s;
  const bool finite = s.add_bins(bins_of(bits, precision), precision);
  return {s.value(), finite};
}

void expect_same_for_every_pattern(core::Precision precision) {
  for (uint32_t x = 0; x < 65536; ++x) {
    const uint16_t one[] = {static_cast<uint16_t>(x)};
    const Outcome cpu = by_bits(one, precision);
    const Outcome gpu_rule = by_bins(one, precision);
    ASSERT_EQ(cpu.finite, gpu_rule.finite) << "pattern " << x;
    // Bit-equal doubles (an infinity for a saturated total on both).
    ASSERT_EQ(cpu.value, gpu_rule.value) << "pattern " << x;
  }
}

TEST(SquareSumBins, EveryBf16PatternAloneGivesTheCpuTotal) {
  expect_same_for_every_pattern(core::Precision::kBf16);
}
TEST(SquareSumBins, EveryFp16PatternAloneGivesTheCpuTotal) {
  expect_same_for_every_pattern(core::Precision::kFp16);
}

TEST(SquareSumBins, ManyValuesTogetherGiveTheCpuTotal) {
  // Random finite gradients across the exponents the bins treat apart
  // (truncated and binned; saturation is the exhaustive tests'), then
  // with one infinity added.
  std::mt19937 rng(15);
  for (const core::Precision precision : {core::Precision::kBf16, core::Precision::kFp16}) {
    std::vector<uint16_t> bits;
    for (int i = 0; i < 100003; ++i) {
      uint16_t x = static_cast<uint16_t>(rng());
      const bool bf16 = precision == core::Precision::kBf16;
      const uint32_t exp = bf16 ? (x >> 7) & 0xffu : (x >> 10) & 0x1fu;
      if (exp == (bf16 ? 255u : 31u) || (bf16 && exp >= 150))
        x = static_cast<uint16_t>(x & (bf16 ? 0x9fff : 0xbfff));
      bits.push_back(x);
    }
    const Outcome cpu = by_bits(bits, precision);
    const Outcome rule = by_bins(bits, precision);
    EXPECT_TRUE(cpu.finite);
    EXPECT_EQ(cpu.finite, rule.finite);
    EXPECT_EQ(cpu.value, rule.value);
    bits.push_back(precision == core::Precision::kBf16 ? 0x7f80 : 0x7c00);  // +infinity
    EXPECT_FALSE(by_bins(bits, precision).finite);
    EXPECT_EQ(by_bits(bits, precision).value, by_bins(bits, precision).value);
  }
}

}  // namespace
}  // namespace stowage::executor
