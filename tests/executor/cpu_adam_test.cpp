// adam_step against its float64 twin (executor/adam_reference.h) and against
// independent bf16/fp16 roundings; hand-worked single steps for bias
// correction, eps placement and the two kinds of weight decay; bit-identity
// across thread counts and instruction sets; loss scaling; rejected arguments.
#include "executor/cpu_adam.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "executor/adam_reference.h"

namespace stowage::executor {
namespace {

using core::OptimizerKind;
using core::Precision;

constexpr int64_t kSteps = 100;
constexpr Isa kIsas[] = {Isa::kScalar, Isa::kAvx2, Isa::kAvx512};

// SplitMix64's finaliser (Steele, Lea, Flood 2014). Values are pure functions
// of (stream, index), so a test regenerates step t's gradient for any length
// instead of storing 100 arrays.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Uniform in [-1, 1) with 24 random bits, exact in float.
float uniform(uint64_t stream_key, uint64_t i) {
  const auto bits = static_cast<uint32_t>(mix(stream_key ^ i) >> 40);
  return static_cast<float>(bits) * 0x1p-23f - 1.0f;
}

// Initial master weights: uniform in [-1, 1).
std::vector<float> initial_master(size_t n) {
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = uniform(mix(1), i);
  return out;
}

// Gradients: element i at step t is uniform in [-1, 1) times 10^-k(i), k in
// 0..8 fixed per element, so some elements have |g| near eps and the eps
// term matters; all multiplied by the loss scale.
class GradientSource {
 public:
  explicit GradientSource(size_t n) : magnitude_(n) {
    static constexpr float kMagnitude[] = {1, 1e-1f, 1e-2f, 1e-3f, 1e-4f, 1e-5f, 1e-6f, 1e-7f, 1e-8f};
    for (size_t i = 0; i < n; ++i) magnitude_[i] = kMagnitude[mix(i) % 9];
  }
  const std::vector<float>& at(int64_t step, float loss_scale = 1) {
    grad_.resize(magnitude_.size());
    const uint64_t key = mix(1000 + static_cast<uint64_t>(step));
    for (size_t i = 0; i < grad_.size(); ++i) grad_[i] = uniform(key, i) * magnitude_[i] * loss_scale;
    return grad_;
  }

 private:
  std::vector<float> magnitude_;
  std::vector<float> grad_;
};

AdamHyper hyper_for(OptimizerKind optimizer, double weight_decay = 1e-2) {
  // PyTorch's defaults, with weight decay on so both kinds are exercised.
  return {.config = {.learning_rate = 1e-3,
                     .beta1 = 0.9,
                     .beta2 = 0.999,
                     .eps = 1e-8,
                     .weight_decay = weight_decay},
          .optimizer = optimizer};
}

// Independent bf16 rounding: the nearer of the two bf16 neighbours, compared
// in double, ties to the even one; not the kernel's add-and-shift trick.
uint16_t bf16_oracle(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  if (std::isinf(x)) return static_cast<uint16_t>(bits >> 16);
  const uint32_t down = bits & 0xffff0000u;
  const uint32_t up = down + 0x10000u;  // next bf16 away from zero
  const auto value = [](uint32_t b) {   // the all-ones exponent stands for 2^128 here
    const double magnitude =
        (b & 0x7fffffffu) == 0x7f800000u ? 0x1p128 : std::abs(double{std::bit_cast<float>(b)});
    return (b >> 31) != 0 ? -magnitude : magnitude;
  };
  const double to_down = std::abs(double{x} - value(down));
  const double to_up = std::abs(value(up) - double{x});
  if (to_down < to_up) return static_cast<uint16_t>(down >> 16);
  if (to_up < to_down) return static_cast<uint16_t>(up >> 16);
  return static_cast<uint16_t>(((down >> 16) & 1u) == 0 ? down >> 16 : up >> 16);
}

// Independent fp16 rounding: the compiler's _Float16 conversion (libgcc's
// __truncsfhf2 in software, as F16C is not enabled for this file).
uint16_t fp16_oracle(float x) {
  return std::bit_cast<uint16_t>(static_cast<_Float16>(x));
}

bool is_nan16(uint16_t h, Precision precision) {
  return precision == Precision::kBf16 ? (h & 0x7f80u) == 0x7f80u && (h & 0x007fu) != 0
                                       : (h & 0x7c00u) == 0x7c00u && (h & 0x03ffu) != 0;
}

// The first i where param16[i] is not master[i] correctly rounded, or -1.
// A NaN must stay a NaN; its payload and sign carry no meaning.
int64_t first_misrounded(const std::vector<float>& master, const std::vector<uint16_t>& param16,
                         Precision precision) {
  for (size_t i = 0; i < master.size(); ++i) {
    const bool ok =
        std::isnan(master[i])
            ? is_nan16(param16[i], precision)
            : param16[i] == (precision == Precision::kBf16 ? bf16_oracle(master[i]) : fp16_oracle(master[i]));
    if (!ok) return static_cast<int64_t>(i);
  }
  return -1;
}

// Everything adam_step reads and writes for one configuration.
struct Trajectory {
  AdamOptions options;
  Precision precision = Precision::kBf16;
  std::vector<float> master, m, v;
  std::vector<uint16_t> param16;

