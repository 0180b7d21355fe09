// adam_step: validation, per-step constants, the three inner loops (scalar,
// AVX2, AVX-512F) chosen at run time, and the split over threads. The loops
// are templates over the moments' storage (fp32, or bf16 for
// adam_step_bf16_moments): bf16 moments are widened exactly on load and
// rounded to nearest even on store, around the very same float operations.
//
// Bit-identity across paths rests on three things: every path performs the
// same float operations in the same order (compare update_one with the two
// vector loops line by line); every multiply that feeds an addition is
// written as an explicit fused multiply-add or feeds only the addend of one,
// so no compiler contraction setting (-ffp-contract, -march) can fuse
// differently in one path than in another; and sqrt, division and FMA are
// correctly rounded in scalar code (fmaf), AVX2 and AVX-512 alike (IEEE 754).
// Not to be built with -ffast-math, which gives up all three.
#include "executor/cpu_adam.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <vector>

#include <unistd.h>

#include "executor/adam_update.h"
#include "executor/half_bits.h"

#include "executor/half_simd.h"
#include "executor/piece_workers.h"

namespace stowage::executor {
namespace {

using core::OptimizerKind;
using core::Precision;

// Below this many elements per thread (1.9 MiB of traffic at 30 B each,
// ~0.2 ms at 10 GB/s) starting a thread (~20 us) is not worth it.
constexpr size_t kMinElementsPerThread = size_t{1} << 16;
// The piece threads take from the shared counter: a multiple of 64
// elements (256 B of fp32, 128 B of 16-bit), so with 64-byte aligned arrays
// no two threads share a cache line; large enough that taking one (an
// atomic add) costs nothing next to moving it (1.9 MiB).
constexpr size_t kPiece = size_t{1} << 16;

// The arrays of one contiguous range of parameters. Moment is float for
// fp32 moments, uint16_t for bf16 ones (bit patterns).
template <class Moment>
struct ChunkOf {
  float* master;
  const float* grad;
  Moment* m;
  Moment* v;
  uint16_t* param16;
  size_t n;
  bool stream_copy = false;  // the copy's stores skip the cache (stream_copy_for)
};
using Chunk = ChunkOf<float>;
using Bf16Chunk = ChunkOf<uint16_t>;

template <class Moment>
ChunkOf<Moment> slice(const ChunkOf<Moment>& all, size_t begin, size_t end) {
  uint16_t* param16 = all.param16 == nullptr ? nullptr : all.param16 + begin;  // null: no copy written
  return {all.master + begin, all.grad + begin, all.m + begin, all.v + begin, param16, end - begin,
          all.stream_copy};
}

// A stored moment as fp32 (bf16 widens exactly) and back (bf16: round to
// nearest even, NaN kept NaN; half_bits.h).
inline float load_moment(float x) { return x; }
inline float load_moment(uint16_t bits) { return bf16_value(bits); }
template <class Moment>
inline Moment store_moment(float x) {
  if constexpr (std::is_same_v<Moment, float>)
    return x;
  else
    return bf16_bits(x);
}

// The per-step scalars and the element update are adam_update.h's, which
// the CUDA kernel shares.
using StepConstants = AdamStepConstants;

StepConstants constants_for(const AdamHyper& hyper, int64_t step, float grad_scale) {
  return adam_step_constants(hyper.config, step, grad_scale);
}

// One element of PyTorch's Adam/AdamW (adam_update.h); the vector loops
// below repeat exactly these operations.
template <OptimizerKind kOptimizer>
inline float update_one(const StepConstants& c, float param, float grad, float& m, float& v) {
  return adam_update_one<kOptimizer>(c, param, grad, m, v);
}

// kCopy false: the step alone, no 16-bit copy written (param16 is null);
// the bench measures what the copy costs against it.
template <OptimizerKind kOptimizer, Precision kPrecision, class Moment, bool kCopy>
[[gnu::always_inline]] inline void scalar_loop(const StepConstants& c, const ChunkOf<Moment>& x) {
  for (size_t i = 0; i < x.n; ++i) {
    float m = load_moment(x.m[i]);
    float v = load_moment(x.v[i]);
    const float param = update_one<kOptimizer>(c, x.master[i], x.grad[i], m, v);
    x.m[i] = store_moment<Moment>(m);
    x.v[i] = store_moment<Moment>(v);
    x.master[i] = param;
    if constexpr (kCopy) x.param16[i] = half_bits_of<kPrecision>(param);
  }
}

// The portable path (Isa::kScalar). std::fma is libm's fmaf here: correctly
// rounded everywhere, in software where the CPU has no FMA unit.
template <OptimizerKind kOptimizer, Precision kPrecision, class Moment, bool kCopy>
void run_scalar(const StepConstants& c, const ChunkOf<Moment>& x) {
  scalar_loop<kOptimizer, kPrecision, Moment, kCopy>(c, x);
}

// The bf16-moment roofline (adam_roofline_pass_bf16_moments): the moments'
// bits grow by the gradient's top 16 bits, an integer add as cheap as a
// float one.
inline uint16_t top_bits(float x) { return static_cast<uint16_t>(std::bit_cast<uint32_t>(x) >> 16); }

void roofline_bf16_tail(const Bf16Chunk& x) {
  for (size_t i = 0; i < x.n; ++i) {
    const uint16_t g = top_bits(x.grad[i]);
    x.m[i] = static_cast<uint16_t>(x.m[i] + g);
    x.v[i] = static_cast<uint16_t>(x.v[i] + g);
    x.master[i] += x.grad[i];
    x.param16[i] = top_bits(x.master[i]);
  }
}

template <bool kCopy>
void roofline_scalar(const StepConstants&, const Chunk& x) {
  for (size_t i = 0; i < x.n; ++i) {
    x.m[i] += x.grad[i];
    x.v[i] += x.grad[i];
    x.master[i] += x.grad[i];
    if constexpr (kCopy) x.param16[i] = static_cast<uint16_t>(std::bit_cast<uint32_t>(x.master[i]) >> 16);
  }
}

#if defined(__x86_64__)

// The same loop where std::fma compiles to one instruction, for the vector
// loops' tails. Same bits as run_scalar.
template <OptimizerKind kOptimizer, Precision kPrecision, class Moment, bool kCopy>
__attribute__((target("fma"))) void run_scalar_fma(const StepConstants& c, const ChunkOf<Moment>& x) {
  scalar_loop<kOptimizer, kPrecision, Moment, kCopy>(c, x);
}

// Streamed copies (stream_copy_for): non-temporal stores need an aligned
// address, so the vector loops first run the scalar loop up to one
// (`unaligned_head`; every element is computed alone, so the bits do not
// change), and they are weakly ordered: finish_copy fences them before the
// kernel returns, so the thread that joins this one sees them.
template <class Moment>
size_t unaligned_head(const ChunkOf<Moment>& x, size_t alignment) {
  if (!x.stream_copy) return 0;
  const size_t past = reinterpret_cast<uintptr_t>(x.param16) % alignment;
  return std::min(x.n, past == 0 ? 0 : (alignment - past) / sizeof(uint16_t));
}
__attribute__((target("avx2"))) inline void store_copy_avx2(uint16_t* p, __m128i x, bool stream) {
  if (stream)
    _mm_stream_si128(reinterpret_cast<__m128i*>(p), x);
  else
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), x);
}
__attribute__((target("avx512f"))) inline void store_copy_avx512(uint16_t* p, __m256i x, bool stream) {
  if (stream)
    _mm256_stream_si256(reinterpret_cast<__m256i*>(p), x);
  else
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), x);
}
inline void finish_copy(bool stream) {
  if (stream) _mm_sfence();
}

