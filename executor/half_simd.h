// fp32 <-> bf16 / IEEE binary16 on 8 (AVX2 + F16C) and 16 (AVX-512F) lanes:
// the same bits as half_bits.h's scalar functions, for the CPU optimizer's
// fused 16-bit copy (cpu_adam.cpp) and the model's bulk conversions
// (model/half_convert.cpp). Each function carries its own target attribute:
// the build targets baseline x86-64 and callers take these paths only where
// isa.h says the CPU has them.
#pragma once

#if defined(__x86_64__)

#include <cstdint>

// GCC 12's AVX-512 intrinsics trip -Wmaybe-uninitialized on their own
// _mm512_undefined_* placeholders (GCC bug 105593, fixed in GCC 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include "core/training_spec.h"

namespace stowage::executor {

// bf16_bits on 8 lanes; returns the 8 results packed as 16-bit.
__attribute__((target("avx2"))) inline __m128i bf16_avx2(__m256 x) {
  const __m256i bits = _mm256_castps_si256(x);
  const __m256i high = _mm256_srli_epi32(bits, 16);
  const __m256i lsb = _mm256_and_si256(high, _mm256_set1_epi32(1));
  const __m256i biased = _mm256_add_epi32(_mm256_add_epi32(bits, _mm256_set1_epi32(0x7fff)), lsb);
  const __m256i rounded = _mm256_srli_epi32(biased, 16);
  const __m256i quiet_nan = _mm256_or_si256(high, _mm256_set1_epi32(0x40));
  const __m256i is_nan = _mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  const __m256i r = _mm256_blendv_epi8(rounded, quiet_nan, is_nan);
  // Every lane is < 2^16, so unsigned saturation packs without changing it.
  return _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
}

// 8 floats rounded to `kPrecision`'s 16 bits. fp16: VCVTPS2PH, whose
// rounding fp16_bits reproduces.
template <core::Precision kPrecision>
__attribute__((target("avx2,f16c"))) inline __m128i to_half_avx2(__m256 x) {
  if constexpr (kPrecision == core::Precision::kBf16)
    return bf16_avx2(x);
  else
    return _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

// 8 16-bit values widened to fp32, exactly.
template <core::Precision kPrecision>
__attribute__((target("avx2,f16c"))) inline __m256 from_half_avx2(const uint16_t* p) {
  const __m128i half = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  if constexpr (kPrecision == core::Precision::kBf16)
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(half), 16));
  else
    return _mm256_cvtph_ps(half);
}

// bf16_bits on 16 lanes. Not VCVTNEPS2BF16 (AVX512_BF16): it treats
// subnormal inputs as zero, which the scalar path does not.
__attribute__((target("avx512f"))) inline __m256i bf16_avx512(__m512 x) {
  const __m512i bits = _mm512_castps_si512(x);
  const __m512i high = _mm512_srli_epi32(bits, 16);
  const __m512i lsb = _mm512_and_si512(high, _mm512_set1_epi32(1));
  const __m512i biased = _mm512_add_epi32(_mm512_add_epi32(bits, _mm512_set1_epi32(0x7fff)), lsb);
  const __m512i rounded = _mm512_srli_epi32(biased, 16);
  const __m512i quiet_nan = _mm512_or_si512(high, _mm512_set1_epi32(0x40));
  const __mmask16 is_nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  return _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(is_nan, rounded, quiet_nan));
}

template <core::Precision kPrecision>
__attribute__((target("avx512f"))) inline __m256i to_half_avx512(__m512 x) {
  if constexpr (kPrecision == core::Precision::kBf16)
    return bf16_avx512(x);
  else
    return _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

template <core::Precision kPrecision>
__attribute__((target("avx512f"))) inline __m512 from_half_avx512(const uint16_t* p) {
  const __m256i half = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  if constexpr (kPrecision == core::Precision::kBf16)
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(half), 16));
  else
    return _mm512_cvtph_ps(half);
}

}  // namespace stowage::executor

#endif  // __x86_64__