  Trajectory(size_t n, AdamOptions o, Precision p)
      : options(o), precision(p), master(initial_master(n)), m(n), v(n), param16(n) {}

  void step(const std::vector<float>& grad, const AdamHyper& hyper, int64_t t, float grad_scale = 1) {
    adam_step(master, grad, m, v, param16, precision, hyper, t, grad_scale, options);
  }
};

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](float x, float y) {
           return std::bit_cast<uint32_t>(x) == std::bit_cast<uint32_t>(y);
         });
}

bool same_state(const Trajectory& a, const Trajectory& b) {
  return same_bits(a.master, b.master) && same_bits(a.m, b.m) && same_bits(a.v, b.v) &&
         a.param16 == b.param16;
}

// max_i |got_i - want_i| / max(|want_i|, floor).
double max_relative_error(const std::vector<float>& got, const std::vector<double>& want, double floor) {
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    worst = std::max(worst, std::abs(double{got[i]} - want[i]) / std::max(std::abs(want[i]), floor));
  }
  return worst;
}

std::vector<double> thetas(const std::vector<AdamReferenceState>& state) {
  std::vector<double> out(state.size());
  for (size_t i = 0; i < state.size(); ++i) out[i] = state[i].param;
  return out;
}

std::vector<AdamReferenceState> reference_start(size_t n) {
  std::vector<AdamReferenceState> out(n);
  const std::vector<float> master = initial_master(n);
  for (size_t i = 0; i < n; ++i) out[i].param = master[i];
  return out;
}

// The reference with theta kept in fp32 between steps, as master weights
// are: float64 arithmetic, one rounding to float per step.
void store_as_fp32(std::vector<AdamReferenceState>& state) {
  for (AdamReferenceState& s : state) s.param = static_cast<float>(s.param);
}

// ---------------------------------------------------------------------------
// 100 steps on odd lengths, per instruction set, against the float64 twin.

// Against the twin that stores theta in fp32 between steps (the rounding the
// master itself must undergo), what remains is the kernel's own float32
// arithmetic: each update (<= lr = 1e-3) is off by a few 1e-7 of itself, and
// when theta - update lies that close to a rounding boundary, theta rounds
// the other way by one ulp. Over 100 steps the worst of 10^6 elements gathers
// a handful of such ulps. Measured: 6.0e-7 (Adam), 3.7e-7 (AdamW).
constexpr double kStoredTolerance = 1e-6;
// Against the twin in pure float64, theta's own rounding to fp32 each step
// adds up: 100 independent errors of up to half an ulp spread over
// sqrt(100) * ulp / sqrt(12) = 2.9 ulp, and the largest of 10^6 elements is
// ~5 spreads, ~15 ulp = 1.8e-6 relative for theta just above a power of two.
// Measured: 1.56e-6 (Adam), 1.51e-6 (AdamW), the same as an exact float64
// update stored in fp32 gives. 4e-6 leaves room; the 1e-6 is below
// what fp32 master weights can hold to over 10^6 elements and 100 steps.
constexpr double kExactTolerance = 4e-6;
// theta moves by up to lr per step, 0.1 in 100 steps, and an element that
// shrank keeps the absolute error it gathered when it was larger: relative
// errors are taken against max(|theta|, 0.1), a tenth of the data's scale.
constexpr double kRelativeFloor = 0.1;

