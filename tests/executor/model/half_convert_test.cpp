// fp32 <-> bf16 / fp16: exhaustive round trips over all 65536 patterns,
// rounding at the edges worked out by hand, and the same bits as the
// optimizer's parameter copy (executor/cpu_adam.cpp).
#include "executor/model/half_convert.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "executor/cpu_adam.h"
#include "executor/model/rng.h"

namespace stowage::executor::model {
namespace {

TEST(HalfConvert, EveryBf16PatternRoundTrips) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const auto bits = static_cast<uint16_t>(b);
    const float f = bf16_to_float(bits);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(f)))) << std::hex << b;
    } else {
      ASSERT_EQ(float_to_bf16(f), bits) << std::hex << b;
    }
  }
}

TEST(HalfConvert, EveryFp16PatternRoundTrips) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const auto bits = static_cast<uint16_t>(b);
    const float f = fp16_to_float(bits);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(fp16_to_float(float_to_fp16(f)))) << std::hex << b;
    } else {
      ASSERT_EQ(float_to_fp16(f), bits) << std::hex << b;
    }
  }
}

TEST(HalfConvert, KnownValues) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  // 1 + 2^-8 is halfway between bf16 1 and 1 + 2^-7: ties to even (1).
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x3f808000u)), 0x3f80);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6: up.
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x3f818000u)), 0x3f82);
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
  // A NaN whose payload sits in the low 16 bits stays NaN, not infinity.
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::bit_cast<float>(0x7f800001u)))));

  EXPECT_EQ(float_to_fp16(1.0f), 0x3c00);
  EXPECT_EQ(float_to_fp16(-2.0f), 0xc000);
  EXPECT_EQ(float_to_fp16(65504.0f), 0x7bff);  // largest finite half
  EXPECT_EQ(float_to_fp16(65519.0f), 0x7bff);  // below the midpoint 65520
  EXPECT_EQ(float_to_fp16(65520.0f), 0x7c00);  // the midpoint rounds to infinity
  EXPECT_EQ(float_to_fp16(0x1.0p-24f), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_fp16(0x1.0p-25f), 0x0000);  // half of it ties to even 0
  EXPECT_EQ(float_to_fp16(0x1.8p-25f), 0x0001);
  EXPECT_EQ(float_to_fp16(1.0f + 0x1.0p-11f), 0x3c00);        // tie, to even
  EXPECT_EQ(float_to_fp16(1.0f + 0x1.8p-10f), 0x3c02);        // tie, 0x3c01 odd: up
  EXPECT_EQ(fp16_to_float(0x0001), 0x1.0p-24f);
  EXPECT_EQ(fp16_to_float(0x03ff), 0x1.ff8p-15f);             // largest subnormal
  EXPECT_EQ(fp16_to_float(0x8000), -0.0f);
  EXPECT_TRUE(std::signbit(fp16_to_float(0x8000)));
}

// adam_step with lr 0 leaves finite master weights as they are and writes
// their 16-bit copy: the same bits as to_half, for values over the whole
// fp32 range, rounding to infinity and to zero included.
TEST(HalfConvert, SameBitsAsTheOptimizersParameterCopy) {
  SplitMix64 rng(5);
  std::vector<float> master;
  for (int i = 0; i < 4096; ++i) {
    master.push_back(std::bit_cast<float>(static_cast<uint32_t>(rng.next())));
  }
  master.push_back(65520.0f);
  master.push_back(0x1.0p-25f);
  for (core::Precision precision : {core::Precision::kBf16, core::Precision::kFp16}) {
    std::vector<float> m(master.size(), 0.0f);
    std::vector<float> v(master.size(), 0.0f);
    std::vector<float> grad(master.size(), 0.0f);
    std::vector<float> copy = master;
    std::vector<uint16_t> from_adam(master.size());
    std::vector<uint16_t> from_here(master.size());
    const AdamHyper hyper{.config = {.learning_rate = 0.0}};
    adam_step(copy, grad, m, v, from_adam, precision, hyper, 1, 1.0f, {});
    to_half(precision, master, from_here);
    for (size_t i = 0; i < master.size(); ++i) {
      // adam_step's decoupled decay computes lr * wd * param even when both
      // are 0, and 0 * inf is NaN: non-finite masters do not survive it.
      if (!std::isfinite(master[i])) continue;
      ASSERT_EQ(from_here[i], from_adam[i]) << "value " << master[i];
    }
  }
}

constexpr Isa kVectorIsas[] = {Isa::kAvx2, Isa::kAvx512};
constexpr core::Precision kPrecisions[] = {core::Precision::kBf16, core::Precision::kFp16};

std::string name_of(Isa isa, core::Precision precision) {
  return std::string(isa_name(isa)) + (precision == core::Precision::kBf16 ? " bf16" : " fp16");
}