// 8 moments as fp32, and back (bf16: widened exactly, stored as bf16_avx2 rounds).
__attribute__((target("avx2"))) inline __m256 load_moments_avx2(const float* p) { return _mm256_loadu_ps(p); }
__attribute__((target("avx2,f16c"))) inline __m256 load_moments_avx2(const uint16_t* p) {
  return from_half_avx2<Precision::kBf16>(p);
}
__attribute__((target("avx2"))) inline void store_moments_avx2(float* p, __m256 x) { _mm256_storeu_ps(p, x); }
__attribute__((target("avx2"))) inline void store_moments_avx2(uint16_t* p, __m256 x) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), bf16_avx2(x));
}

template <OptimizerKind kOptimizer, Precision kPrecision, class Moment, bool kCopy>
__attribute__((target("avx2,fma,f16c"))) void run_avx2(const StepConstants& c, const ChunkOf<Moment>& x) {
  const __m256 inv_grad_scale = _mm256_set1_ps(c.inv_grad_scale);
  const __m256 weight_decay = _mm256_set1_ps(c.weight_decay);
  const __m256 lr_weight_decay = _mm256_set1_ps(c.lr_weight_decay);
  const __m256 one_minus_beta1 = _mm256_set1_ps(c.one_minus_beta1);
  const __m256 one_minus_beta2 = _mm256_set1_ps(c.one_minus_beta2);
  const __m256 step_size = _mm256_set1_ps(c.step_size);
  const __m256 sqrt_bc2 = _mm256_set1_ps(c.sqrt_bias_correction2), eps = _mm256_set1_ps(c.eps);
  size_t i = 0;
  if constexpr (kCopy) {
    i = unaligned_head(x, sizeof(__m128i));
    run_scalar_fma<kOptimizer, kPrecision, Moment, kCopy>(c, slice(x, 0, i));
  }
  for (; i + 8 <= x.n; i += 8) {
    const __m256 param = _mm256_loadu_ps(x.master + i);
    __m256 g = _mm256_mul_ps(_mm256_loadu_ps(x.grad + i), inv_grad_scale);
    if constexpr (kOptimizer == OptimizerKind::kAdam) g = _mm256_fmadd_ps(weight_decay, param, g);
    const __m256 m_old = load_moments_avx2(x.m + i), v_old = load_moments_avx2(x.v + i);
    const __m256 m = _mm256_fmadd_ps(one_minus_beta1, _mm256_sub_ps(g, m_old), m_old);
    const __m256 v = _mm256_fmadd_ps(one_minus_beta2, _mm256_fmsub_ps(g, g, v_old), v_old);
    const __m256 denom = _mm256_add_ps(_mm256_div_ps(_mm256_sqrt_ps(v), sqrt_bc2), eps);
    const __m256 ratio = _mm256_div_ps(m, denom);
    __m256 updated;
    if constexpr (kOptimizer == OptimizerKind::kAdam)
      updated = _mm256_fnmadd_ps(step_size, ratio, param);
    else
      updated =
          _mm256_sub_ps(param, _mm256_fmadd_ps(lr_weight_decay, param, _mm256_mul_ps(step_size, ratio)));
    store_moments_avx2(x.m + i, m);
    store_moments_avx2(x.v + i, v);
    _mm256_storeu_ps(x.master + i, updated);
    if constexpr (kCopy) store_copy_avx2(x.param16 + i, to_half_avx2<kPrecision>(updated), x.stream_copy);
  }
  if constexpr (kCopy) finish_copy(x.stream_copy);
  run_scalar_fma<kOptimizer, kPrecision, Moment, kCopy>(c, slice(x, i, x.n));  // the < 8 left over: same bits
}