// theta after kSteps of the two twins: in pure float64, and stored in fp32
// between steps. Computed once per (n, optimizer) and shared by the three
// instruction sets' tests: the twins cost ~11 ns per element and step, more
// than the kernel runs they check.
struct ReferenceEnd {
  std::vector<double> exact, stored;
};

const ReferenceEnd& reference_end(size_t n, OptimizerKind optimizer) {
  static std::map<std::pair<size_t, OptimizerKind>, ReferenceEnd> cache;
  const auto key = std::make_pair(n, optimizer);
  if (const auto it = cache.find(key); it != cache.end()) return it->second;
  const AdamHyper hyper = hyper_for(optimizer);
  std::vector<AdamReferenceState> exact = reference_start(n);
  std::vector<AdamReferenceState> stored = exact;
  GradientSource grads(n);
  for (int64_t t = 1; t <= kSteps; ++t) {
    adam_reference_step(exact, grads.at(t), hyper, t, 1);
    adam_reference_step(stored, grads.at(t), hyper, t, 1);
    store_as_fp32(stored);
  }
  return cache[key] = ReferenceEnd{thetas(exact), thetas(stored)};
}

struct MatchCase {
  size_t n;
  OptimizerKind optimizer;
  Isa isa;
};

std::string name_of(const MatchCase& c) {
  return std::string(c.optimizer == OptimizerKind::kAdam ? "Adam" : "AdamW") + "_" +
         std::string(isa_name(c.isa)) + "_n" + std::to_string(c.n);
}

void PrintTo(const MatchCase& c, std::ostream* out) {
  *out << name_of(c);
}

std::vector<MatchCase> match_cases() {
  std::vector<MatchCase> out;
  for (const size_t n : {1, 7, 15, 17, 1000003}) {
    for (const OptimizerKind optimizer : {OptimizerKind::kAdam, OptimizerKind::kAdamW}) {
      for (const Isa isa : kIsas) out.push_back({n, optimizer, isa});
    }
  }
  return out;
}

class CpuAdamMatchesReference : public testing::TestWithParam<MatchCase> {};

TEST_P(CpuAdamMatchesReference, OverHundredSteps) {
  const auto [n, optimizer, isa] = GetParam();
  if (!isa_supported(isa)) GTEST_SKIP() << "this CPU lacks " << isa_name(isa);
  const AdamHyper hyper = hyper_for(optimizer);
  // Precision changes only the 16-bit copy, so one run per precision covers
  // both thread counts and both copies.
  Trajectory one_thread(n, {.threads = 1, .isa = isa}, Precision::kBf16);
  Trajectory four_threads(n, {.threads = 4, .isa = isa}, Precision::kFp16);
  GradientSource grads(n);
  for (int64_t t = 1; t <= kSteps; ++t) {
    const std::vector<float>& grad = grads.at(t);
    one_thread.step(grad, hyper, t);
    four_threads.step(grad, hyper, t);
  }
  const ReferenceEnd& reference = reference_end(n, optimizer);
  EXPECT_LE(max_relative_error(one_thread.master, reference.stored, kRelativeFloor), kStoredTolerance);
  EXPECT_LE(max_relative_error(one_thread.master, reference.exact, kRelativeFloor), kExactTolerance);
  EXPECT_TRUE(same_bits(one_thread.master, four_threads.master) && same_bits(one_thread.m, four_threads.m) &&
              same_bits(one_thread.v, four_threads.v))
      << "1 and 4 threads differ";
  EXPECT_EQ(first_misrounded(one_thread.master, one_thread.param16, Precision::kBf16), -1);
  EXPECT_EQ(first_misrounded(four_threads.master, four_threads.param16, Precision::kFp16), -1);
}

