// adam_step against its float64 twin (executor/adam_reference.h) and against
// independent bf16/fp16 roundings; hand-worked single steps for bias
// correction, eps placement and the two kinds of weight decay; bit-identity
// across thread counts and instruction sets; rejected arguments.
#include "executor/cpu_adam.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "executor/adam_reference.h"

namespace stowage::executor {
namespace {

using core::OptimizerKind;
using core::Precision;

constexpr int64_t kSteps = 100;

// SplitMix64's finaliser (Steele, Lea, Flood 2014): value (stream, i) is a
// pure function of its inputs, so a test can regenerate step t's gradient
// for any length without storing 100 arrays.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Uniform in [-1, 1) with 24 random bits, exact in float.
float uniform(uint64_t stream, uint64_t i) {
  const auto bits = static_cast<uint32_t>(mix(mix(stream) ^ i) >> 40);
  return static_cast<float>(bits) * 0x1p-23f - 1.0f;
}

// Initial master weights: uniform in [-1, 1).
std::vector<float> initial_master(size_t n) {
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = uniform(1, i);
  return out;
}

// Step t's gradient: uniform in [-1, 1) times 10^-k, with k in 0..8 fixed
// per element, so some elements have |g| near eps and the eps term matters.
void fill_grad(std::vector<float>& grad, int64_t step, float loss_scale) {
  static constexpr float kMagnitude[] = {1, 1e-1f, 1e-2f, 1e-3f, 1e-4f, 1e-5f, 1e-6f, 1e-7f, 1e-8f};
  for (size_t i = 0; i < grad.size(); ++i) {
    grad[i] = uniform(1000 + static_cast<uint64_t>(step), i) * kMagnitude[mix(i) % 9] * loss_scale;
  }
}

AdamHyper hyper_for(OptimizerKind optimizer) {
  // PyTorch's defaults, with weight decay on so both kinds are exercised.
  return {.config = {.learning_rate = 1e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 1e-2},
          .optimizer = optimizer};
}

// Independent bf16 rounding: pick the nearer of the two bf16 neighbours in
// double, ties to the even one; not the kernel's add-and-shift trick.
uint16_t bf16_oracle(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  if (std::isinf(x)) return static_cast<uint16_t>(bits >> 16);
  const uint32_t down = bits & 0xffff0000u;
  const uint32_t up = down + 0x10000u;  // next bf16 away from zero
  const auto value = [](uint32_t b) {   // the all-ones exponent stands for 2^128 here
    const double magnitude = (b & 0x7fffffffu) == 0x7f800000u ? 0x1p128 : std::abs(double{std::bit_cast<float>(b)});
    return (b >> 31) != 0 ? -magnitude : magnitude;
  };
  const double to_down = std::abs(double{x} - value(down));
  const double to_up = std::abs(value(up) - double{x});
  if (to_down < to_up) return static_cast<uint16_t>(down >> 16);
  if (to_up < to_down) return static_cast<uint16_t>(up >> 16);
  return static_cast<uint16_t>(((down >> 16) & 1u) == 0 ? down >> 16 : up >> 16);
}

// Independent fp16 rounding: the compiler's _Float16 conversion (libgcc's
// __truncsfhf2 unless F16C is enabled globally, which it is not).
uint16_t fp16_oracle(float x) { return std::bit_cast<uint16_t>(static_cast<_Float16>(x)); }

bool is_nan16(uint16_t h, Precision precision) {
  return precision == Precision::kBf16 ? (h & 0x7f80u) == 0x7f80u && (h & 0x007fu) != 0
                                       : (h & 0x7c00u) == 0x7c00u && (h & 0x03ffu) != 0;
}

// The first i where param16[i] is not master[i] correctly rounded, or -1.
int64_t first_misrounded(const std::vector<float>& master, const std::vector<uint16_t>& param16,
                         Precision precision) {
  for (size_t i = 0; i < master.size(); ++i) {
    if (std::isnan(master[i])) {
      if (!is_nan16(param16[i], precision) || (param16[i] >> 15) != (std::bit_cast<uint32_t>(master[i]) >> 31)) {
        return static_cast<int64_t>(i);
      }
      continue;
    }
    const uint16_t want = precision == Precision::kBf16 ? bf16_oracle(master[i]) : fp16_oracle(master[i]);
    if (param16[i] != want) return static_cast<int64_t>(i);
  }
  return -1;
}

// Everything adam_step reads and writes for one configuration.
struct Trajectory {
  int threads = 1;
  Precision precision = Precision::kBf16;
  std::vector<float> master, m, v;
  std::vector<uint16_t> param16;