// 16 moments as fp32, and back (bf16: widened exactly, stored as bf16_avx512 rounds).
__attribute__((target("avx512f"))) inline __m512 load_moments_avx512(const float* p) { return _mm512_loadu_ps(p); }
__attribute__((target("avx512f"))) inline __m512 load_moments_avx512(const uint16_t* p) {
  return from_half_avx512<Precision::kBf16>(p);
}
__attribute__((target("avx512f"))) inline void store_moments_avx512(float* p, __m512 x) { _mm512_storeu_ps(p, x); }
__attribute__((target("avx512f"))) inline void store_moments_avx512(uint16_t* p, __m512 x) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), bf16_avx512(x));
}

template <OptimizerKind kOptimizer, Precision kPrecision, class Moment, bool kCopy>
__attribute__((target("avx512f"))) void run_avx512(const StepConstants& c, const ChunkOf<Moment>& x) {
  const __m512 inv_grad_scale = _mm512_set1_ps(c.inv_grad_scale);
  const __m512 weight_decay = _mm512_set1_ps(c.weight_decay);
  const __m512 lr_weight_decay = _mm512_set1_ps(c.lr_weight_decay);
  const __m512 one_minus_beta1 = _mm512_set1_ps(c.one_minus_beta1);
  const __m512 one_minus_beta2 = _mm512_set1_ps(c.one_minus_beta2);
  const __m512 step_size = _mm512_set1_ps(c.step_size);
  const __m512 sqrt_bc2 = _mm512_set1_ps(c.sqrt_bias_correction2), eps = _mm512_set1_ps(c.eps);
  size_t i = 0;
  if constexpr (kCopy) {
    i = unaligned_head(x, sizeof(__m256i));
    run_scalar_fma<kOptimizer, kPrecision, Moment, kCopy>(c, slice(x, 0, i));
  }
  for (; i + 16 <= x.n; i += 16) {
    const __m512 param = _mm512_loadu_ps(x.master + i);
    __m512 g = _mm512_mul_ps(_mm512_loadu_ps(x.grad + i), inv_grad_scale);
    if constexpr (kOptimizer == OptimizerKind::kAdam) g = _mm512_fmadd_ps(weight_decay, param, g);
    const __m512 m_old = load_moments_avx512(x.m + i), v_old = load_moments_avx512(x.v + i);
    const __m512 m = _mm512_fmadd_ps(one_minus_beta1, _mm512_sub_ps(g, m_old), m_old);
    const __m512 v = _mm512_fmadd_ps(one_minus_beta2, _mm512_fmsub_ps(g, g, v_old), v_old);
    const __m512 denom = _mm512_add_ps(_mm512_div_ps(_mm512_sqrt_ps(v), sqrt_bc2), eps);
    const __m512 ratio = _mm512_div_ps(m, denom);
    __m512 updated;
    if constexpr (kOptimizer == OptimizerKind::kAdam)
      updated = _mm512_fnmadd_ps(step_size, ratio, param);
    else
      updated =
          _mm512_sub_ps(param, _mm512_fmadd_ps(lr_weight_decay, param, _mm512_mul_ps(step_size, ratio)));
    store_moments_avx512(x.m + i, m);
    store_moments_avx512(x.v + i, v);
    _mm512_storeu_ps(x.master + i, updated);
    if constexpr (kCopy) store_copy_avx512(x.param16 + i, to_half_avx512<kPrecision>(updated), x.stream_copy);
  }
  if constexpr (kCopy) finish_copy(x.stream_copy);
  run_scalar_fma<kOptimizer, kPrecision, Moment, kCopy>(c, slice(x, i, x.n));  // the < 16 left over: same bits
}