INSTANTIATE_TEST_SUITE_P(OddLengths, CpuAdamMatchesReference, testing::ValuesIn(match_cases()),
                         [](const testing::TestParamInfo<MatchCase>& c) { return name_of(c.param); });

// ---------------------------------------------------------------------------
// Bit-identity across instruction sets and thread counts.

TEST(CpuAdam, EveryInstructionSetAndThreadCountGivesTheSameBits) {
  constexpr size_t kN = 200003;  // 3 threads' chunks and a tail of 3 past the last 16
  constexpr int64_t kShortRun = 10;
  for (const OptimizerKind optimizer : {OptimizerKind::kAdam, OptimizerKind::kAdamW}) {
    for (const Precision precision : {Precision::kBf16, Precision::kFp16}) {
      std::vector<Trajectory> runs;
      for (const Isa isa : kIsas) {
        if (!isa_supported(isa)) continue;
        for (const int threads : {1, 3})
          runs.emplace_back(kN, AdamOptions{.threads = threads, .isa = isa}, precision);
      }
      GradientSource grads(kN);
      for (int64_t t = 1; t <= kShortRun; ++t) {
        for (Trajectory& run : runs) run.step(grads.at(t), hyper_for(optimizer), t);
      }
      for (const Trajectory& run : runs) {
        EXPECT_TRUE(same_state(run, runs.front()))
            << isa_name(run.options.isa) << " with " << run.options.threads << " threads differs from scalar";
      }
    }
  }
}

// Without the 16-bit copy (an empty param16) every path leaves master, m and
// v as the step with the copy does, bit for bit, on both moment storages and
// in the roofline pass, and touches no copy: what cpu_adam_bench compares
// the copy's cost against is the same step.
TEST(CpuAdam, WithoutTheCopyMasterAndMomentsGetTheSameBits) {
  constexpr size_t kN = 200003;  // 3 threads' pieces and a tail past the last 16
  const auto bits_equal = [](const auto& a, const auto& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0;
  };
  GradientSource grads(kN);
  for (const Isa isa : kIsas) {
    if (!isa_supported(isa)) continue;
    for (const int threads : {1, 3}) {
      const AdamOptions options{.threads = threads, .isa = isa};
      const std::string where = std::string(isa_name(isa)) + ", " + std::to_string(threads) + " threads";
      std::vector<float> master_a = initial_master(kN), master_b = master_a;
      std::vector<float> m_a(kN, 0), v_a(kN, 0), m_b(kN, 0), v_b(kN, 0);
      std::vector<uint16_t> m16_a(kN, 0), v16_a(kN, 0), m16_b(kN, 0), v16_b(kN, 0);
      std::vector<float> bf_master_a = master_a, bf_master_b = master_a;
      std::vector<uint16_t> copy(kN, 0);
      for (int64_t t = 1; t <= 3; ++t) {
        const std::vector<float> g = grads.at(t);
        for (const OptimizerKind optimizer : {OptimizerKind::kAdam, OptimizerKind::kAdamW}) {
          adam_step(master_a, g, m_a, v_a, copy, Precision::kFp16, hyper_for(optimizer), t, 1, options);
          adam_step(master_b, g, m_b, v_b, {}, Precision::kFp16, hyper_for(optimizer), t, 1, options);
          adam_step_bf16_moments(bf_master_a, g, m16_a, v16_a, copy, Precision::kBf16, hyper_for(optimizer), t,
                                 1, options);
          adam_step_bf16_moments(bf_master_b, g, m16_b, v16_b, {}, Precision::kBf16, hyper_for(optimizer), t, 1,
                                 options);
        }
      }
      EXPECT_TRUE(bits_equal(master_a, master_b) && bits_equal(m_a, m_b) && bits_equal(v_a, v_b)) << where;
      EXPECT_TRUE(bits_equal(bf_master_a, bf_master_b) && bits_equal(m16_a, m16_b) && bits_equal(v16_a, v16_b))
          << where << ", bf16 moments";
      adam_roofline_pass(master_a, grads.at(4), m_a, v_a, copy, options);
      adam_roofline_pass(master_b, grads.at(4), m_b, v_b, {}, options);
      EXPECT_TRUE(bits_equal(master_a, master_b) && bits_equal(m_a, m_b) && bits_equal(v_a, v_b))
          << where << ", roofline";
    }
  }
}

