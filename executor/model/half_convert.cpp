// half_convert.h over the bit manipulations executor/half_bits.h shares with
// the CPU optimizer (scalar) and executor/half_simd.h (8 and 16 lanes).
#include "executor/model/half_convert.h"

#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>

#include "executor/half_bits.h"
#include "executor/half_simd.h"

namespace stowage::executor::model {

uint16_t float_to_bf16(float x) { return bf16_bits(x); }
float bf16_to_float(uint16_t bits) { return bf16_value(bits); }
uint16_t float_to_fp16(float x) { return fp16_bits(x); }
float fp16_to_float(uint16_t bits) { return fp16_value(bits); }

namespace {

using core::Precision;

// Each loop starts at `i` and leaves nothing: the vector loops hand their
// last partial vector to the scalar one.
template <Precision kPrecision>
void narrow_scalar(const float* in, uint16_t* out, size_t i, size_t n) {
  for (; i < n; ++i) out[i] = half_bits_of<kPrecision>(in[i]);
}
template <Precision kPrecision>
void widen_scalar(const uint16_t* in, float* out, size_t i, size_t n) {
  for (; i < n; ++i) out[i] = half_value_of<kPrecision>(in[i]);
}
// A NaN sum becomes the default quiet NaN (half_bits.h's
// sum_or_default_nan, which the CUDA kernel shares); the vector paths blend
// in the same constant.
constexpr int kDefaultNan = 0x7fc00000;

template <Precision kPrecision>
void accumulate_scalar(uint16_t* acc, const uint16_t* add, size_t i, size_t n) {
  for (; i < n; ++i)
    acc[i] = half_bits_of<kPrecision>(sum_or_default_nan(half_value_of<kPrecision>(acc[i]), half_value_of<kPrecision>(add[i])));
}

#if defined(__x86_64__)
template <Precision kPrecision>
__attribute__((target("avx2,f16c"))) void narrow_avx2(const float* in, uint16_t* out, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), to_half_avx2<kPrecision>(_mm256_loadu_ps(in + i)));
  narrow_scalar<kPrecision>(in, out, i, n);
}
template <Precision kPrecision>
__attribute__((target("avx2,f16c"))) void widen_avx2(const uint16_t* in, float* out, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, from_half_avx2<kPrecision>(in + i));
  widen_scalar<kPrecision>(in, out, i, n);
}
template <Precision kPrecision>
__attribute__((target("avx2,f16c"))) void accumulate_avx2(uint16_t* acc, const uint16_t* add, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 sum = _mm256_add_ps(from_half_avx2<kPrecision>(acc + i), from_half_avx2<kPrecision>(add + i));
    sum = _mm256_blendv_ps(sum, _mm256_castsi256_ps(_mm256_set1_epi32(kDefaultNan)),
                           _mm256_cmp_ps(sum, sum, _CMP_UNORD_Q));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(acc + i), to_half_avx2<kPrecision>(sum));
  }
  accumulate_scalar<kPrecision>(acc, add, i, n);
}

template <Precision kPrecision>
__attribute__((target("avx512f"))) void narrow_avx512(const float* in, uint16_t* out, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), to_half_avx512<kPrecision>(_mm512_loadu_ps(in + i)));
  narrow_scalar<kPrecision>(in, out, i, n);
}
template <Precision kPrecision>
__attribute__((target("avx512f"))) void widen_avx512(const uint16_t* in, float* out, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, from_half_avx512<kPrecision>(in + i));
  widen_scalar<kPrecision>(in, out, i, n);
}
template <Precision kPrecision>
__attribute__((target("avx512f"))) void accumulate_avx512(uint16_t* acc, const uint16_t* add, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 sum = _mm512_add_ps(from_half_avx512<kPrecision>(acc + i), from_half_avx512<kPrecision>(add + i));
    sum = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(sum, sum, _CMP_UNORD_Q), sum,
                               _mm512_castsi512_ps(_mm512_set1_epi32(kDefaultNan)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + i), to_half_avx512<kPrecision>(sum));
  }
  accumulate_scalar<kPrecision>(acc, add, i, n);
}
#endif

// kAuto resolved once: CPUID is a trap to the hypervisor on a VM, and these
// run for every compute op.
Isa resolve(Isa isa) {
  static const Isa kBest = best_isa();
  if (isa == Isa::kAuto) return kBest;
  if (!isa_supported(isa))
    throw std::invalid_argument("this CPU does not support the instruction set " + std::string(isa_name(isa)));
  return isa;
}

template <Precision kPrecision>
void narrow(const float* in, uint16_t* out, size_t n, Isa isa) {
#if defined(__x86_64__)
  if (isa == Isa::kAvx512) return narrow_avx512<kPrecision>(in, out, n);
  if (isa == Isa::kAvx2) return narrow_avx2<kPrecision>(in, out, n);
#endif
  narrow_scalar<kPrecision>(in, out, 0, n);
}
template <Precision kPrecision>
void widen(const uint16_t* in, float* out, size_t n, Isa isa) {
#if defined(__x86_64__)
  if (isa == Isa::kAvx512) return widen_avx512<kPrecision>(in, out, n);
  if (isa == Isa::kAvx2) return widen_avx2<kPrecision>(in, out, n);
#endif
  widen_scalar<kPrecision>(in, out, 0, n);
}
template <Precision kPrecision>
void accumulate(uint16_t* acc, const uint16_t* add, size_t n, Isa isa) {
#if defined(__x86_64__)
  if (isa == Isa::kAvx512) return accumulate_avx512<kPrecision>(acc, add, n);
  if (isa == Isa::kAvx2) return accumulate_avx2<kPrecision>(acc, add, n);
#endif
  accumulate_scalar<kPrecision>(acc, add, 0, n);
}

void require_same_length(size_t a, size_t b, const char* what) {
  if (a != b) throw std::invalid_argument(std::string(what) + ": input and output lengths differ");
}

}  // namespace

void to_half(Precision precision, std::span<const float> in, std::span<uint16_t> out, Isa isa) {
  require_same_length(in.size(), out.size(), "to_half");
  isa = resolve(isa);
  if (precision == Precision::kBf16)
    narrow<Precision::kBf16>(in.data(), out.data(), in.size(), isa);
  else
    narrow<Precision::kFp16>(in.data(), out.data(), in.size(), isa);
}

void from_half(Precision precision, std::span<const uint16_t> in, std::span<float> out, Isa isa) {
  require_same_length(in.size(), out.size(), "from_half");
  isa = resolve(isa);
  if (precision == Precision::kBf16)
    widen<Precision::kBf16>(in.data(), out.data(), in.size(), isa);
  else
    widen<Precision::kFp16>(in.data(), out.data(), in.size(), isa);
}

void accumulate_half(Precision precision, std::span<uint16_t> acc, std::span<const uint16_t> add, Isa isa) {
  require_same_length(add.size(), acc.size(), "accumulate_half");
  isa = resolve(isa);
  if (precision == Precision::kBf16)
    accumulate<Precision::kBf16>(acc.data(), add.data(), acc.size(), isa);
  else
    accumulate<Precision::kFp16>(acc.data(), add.data(), acc.size(), isa);
}

}  // namespace stowage::executor::model