// The roofline kernels (adam_roofline_pass): Adam's loads and stores, in
// the same order, around one add each; kCopy as for Adam's loops.
template <bool kCopy>
__attribute__((target("avx2"))) void roofline_avx2(const StepConstants&, const Chunk& x) {
  size_t i = 0;
  if constexpr (kCopy) {
    i = unaligned_head(x, sizeof(__m128i));
    roofline_scalar<kCopy>({}, slice(x, 0, i));
  }
  for (; i + 8 <= x.n; i += 8) {
    const __m256 param = _mm256_loadu_ps(x.master + i);
    const __m256 g = _mm256_loadu_ps(x.grad + i);
    const __m256 m = _mm256_add_ps(_mm256_loadu_ps(x.m + i), g);
    const __m256 v = _mm256_add_ps(_mm256_loadu_ps(x.v + i), g);
    const __m256 updated = _mm256_add_ps(param, g);
    _mm256_storeu_ps(x.m + i, m);
    _mm256_storeu_ps(x.v + i, v);
    _mm256_storeu_ps(x.master + i, updated);
    if constexpr (kCopy) {
      const __m256i high = _mm256_srli_epi32(_mm256_castps_si256(updated), 16);
      store_copy_avx2(x.param16 + i,
                      _mm_packus_epi32(_mm256_castsi256_si128(high), _mm256_extracti128_si256(high, 1)),
                      x.stream_copy);
    }
  }
  if constexpr (kCopy) finish_copy(x.stream_copy);
  roofline_scalar<kCopy>({}, slice(x, i, x.n));
}