// The copy cached or streamed (non-temporal stores, which need an aligned
// address, after a scalar head up to the first aligned element), 64-byte
// aligned or 2 bytes past that: every way gets the scalar path's bits, from
// every instruction set and thread count, in Adam (both moment storages)
// and the roofline.
TEST(CpuAdam, AStreamedCopyAndACachedOneGetTheSameBits) {
  constexpr size_t kN = 200003;  // 3 threads' pieces and a tail past the last 16
  GradientSource grads(kN);
  const std::vector<float> g = grads.at(1);
  struct Copies {
    std::vector<uint16_t> adam, bf16_moments, roofline;
  };
  // Every pass from the same start, its copy written at `shift` elements
  // past a 64-byte boundary.
  const auto copies = [&](const AdamOptions& options, size_t shift) {
    std::vector<uint16_t> storage(kN + 64);
    auto* base = reinterpret_cast<uint16_t*>((reinterpret_cast<uintptr_t>(storage.data()) + 63) & ~uintptr_t{63});
    const std::span<uint16_t> copy(base + shift, kN);
    Copies out;
    std::vector<float> master = initial_master(kN), m(kN, 0), v(kN, 0);
    adam_step(master, g, m, v, copy, Precision::kBf16, hyper_for(OptimizerKind::kAdamW), 1, 1, options);
    out.adam.assign(copy.begin(), copy.end());
    std::vector<float> bf_master = initial_master(kN);
    std::vector<uint16_t> m16(kN, 0), v16(kN, 0);
    adam_step_bf16_moments(bf_master, g, m16, v16, copy, Precision::kFp16, hyper_for(OptimizerKind::kAdam), 1, 1,
                           options);
    out.bf16_moments.assign(copy.begin(), copy.end());
    adam_roofline_pass(master, g, m, v, copy, options);
    out.roofline.assign(copy.begin(), copy.end());
    return out;
  };
  const Copies expected = copies(AdamOptions{.threads = 1, .isa = Isa::kScalar}, 0);
  for (const Isa isa : kIsas) {
    if (!isa_supported(isa)) continue;
    for (const int threads : {1, 3}) {
      for (const CopyStores stores : {CopyStores::kCached, CopyStores::kStreamed}) {
        for (const size_t shift : {size_t{0}, size_t{1}}) {
          const Copies got = copies(AdamOptions{.threads = threads, .isa = isa, .copy_stores = stores}, shift);
          const std::string where = std::string(isa_name(isa)) + ", " + std::to_string(threads) + " threads, " +
                                    (stores == CopyStores::kCached ? "cached, " : "streamed, ") +
                                    (shift == 0 ? "aligned" : "2 bytes off");
          EXPECT_EQ(got.adam, expected.adam) << where;
          EXPECT_EQ(got.bf16_moments, expected.bf16_moments) << where << ", bf16 moments";
          EXPECT_EQ(got.roofline, expected.roofline) << where << ", roofline";
        }
      }
    }
  }
}

