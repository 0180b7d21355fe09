// adam_step_bf16_moments (bf16 Adam moments, issue 16 item 3): bit-identity
// across instruction sets and thread counts, round-to-nearest-even on every
// moment store, one step at a time against its float64 twin
// (adam_reference_step_bf16_moments), and a trajectory close to, but not the
// same as, the fp32 moments' one.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "executor/adam_reference.h"
#include "executor/cpu_adam.h"
#include "executor/half_bits.h"

namespace stowage::executor {
namespace {

using core::OptimizerKind;
using core::Precision;

constexpr Isa kIsas[] = {Isa::kScalar, Isa::kAvx2, Isa::kAvx512};

uint64_t mix(uint64_t x) {  // SplitMix64's finaliser, as cpu_adam_test.cpp
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

float uniform(uint64_t key, uint64_t i) {  // in [-1, 1), exact in float
  return static_cast<float>(static_cast<uint32_t>(mix(key ^ i) >> 40)) * 0x1p-23f - 1.0f;
}

// Gradients of magnitudes 1 .. 1e-6 per element, so v spans many binades.
std::vector<float> gradient(size_t n, int64_t step) {
  static constexpr float kMagnitude[] = {1, 1e-2f, 1e-4f, 1e-6f};
  std::vector<float> g(n);
  for (size_t i = 0; i < n; ++i) g[i] = uniform(mix(1000 + static_cast<uint64_t>(step)), i) * kMagnitude[mix(i) % 4];
  return g;
}

AdamHyper hyper_for(OptimizerKind optimizer) {
  return {.config = {.learning_rate = 1e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 1e-2},
          .optimizer = optimizer};
}

struct Bf16State {
  std::vector<float> master;
  std::vector<uint16_t> m, v, param16;
  explicit Bf16State(size_t n) : master(n), m(n, 0), v(n, 0), param16(n, 0) {
    for (size_t i = 0; i < n; ++i) master[i] = uniform(mix(1), i);
  }
  void step(int64_t t, const AdamHyper& h, const AdamOptions& o) {
    const std::vector<float> g = gradient(master.size(), t);
    adam_step_bf16_moments(master, g, m, v, param16, Precision::kBf16, h, t, 1.0f, o);
  }
  bool operator==(const Bf16State&) const = default;
};

// n spans several 65536-element pieces (so two threads split it) and ends in
// a tail no vector loop takes whole.
constexpr size_t kN = 3 * 65536 + 37;

TEST(CpuAdamBf16Moments, SameBitsOnEveryIsaAndThreadCount) {
  for (OptimizerKind kind : {OptimizerKind::kAdam, OptimizerKind::kAdamW}) {
    Bf16State expected(kN);
    for (int64_t t = 1; t <= 5; ++t) expected.step(t, hyper_for(kind), {.threads = 1, .isa = Isa::kScalar});
    for (Isa isa : kIsas) {
      if (!isa_supported(isa)) continue;
      for (int threads : {1, 2}) {
        Bf16State got(kN);
        for (int64_t t = 1; t <= 5; ++t) got.step(t, hyper_for(kind), {.threads = threads, .isa = isa});
        EXPECT_TRUE(got == expected) << isa_name(isa) << ", " << threads << " threads";
      }
    }
  }
}

// beta1 = 0 makes m = g exactly before it is stored, so what is stored shows
// the rounding: 0x3f808000 lies halfway between bf16 0x3f80 and 0x3f81 and
// rounds to the even 0x3f80; 0x3f818000, halfway between 0x3f81 and 0x3f82,
// rounds up to the even 0x3f82; 0x3f80c000 is above half and rounds up.
TEST(CpuAdamBf16Moments, StoresMomentsRoundedToNearestEven) {
  const uint32_t kInputs[] = {0x3f808000u, 0x3f818000u, 0x3f80c000u, 0xbf808000u};
  const uint16_t kExpected[] = {0x3f80, 0x3f82, 0x3f81, 0xbf80};
  AdamHyper h = hyper_for(OptimizerKind::kAdam);
  h.config.beta1 = 0;
  h.config.weight_decay = 0;
  for (Isa isa : kIsas) {
    if (!isa_supported(isa)) continue;
    const size_t n = 64 + 3;  // vector loops and a tail
    std::vector<float> master(n, 1.0f), grad(n);
    std::vector<uint16_t> m(n, 0), v(n, 0), p16(n, 0);
    for (size_t i = 0; i < n; ++i) grad[i] = std::bit_cast<float>(kInputs[i % 4]);
    adam_step_bf16_moments(master, grad, m, v, p16, Precision::kBf16, h, 1, 1.0f, {.isa = isa});
    for (size_t i = 0; i < n; ++i) {
      EXPECT_EQ(m[i], kExpected[i % 4]) << isa_name(isa) << " element " << i;
      // v = (1 - beta2) * g^2, stored as its own rounding.
      EXPECT_EQ(v[i], bf16_bits(std::fma(static_cast<float>(1 - 0.999), std::fma(grad[i], grad[i], -0.0f), 0.0f)))
          << isa_name(isa) << " element " << i;
    }
  }
}

// One step from the same state: the kernel's moments are within one bf16
// unit in the last place (2^-7 relative, the spacing of an 8-bit
// significand) of the float64 twin's, since both round nearly the same value
// to bf16; the master weight within 1e-6 relative, the fp32 kernel's own
// accuracy (cpu_adam.h), as the update uses the moments before rounding.
TEST(CpuAdamBf16Moments, EachStepMatchesItsFloat64Twin) {
  constexpr size_t n = 4096;
  for (OptimizerKind kind : {OptimizerKind::kAdam, OptimizerKind::kAdamW}) {
    Bf16State s(n);
    const AdamHyper h = hyper_for(kind);
    for (int64_t t = 1; t <= 20; ++t) {
      std::vector<AdamReferenceState> ref(n);
      for (size_t i = 0; i < n; ++i)
        ref[i] = {static_cast<double>(s.master[i]), static_cast<double>(bf16_value(s.m[i])),
                  static_cast<double>(bf16_value(s.v[i]))};
      const std::vector<float> g = gradient(n, t);
      adam_reference_step_bf16_moments(ref, g, h, t, 1.0);
      s.step(t, h, {});
      for (size_t i = 0; i < n; ++i) {
        const double m = bf16_value(s.m[i]), v = bf16_value(s.v[i]);
        ASSERT_LE(std::abs(m - ref[i].m), 0x1p-7 * std::abs(ref[i].m) + 1e-30) << "m, step " << t << ", " << i;
        ASSERT_LE(std::abs(v - ref[i].v), 0x1p-7 * std::abs(ref[i].v) + 1e-30) << "v, step " << t << ", " << i;
        ASSERT_LE(std::abs(s.master[i] - ref[i].param), 1e-6 * std::abs(ref[i].param) + 1e-9)
            << "master, step " << t << ", " << i;
      }
    }
  }
}

// Over 50 steps the bf16-moment trajectory stays near the fp32 one (each
// step's update direction m / sqrt(v) carries ~2^-8 relative error, times
// lr = 1e-3 per step: well under 1e-3 absolute in 50 steps) but is not the
// same: rounding the moments must show.
TEST(CpuAdamBf16Moments, FollowsFp32MomentsClosely) {
  constexpr size_t n = 4096;
  const AdamHyper h = hyper_for(OptimizerKind::kAdamW);
  Bf16State low(n);
  std::vector<float> master = low.master, m(n, 0), v(n, 0);
  std::vector<uint16_t> p16(n);
  for (int64_t t = 1; t <= 50; ++t) {
    low.step(t, h, {});
    adam_step(master, gradient(n, t), m, v, p16, Precision::kBf16, h, t, 1.0f, {});
  }
  size_t differ = 0;
  for (size_t i = 0; i < n; ++i) {
    EXPECT_LE(std::abs(low.master[i] - master[i]), 1e-3f) << i;
    if (low.master[i] != master[i]) ++differ;
  }
  EXPECT_GT(differ, n / 2);
}

TEST(CpuAdamBf16Moments, RejectsArraysOfDifferentLengths) {
  std::vector<float> master(8), grad(8);
  std::vector<uint16_t> m(8), v(7), p16(8);
  EXPECT_THROW(adam_step_bf16_moments(master, grad, m, v, p16, Precision::kBf16, hyper_for(OptimizerKind::kAdam), 1,
                                      1.0f, {}),
               std::invalid_argument);
  EXPECT_THROW(adam_roofline_pass_bf16_moments(master, grad, m, v, p16, {}), std::invalid_argument);
}

}  // namespace
}  // namespace stowage::executor