template <bool kCopy>
__attribute__((target("avx512f"))) void roofline_avx512(const StepConstants& c, const Chunk& x) {
  size_t i = 0;
  if constexpr (kCopy) {
    i = unaligned_head(x, sizeof(__m256i));
    roofline_scalar<kCopy>({}, slice(x, 0, i));
  }
  for (; i + 16 <= x.n; i += 16) {
    const __m512 param = _mm512_loadu_ps(x.master + i);
    const __m512 g = _mm512_loadu_ps(x.grad + i);
    const __m512 m = _mm512_add_ps(_mm512_loadu_ps(x.m + i), g);
    const __m512 v = _mm512_add_ps(_mm512_loadu_ps(x.v + i), g);
    const __m512 updated = _mm512_add_ps(param, g);
    _mm512_storeu_ps(x.m + i, m);
    _mm512_storeu_ps(x.v + i, v);
    _mm512_storeu_ps(x.master + i, updated);
    if constexpr (kCopy)
      store_copy_avx512(x.param16 + i, _mm512_cvtepi32_epi16(_mm512_srli_epi32(_mm512_castps_si512(updated), 16)),
                        x.stream_copy);
  }
  if constexpr (kCopy) finish_copy(x.stream_copy);
  roofline_avx2<kCopy>(c, slice(x, i, x.n));
}

__attribute__((target("avx2"))) inline __m128i top_bits_avx2(__m256 x) {
  const __m256i high = _mm256_srli_epi32(_mm256_castps_si256(x), 16);
  return _mm_packus_epi32(_mm256_castsi256_si128(high), _mm256_extracti128_si256(high, 1));
}

__attribute__((target("avx2"))) void roofline_bf16_avx2(const StepConstants&, const Bf16Chunk& x) {
  size_t i = unaligned_head(x, sizeof(__m128i));
  roofline_bf16_tail(slice(x, 0, i));
  for (; i + 8 <= x.n; i += 8) {
    const __m256 param = _mm256_loadu_ps(x.master + i);
    const __m256 g = _mm256_loadu_ps(x.grad + i);
    const __m128i g16 = top_bits_avx2(g);
    auto* m = reinterpret_cast<__m128i*>(x.m + i);
    auto* v = reinterpret_cast<__m128i*>(x.v + i);
    const __m128i m_new = _mm_add_epi16(_mm_loadu_si128(m), g16);
    const __m128i v_new = _mm_add_epi16(_mm_loadu_si128(v), g16);
    const __m256 updated = _mm256_add_ps(param, g);
    _mm_storeu_si128(m, m_new);
    _mm_storeu_si128(v, v_new);
    _mm256_storeu_ps(x.master + i, updated);
    store_copy_avx2(x.param16 + i, top_bits_avx2(updated), x.stream_copy);
  }
  finish_copy(x.stream_copy);
  roofline_bf16_tail(slice(x, i, x.n));
}