TEST(CpuAdam, ACopyOfTheWrongLengthIsRejectedNotTakenForNone) {
  std::vector<float> master(100, 1), grad(100, 0.5f), m(100, 0), v(100, 0);
  std::vector<uint16_t> short_copy(99, 0);
  EXPECT_THROW(adam_step(master, grad, m, v, short_copy, Precision::kBf16, hyper_for(OptimizerKind::kAdamW), 1, 1,
                         {}),
               std::invalid_argument);
  EXPECT_THROW(adam_roofline_pass(master, grad, m, v, short_copy, {}), std::invalid_argument);
  std::vector<uint16_t> m16(100, 0), v16(100, 0);
  EXPECT_THROW(adam_roofline_pass_bf16_moments(master, grad, m16, v16, {}, {}), std::invalid_argument);
  EXPECT_TRUE(std::ranges::all_of(master, [](float x) { return x == 1; }));  // nothing written
}

// ---------------------------------------------------------------------------
// Hand-worked single steps (lr = 1e-3, betas 0.9 / 0.999, eps = 1e-8, theta = 1, m = v = 0).

struct OneElement {
  std::vector<float> master{1.0f}, m{0.0f}, v{0.0f};
  std::vector<uint16_t> param16{0};
  float step(float grad, const AdamHyper& hyper, int64_t t = 1) {
    const std::vector<float> g{grad};
    adam_step(master, g, m, v, param16, Precision::kBf16, hyper, t, 1, {});
    return master[0];
  }
};

TEST(CpuAdam, BiasCorrectionMakesTheFirstStepLr) {
  // g = 0.5: m = 0.1 * 0.5 = 0.05, v = 0.001 * 0.25 = 2.5e-4. Corrected:
  // m_hat = 0.05 / (1 - 0.9) = 0.5, v_hat = 2.5e-4 / (1 - 0.999) = 0.25, so the
  // step is lr * 0.5 / (0.5 + 1e-8) = 1e-3 and theta = 0.999. Without the
  // correction it would be lr * 0.05 / 0.0158 = 3.2e-3.
  OneElement e;
  EXPECT_NEAR(e.step(0.5f, hyper_for(OptimizerKind::kAdamW, 0)), 0.999, 1e-7);
}

TEST(CpuAdam, EpsIsAddedToTheBiasCorrectedSqrt) {
  // g = 1e-8: m_hat = 1e-8 and sqrt(v_hat) = 1e-8, so the step is
  // lr * 1e-8 / (1e-8 + 1e-8) = 5e-4 and theta = 0.9995. Adding eps to
  // sqrt(v) before the correction (Kingma & Ba's eps-hat form) would give
  // lr * sqrt(1e-3) / 0.1 * 1e-9 / (3.2e-10 + 1e-8) = 3.1e-5.
  OneElement e;
  EXPECT_NEAR(e.step(1e-8f, hyper_for(OptimizerKind::kAdamW, 0)), 0.9995, 1e-7);
}

TEST(CpuAdam, WeightDecayIsL2ForAdamAndDecoupledForAdamW) {
  // g = 0, weight_decay = 0.01. Adam: g becomes 0.01 * theta = 0.01, a full
  // first step of lr: theta = 0.999. AdamW: theta * (1 - lr * 0.01) = 0.99999
  // and m = 0 moves it no further.
  OneElement adam, adamw;
  EXPECT_NEAR(adam.step(0, hyper_for(OptimizerKind::kAdam, 0.01)), 0.999, 1e-7);
  EXPECT_NEAR(adamw.step(0, hyper_for(OptimizerKind::kAdamW, 0.01)), 0.99999, 1e-7);
}

TEST(CpuAdam, StepNumberIsAnInputNotHiddenState) {
  // The same call twice gives the same bits; the same state at step 1 and
  // at step 2 does not (the bias corrections differ: 1 - 0.9 vs 1 - 0.81).
  OneElement first, again, later;
  const AdamHyper hyper = hyper_for(OptimizerKind::kAdamW);
  const float a = first.step(0.5f, hyper, 1);
  EXPECT_EQ(std::bit_cast<uint32_t>(a), std::bit_cast<uint32_t>(again.step(0.5f, hyper, 1)));
  EXPECT_NE(a, later.step(0.5f, hyper, 2));
}