  Trajectory(size_t n, int thread_count, Precision p)
      : threads(thread_count), precision(p), master(initial_master(n)), m(n), v(n), param16(n) {}

  void step(const std::vector<float>& grad, const AdamHyper& hyper, int64_t t, Isa isa, float grad_scale = 1) {
    adam_step(master, grad, m, v, param16, precision, hyper, t, grad_scale, {.threads = threads, .isa = isa});
  }
};

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](float x, float y) {
           return std::bit_cast<uint32_t>(x) == std::bit_cast<uint32_t>(y);
         });
}

// max_i |got_i - want_i| / max(|want_i|, floor).
double max_relative_error(const std::vector<float>& got, const std::vector<AdamReferenceState>& want, double floor) {
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::abs(double{got[i]} - want[i].param) / std::max(std::abs(want[i].param), floor);
    worst = std::max(worst, err);
  }
  return worst;
}

std::vector<AdamReferenceState> reference_start(size_t n) {
  std::vector<AdamReferenceState> out(n);
  const std::vector<float> master = initial_master(n);
  for (size_t i = 0; i < n; ++i) out[i].param = master[i];
  return out;
}

// ---------------------------------------------------------------------------
// 100 steps on odd lengths, per instruction set, against the float64 twin.

using MatchCase = std::tuple<size_t, OptimizerKind, Isa>;

class CpuAdamMatchesReference : public testing::TestWithParam<MatchCase> {};

TEST_P(CpuAdamMatchesReference, OverHundredSteps) {
  const auto [n, optimizer, isa] = GetParam();
  if (!isa_supported(isa)) GTEST_SKIP() << "this CPU lacks " << isa_name(isa);
  const AdamHyper hyper = hyper_for(optimizer);
  std::vector<Trajectory> runs;  // threads 1 and 4, bf16 and fp16 copies
  for (const int threads : {1, 4}) {
    for (const Precision p : {Precision::kBf16, Precision::kFp16}) runs.emplace_back(n, threads, p);
  }
  std::vector<AdamReferenceState> reference = reference_start(n);
  std::vector<float> grad(n);
  for (int64_t t = 1; t <= kSteps; ++t) {
    fill_grad(grad, t, 1);
    adam_reference_step(reference, grad, hyper, t, 1);
    for (Trajectory& run : runs) run.step(grad, hyper, t, isa);
  }
  for (const double floor : {1.0, 1e-1, 1e-2, 1e-3}) {
    std::printf("n=%zu floor=%g err=%.3g\n", n, floor, max_relative_error(runs[0].master, reference, floor));
  }
  for (const Trajectory& run : runs) {
    SCOPED_TRACE("threads " + std::to_string(run.threads) + (run.precision == Precision::kBf16 ? " bf16" : " fp16"));
    EXPECT_TRUE(same_bits(run.master, runs[0].master) && same_bits(run.m, runs[0].m) && same_bits(run.v, runs[0].v));
    EXPECT_EQ(first_misrounded(run.master, run.param16, run.precision), -1);
  }
}

std::string match_case_name(const testing::TestParamInfo<MatchCase>& c) {
  const auto [n, optimizer, isa] = c.param;
  return std::string(optimizer == OptimizerKind::kAdam ? "Adam" : "AdamW") + "_" + std::string(isa_name(isa)) + "_n" +
         std::to_string(n);
}

INSTANTIATE_TEST_SUITE_P(OddLengths, CpuAdamMatchesReference,
                         testing::Combine(testing::Values(size_t{1}, size_t{7}, size_t{15}, size_t{17}, size_t{1000003}),
                                          testing::Values(OptimizerKind::kAdam, OptimizerKind::kAdamW),
                                          testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512)),
                         match_case_name);

}  // namespace
}  // namespace stowage::executor