__attribute__((target("avx512f"))) void roofline_bf16_avx512(const StepConstants& c, const Bf16Chunk& x) {
  size_t i = unaligned_head(x, sizeof(__m256i));
  roofline_bf16_tail(slice(x, 0, i));
  for (; i + 16 <= x.n; i += 16) {
    const __m512 param = _mm512_loadu_ps(x.master + i);
    const __m512 g = _mm512_loadu_ps(x.grad + i);
    const __m256i g16 = _mm512_cvtepi32_epi16(_mm512_srli_epi32(_mm512_castps_si512(g), 16));
    auto* m = reinterpret_cast<__m256i*>(x.m + i);
    auto* v = reinterpret_cast<__m256i*>(x.v + i);
    const __m256i m_new = _mm256_add_epi16(_mm256_loadu_si256(m), g16);
    const __m256i v_new = _mm256_add_epi16(_mm256_loadu_si256(v), g16);
    const __m512 updated = _mm512_add_ps(param, g);
    _mm256_storeu_si256(m, m_new);
    _mm256_storeu_si256(v, v_new);
    _mm512_storeu_ps(x.master + i, updated);
    store_copy_avx512(x.param16 + i, _mm512_cvtepi32_epi16(_mm512_srli_epi32(_mm512_castps_si512(updated), 16)),
                        x.stream_copy);
  }
  finish_copy(x.stream_copy);
  roofline_bf16_avx2(c, slice(x, i, x.n));
}

#endif  // __x86_64__

void roofline_bf16_scalar(const StepConstants&, const Bf16Chunk& x) { roofline_bf16_tail(x); }


template <class Moment>
using KernelOf = void (*)(const StepConstants&, const ChunkOf<Moment>&);
using ChunkKernel = KernelOf<float>;

template <OptimizerKind kOptimizer, Precision kPrecision, class Moment, bool kCopy = true>
KernelOf<Moment> kernel_for(Isa isa) {
#if defined(__x86_64__)
  if (isa == Isa::kAvx512) return &run_avx512<kOptimizer, kPrecision, Moment, kCopy>;
  if (isa == Isa::kAvx2) return &run_avx2<kOptimizer, kPrecision, Moment, kCopy>;
#endif
  (void)isa;
  return &run_scalar<kOptimizer, kPrecision, Moment, kCopy>;
}

// `isa` is resolved and supported here. Without a copy the precision does
// not matter (bf16's instance serves).
template <class Moment>
KernelOf<Moment> select_kernel(Isa isa, OptimizerKind optimizer, Precision precision, bool copy) {
  const bool bf16 = precision == Precision::kBf16;
  if (optimizer == OptimizerKind::kAdam) {
    if (!copy) return kernel_for<OptimizerKind::kAdam, Precision::kBf16, Moment, false>(isa);
    return bf16 ? kernel_for<OptimizerKind::kAdam, Precision::kBf16, Moment>(isa)
                : kernel_for<OptimizerKind::kAdam, Precision::kFp16, Moment>(isa);
  }
  if (!copy) return kernel_for<OptimizerKind::kAdamW, Precision::kBf16, Moment, false>(isa);
  return bf16 ? kernel_for<OptimizerKind::kAdamW, Precision::kBf16, Moment>(isa)
              : kernel_for<OptimizerKind::kAdamW, Precision::kFp16, Moment>(isa);
}