// ---------------------------------------------------------------------------
// Loss scaling.

TEST(CpuAdam, LossScaleIsDividedOutOfFp16Gradients) {
  constexpr size_t kN = 1001;
  constexpr int64_t kShortRun = 20;
  const AdamHyper hyper = hyper_for(OptimizerKind::kAdamW);
  GradientSource grads(kN);
  // A power-of-two scale (what dynamic loss scaling uses) is exact both
  // ways: scaled gradients with scale 1024 give the unscaled run's bits.
  Trajectory unscaled(kN, {}, Precision::kFp16), scaled(kN, {}, Precision::kFp16);
  // Any other scale is one float rounding of 1/scale away: within the
  // stored-theta tolerance of the twin that divides in float64.
  Trajectory thousand(kN, {}, Precision::kFp16);
  std::vector<AdamReferenceState> stored = reference_start(kN);
  for (int64_t t = 1; t <= kShortRun; ++t) {
    unscaled.step(grads.at(t), hyper, t);
    scaled.step(grads.at(t, 1024), hyper, t, 1024);
    const std::vector<float>& by_thousand = grads.at(t, 1000);
    thousand.step(by_thousand, hyper, t, 1000);
    adam_reference_step(stored, by_thousand, hyper, t, 1000);
    store_as_fp32(stored);
  }
  EXPECT_TRUE(same_state(unscaled, scaled));
  EXPECT_LE(max_relative_error(thousand.master, thetas(stored), kRelativeFloor), kStoredTolerance);
  EXPECT_EQ(first_misrounded(thousand.master, thousand.param16, Precision::kFp16), -1);
}

// ---------------------------------------------------------------------------
// The 16-bit copy on every kind of float: with lr = 0 and zero gradients
// the master is left as it is (AdamW: theta - (0 * theta + 0)), so the copy
// shows the conversion alone.

std::vector<float> conversion_cases() {
  std::vector<uint32_t> bits;
  // Every sign, exponent and top 7 significand bits, with low halves at and
  // around bf16's tie (0x8000) and fp16's normal tie (0x1000), and one random.
  for (uint32_t high = 0; high < 0x10000u; ++high) {
    for (const uint32_t low : {0x0000u, 0x0001u, 0x0fffu, 0x1000u, 0x1001u, 0x3000u, 0x7fffu, 0x8000u,
                               0x8001u, 0xffffu, static_cast<uint32_t>(mix(high) & 0xffffu)}) {
      bits.push_back(high << 16 | low);
    }
  }
  // fp16's subnormal range, 2^-25 .. 2^-14, where the tie moves bit by bit.
  for (uint32_t b = 0x33000000u; b <= 0x38800000u; b += 0x3ffu) bits.push_back(b);
  // Around fp16's overflow at 65520 (0x477ff000), every float.
  for (uint32_t b = 0x477fe000u; b <= 0x47800000u; ++b) bits.push_back(b);
  std::vector<float> out;
  for (const uint32_t b : bits) {
    out.push_back(std::bit_cast<float>(b));
    out.push_back(-std::bit_cast<float>(b));
  }
  return out;
}

TEST(CpuAdam, HalfPrecisionCopyIsCorrectlyRounded) {
  const std::vector<float> cases = conversion_cases();
  const AdamHyper frozen{.config = {.learning_rate = 0, .weight_decay = 0},
                         .optimizer = OptimizerKind::kAdamW};
  const std::vector<float> zero(cases.size(), 0.0f);
  for (const Isa isa : kIsas) {
    if (!isa_supported(isa)) continue;
    for (const Precision precision : {Precision::kBf16, Precision::kFp16}) {
      SCOPED_TRACE(std::string(isa_name(isa)) + (precision == Precision::kBf16 ? " bf16" : " fp16"));
      std::vector<float> master = cases, m(cases.size()), v(cases.size());
      std::vector<uint16_t> param16(cases.size());
      adam_step(master, zero, m, v, param16, precision, frozen, 1, 1, {.threads = 2, .isa = isa});
      for (size_t i = 0; i < cases.size(); ++i) {
        if (std::isfinite(cases[i])) {
          ASSERT_EQ(std::bit_cast<uint32_t>(master[i]), std::bit_cast<uint32_t>(cases[i]));
        }
      }
      const int64_t bad = first_misrounded(master, param16, precision);
      EXPECT_EQ(bad, -1) << "first misrounded master bits 0x" << std::hex
                         << (bad < 0 ? 0u : std::bit_cast<uint32_t>(master[static_cast<size_t>(bad)]));
    }
  }
}