// Floats whose rounding to either 16-bit format is hard: every top half,
// each with low halves at and around the bf16 tie (0x8000) and the fp16
// ties of normal halves (bit 12, with bit 13 even and odd); the subnormal
// halves' ties sit in the top half, which runs over all 65536 values, with
// a low half of 0. NaNs, infinities and subnormal floats included.
std::vector<float> hard_floats() {
  constexpr uint32_t kLow[] = {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x2fff, 0x3000,
                               0x3001, 0x7fff, 0x8000, 0x8001, 0xffff};
  std::vector<float> out;
  for (uint32_t high = 0; high <= 0xffff; ++high)
    for (uint32_t low : kLow) out.push_back(std::bit_cast<float>(high << 16 | low));
  return out;
}

// The vector paths (8 and 16 lanes) give the scalar path's bits, NaNs
// included (compared as bit patterns), on every value they may meet; the
// odd length leaves a partial vector to each path's tail.
TEST(HalfConvert, EveryInstructionSetNarrowsToTheScalarBits) {
  std::vector<float> in = hard_floats();
  in.push_back(1.0f);  // odd length
  for (core::Precision precision : kPrecisions) {
    std::vector<uint16_t> expected(in.size());
    to_half(precision, in, expected, Isa::kScalar);
    for (Isa isa : kVectorIsas) {
      if (!isa_supported(isa)) continue;
      std::vector<uint16_t> got(in.size());
      to_half(precision, in, got, isa);
      for (size_t i = 0; i < in.size(); ++i)
        ASSERT_EQ(got[i], expected[i]) << name_of(isa, precision) << " of 0x" << std::hex
                                       << std::bit_cast<uint32_t>(in[i]);
    }
  }
}

TEST(HalfConvert, EveryInstructionSetWidensEveryPatternToTheScalarBits) {
  std::vector<uint16_t> in;
  for (uint32_t b = 0; b <= 0xffff; ++b) in.push_back(static_cast<uint16_t>(b));
  in.push_back(0x3c00);  // odd length
  for (core::Precision precision : kPrecisions) {
    std::vector<float> expected(in.size());
    from_half(precision, in, expected, Isa::kScalar);
    for (Isa isa : kVectorIsas) {
      if (!isa_supported(isa)) continue;
      std::vector<float> got(in.size());
      from_half(precision, in, got, isa);
      for (size_t i = 0; i < in.size(); ++i)
        ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(expected[i]))
            << name_of(isa, precision) << " of 0x" << std::hex << in[i];
    }
  }
}

// Accumulation rounds the exact sum of two widened values once, the same
// bits on every path: random pairs of patterns (overflow to infinity and
// NaNs among them, whose sum is the default NaN) and sums that cancel
// exactly.
TEST(HalfConvert, EveryInstructionSetAccumulatesToTheScalarBits) {
  SplitMix64 rng(11);
  std::vector<uint16_t> acc0, add;
  for (int i = 0; i < 100003; ++i) {
    acc0.push_back(static_cast<uint16_t>(rng.next()));
    add.push_back(i % 7 == 0 ? static_cast<uint16_t>(acc0.back() ^ 0x8000) : static_cast<uint16_t>(rng.next()));
  }
  for (core::Precision precision : kPrecisions) {
    std::vector<uint16_t> expected = acc0;
    accumulate_half(precision, expected, add, Isa::kScalar);
    for (size_t i = 0; i < 64; ++i) {  // the scalar path is the definition, written out
      float sum = precision == core::Precision::kBf16 ? bf16_to_float(acc0[i]) + bf16_to_float(add[i])
                                                      : fp16_to_float(acc0[i]) + fp16_to_float(add[i]);
      if (std::isnan(sum)) sum = std::numeric_limits<float>::quiet_NaN();  // the default NaN, 0x7fc00000
      const uint16_t want = precision == core::Precision::kBf16 ? float_to_bf16(sum) : float_to_fp16(sum);
      ASSERT_EQ(expected[i], want) << name_of(Isa::kScalar, precision) << " element " << i;
    }
    for (Isa isa : kVectorIsas) {
      if (!isa_supported(isa)) continue;
      std::vector<uint16_t> got = acc0;
      accumulate_half(precision, got, add, isa);
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(got[i], expected[i]) << name_of(isa, precision) << " of 0x" << std::hex << acc0[i] << " + 0x"
                                       << add[i];
    }
  }
}

TEST(HalfConvert, ArraysOfDifferentLengthsThrow) {
  std::vector<float> f(3);
  std::vector<uint16_t> h(2);
  EXPECT_THROW(to_half(core::Precision::kBf16, f, h), std::invalid_argument);
  EXPECT_THROW(from_half(core::Precision::kFp16, h, f), std::invalid_argument);
  EXPECT_THROW(accumulate_half(core::Precision::kFp16, h, std::vector<uint16_t>(3)), std::invalid_argument);
}

}  // namespace
}  // namespace stowage::executor::model