// Runs `kernel` over `all` on at most `threads` threads, the calling thread
// one of them, each taking kPiece elements at a time from a shared counter.
// Every element is computed alone, so the split never changes a bit. If a
// thread cannot be started, those that run take its pieces: slower, but the
// same bits and never a half-updated partition.
template <class Moment>
void run_chunks(KernelOf<Moment> kernel, const StepConstants& c, const ChunkOf<Moment>& all, int threads) {
  const size_t by_size = std::max<size_t>(1, all.n / kMinElementsPerThread);
  const size_t workers = std::min(static_cast<size_t>(threads), by_size);
  if (workers <= 1) {
    kernel(c, all);
    return;
  }
  std::atomic<size_t> next{0};
  const auto take_pieces = [&] {
    for (size_t begin = next.fetch_add(kPiece, std::memory_order_relaxed); begin < all.n;
         begin = next.fetch_add(kPiece, std::memory_order_relaxed)) {
      kernel(c, slice(all, begin, std::min(all.n, begin + kPiece)));
    }
  };
  // The kept workers (piece_workers.h); threads of its own when another
  // step holds them.
  if (PieceWorkers::shared().try_run(static_cast<int>(workers) - 1, take_pieces)) return;
  std::vector<std::jthread> started;  // joined (blocking, not spinning) when this returns
  started.reserve(workers - 1);
  for (size_t t = 1; t < workers; ++t) {
    try {
      started.emplace_back(take_pieces);
    } catch (const std::system_error&) {
      break;
    }
  }
  take_pieces();
}

// CopyStores::kAuto's rule (cpu_adam.h): stream when the pass's bytes
// exceed the last-level cache. Where the cache size is unknown, 32 MiB, a
// server's share and more than any desktop's.
size_t last_level_cache_bytes() {
  static const size_t bytes = [] {
    const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    return l3 > 0 ? static_cast<size_t>(l3) : size_t{32} << 20;
  }();
  return bytes;
}

bool stream_copy_for(size_t n, size_t bytes_per_param, const AdamOptions& options) {
  switch (options.copy_stores) {
    case CopyStores::kCached: return false;
    case CopyStores::kStreamed: return true;
    case CopyStores::kAuto: break;
  }
  return n * bytes_per_param > last_level_cache_bytes();
}

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("adam_step: " + what);
}

template <class Moment>
void validate(size_t n, std::span<const float> grad, std::span<Moment> m, std::span<Moment> v,
              std::span<uint16_t> param16, const AdamHyper& hyper, int64_t step, float grad_scale,
              const AdamOptions& options) {
  const auto same = [n](size_t k) { return k == n; };
  require(same(grad.size()) && same(m.size()) && same(v.size()) && (same(param16.size()) || param16.empty()),
          "master, grad, m, v and param16 (unless empty) must have the same length (master has " +
              std::to_string(n) + ")");
  require(step >= 1, "step is 1-based, got " + std::to_string(step));
  require(std::isfinite(grad_scale) && grad_scale > 0, "grad_scale must be positive and finite");
  // The ranges torch.optim.Adam's constructor accepts (NaN fails each test).
  const core::AdamConfig& a = hyper.config;
  require(a.learning_rate >= 0, "learning_rate must be >= 0");
  require(a.eps >= 0, "eps must be >= 0");
  require(a.beta1 >= 0 && a.beta1 < 1, "beta1 must be in [0, 1)");
  require(a.beta2 >= 0 && a.beta2 < 1, "beta2 must be in [0, 1)");
  require(a.weight_decay >= 0, "weight_decay must be >= 0");
  require(options.threads >= 1, "threads must be >= 1, got " + std::to_string(options.threads));
  require(isa_supported(options.isa),
          "this CPU does not support the requested instruction set " + std::string(isa_name(options.isa)));
}

void validate_roofline(size_t n, size_t grad, size_t m, size_t v, size_t param16, const AdamOptions& options) {
  const auto same = [n](size_t k) { return k == n; };
  require(same(grad) && same(m) && same(v) && (same(param16) || param16 == 0),
          "master, grad, m, v and param16 (unless empty) must have the same length (master has " +
              std::to_string(n) + ")");
  require(options.threads >= 1, "threads must be >= 1, got " + std::to_string(options.threads));
  require(isa_supported(options.isa),
          "this CPU does not support the requested instruction set " + std::string(isa_name(options.isa)));
}

}  // namespace