// ---------------------------------------------------------------------------
// Rejected arguments: std::invalid_argument (the project has no
// STOWAGE_CHECK yet), and nothing written.

struct Buffers {
  std::vector<float> master{0.5f, -0.25f, 2.0f}, grad{0.1f, 0.2f, 0.3f}, m{0.01f, 0.02f, 0.03f},
      v{1e-4f, 2e-4f, 3e-4f};
  std::vector<uint16_t> param16{7, 8, 9};
  void step(int64_t t, float grad_scale = 1, const AdamHyper& hyper = hyper_for(OptimizerKind::kAdamW),
            AdamOptions options = {}) {
    adam_step(master, grad, m, v, param16, Precision::kBf16, hyper, t, grad_scale, options);
  }
  bool operator==(const Buffers&) const = default;
};

TEST(CpuAdam, RejectsStepZeroAndLeavesEverythingAsItWas) {
  Buffers b;
  const Buffers before = b;
  EXPECT_THROW(b.step(0), std::invalid_argument);  // steps count from 1
  EXPECT_THROW(b.step(-1), std::invalid_argument);
  EXPECT_TRUE(b == before);
}

TEST(CpuAdam, RejectsBadArguments) {
  Buffers b;
  const Buffers before = b;
  for (const float scale : {0.0f, -1.0f, std::numeric_limits<float>::infinity(), std::nanf("")}) {
    EXPECT_THROW(b.step(1, scale), std::invalid_argument) << "grad_scale " << scale;
  }
  const auto with = [](auto change) {
    AdamHyper h = hyper_for(OptimizerKind::kAdam);
    change(h.config);
    return h;
  };
  EXPECT_THROW(b.step(1, 1, with([](core::AdamConfig& c) { c.learning_rate = -1e-3; })),
               std::invalid_argument);
  EXPECT_THROW(b.step(1, 1, with([](core::AdamConfig& c) { c.beta1 = 1; })), std::invalid_argument);
  EXPECT_THROW(b.step(1, 1, with([](core::AdamConfig& c) { c.beta2 = -0.1; })), std::invalid_argument);
  EXPECT_THROW(b.step(1, 1, with([](core::AdamConfig& c) { c.eps = -1e-8; })), std::invalid_argument);
  EXPECT_THROW(b.step(1, 1, with([](core::AdamConfig& c) { c.weight_decay = std::nan(""); })),
               std::invalid_argument);
  EXPECT_THROW(b.step(1, 1, hyper_for(OptimizerKind::kAdamW), {.threads = 0}), std::invalid_argument);
  for (const Isa isa : kIsas) {
    if (!isa_supported(isa)) {
      EXPECT_THROW(b.step(1, 1, hyper_for(OptimizerKind::kAdamW), {.isa = isa}), std::invalid_argument);
    }
  }
  b.grad.pop_back();
  EXPECT_THROW(b.step(1), std::invalid_argument);
  b.grad = before.grad;
  EXPECT_TRUE(b == before);
}

TEST(CpuAdam, AutoPicksTheWidestSupportedInstructionSet) {
  const Isa best = best_isa();
  EXPECT_TRUE(isa_supported(best));
  EXPECT_NE(best, Isa::kAuto);
  if (isa_supported(Isa::kAvx512)) {
    EXPECT_EQ(best, Isa::kAvx512);
  }
}

}  // namespace
}  // namespace stowage::executor