void adam_roofline_pass_bf16_moments(std::span<float> master, std::span<const float> grad,
                                     std::span<uint16_t> m, std::span<uint16_t> v, std::span<uint16_t> param16,
                                     const AdamOptions& options) {
  const size_t n = master.size();
  validate_roofline(n, grad.size(), m.size(), v.size(), param16.size(), options);
  require(param16.size() == n, "the bf16-moment roofline always writes the 16-bit copy");
  const Isa isa = options.isa == Isa::kAuto ? best_isa() : options.isa;
  KernelOf<uint16_t> kernel = &roofline_bf16_scalar;
#if defined(__x86_64__)
  if (isa == Isa::kAvx512) kernel = &roofline_bf16_avx512;
  if (isa == Isa::kAvx2) kernel = &roofline_bf16_avx2;
#endif
  const Bf16Chunk all{master.data(), grad.data(), m.data(), v.data(), param16.data(), n,
                      stream_copy_for(n, kAdamBf16MomentsBytesPerParam, options)};
  run_chunks(kernel, StepConstants{}, all, options.threads);
}

void adam_roofline_pass(std::span<float> master, std::span<const float> grad, std::span<float> m,
                        std::span<float> v, std::span<uint16_t> param16, const AdamOptions& options) {
  const size_t n = master.size();
  validate_roofline(n, grad.size(), m.size(), v.size(), param16.size(), options);
  const Isa isa = options.isa == Isa::kAuto ? best_isa() : options.isa;
  const bool copy = !param16.empty();
  ChunkKernel kernel = copy ? &roofline_scalar<true> : &roofline_scalar<false>;
#if defined(__x86_64__)
  if (isa == Isa::kAvx512) kernel = copy ? &roofline_avx512<true> : &roofline_avx512<false>;
  if (isa == Isa::kAvx2) kernel = copy ? &roofline_avx2<true> : &roofline_avx2<false>;
#endif
  const Chunk all{master.data(), grad.data(), m.data(), v.data(), copy ? param16.data() : nullptr, n,
                  copy && stream_copy_for(n, kAdamBytesPerParam, options)};
  run_chunks(kernel, StepConstants{}, all, options.threads);
}

void adam_step(std::span<float> master, std::span<const float> grad, std::span<float> m, std::span<float> v,
               std::span<uint16_t> param16, core::Precision precision, const AdamHyper& hyper, int64_t step,
               float grad_scale, const AdamOptions& options) {
  validate(master.size(), grad, m, v, param16, hyper, step, grad_scale, options);
  const Isa isa = options.isa == Isa::kAuto ? best_isa() : options.isa;
  const bool copy = !param16.empty();
  const Chunk all{master.data(), grad.data(), m.data(), v.data(), copy ? param16.data() : nullptr, master.size(),
                  copy && stream_copy_for(master.size(), kAdamBytesPerParam, options)};
  run_chunks(select_kernel<float>(isa, hyper.optimizer, precision, copy), constants_for(hyper, step, grad_scale),
             all, options.threads);
}

void adam_step_bf16_moments(std::span<float> master, std::span<const float> grad, std::span<uint16_t> m,
                            std::span<uint16_t> v, std::span<uint16_t> param16, core::Precision precision,
                            const AdamHyper& hyper, int64_t step, float grad_scale, const AdamOptions& options) {
  validate(master.size(), grad, m, v, param16, hyper, step, grad_scale, options);
  const Isa isa = options.isa == Isa::kAuto ? best_isa() : options.isa;
  const bool copy = !param16.empty();
  const Bf16Chunk all{master.data(), grad.data(), m.data(), v.data(), copy ? param16.data() : nullptr,
                      master.size(), copy && stream_copy_for(master.size(), kAdamBf16MomentsBytesPerParam, options)};
  run_chunks(select_kernel<uint16_t>(isa, hyper.optimizer, precision, copy),
             constants_for(hyper, step, grad_scale), all, options.threads);
}

}  // namespace stowage::executor
