// AVX2 (with FMA and F16C) dot products of quantized weight rows with Q8_0 activations:
// vpmaddubsw needs one unsigned operand, so each pair takes |x| and moves x's sign onto the
// weight. Integer block sums are exact; results equal the scalar oracle up to the order of the
// float accumulation.
#include <immintrin.h>

#include "kernels/ops/dot.h"
#include "kernels/ops/horizontal_sum.h"
#include "kernels/ops/unpack_q4.h"
#include "kernels/quant/fp16.h"
#include "kernels/quant/kquants.h"

#define EVALD_AVX2_TARGET __attribute__((target("avx2,fma,f16c")))

namespace evald::kernels {

namespace {

// Sum of int8 x int8 products in each 32-byte lane group, as 8 int32.
EVALD_AVX2_TARGET inline __m256 MulSumI8(__m256i a, __m256i b) {
  // maddubs needs one unsigned operand: move a's sign onto b.
  const __m256i ax = _mm256_sign_epi8(a, a);
  const __m256i sy = _mm256_sign_epi8(b, a);
  const __m256i dot16 = _mm256_maddubs_epi16(ax, sy);
  const __m256i dot32 = _mm256_madd_epi16(dot16, _mm256_set1_epi16(1));
  return _mm256_cvtepi32_ps(dot32);
}

}  // namespace

EVALD_AVX2_TARGET float DotQ8_0Avx2(const BlockQ8_0* w, const BlockQ8_0* x, int64_t n) {
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQK; ++b) {
    const __m256 d = _mm256_set1_ps(_cvtsh_ss(w[b].d) * _cvtsh_ss(x[b].d));
    const __m256i qw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[b].qs));
    const __m256i qx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].qs));
    acc = _mm256_fmadd_ps(d, MulSumI8(qw, qx), acc);
  }
  return HorizontalSum256(acc);
}

EVALD_AVX2_TARGET float DotQ4_0Avx2(const BlockQ4_0* w, const BlockQ8_0* x, int64_t n) {
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQK; ++b) {
    const __m256 d = _mm256_set1_ps(_cvtsh_ss(w[b].d) * _cvtsh_ss(x[b].d));
    const __m256i qx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].qs));
    acc = _mm256_fmadd_ps(d, MulSumI8(UnpackQ4(w[b].qs), qx), acc);
  }
  return HorizontalSum256(acc);
}

namespace {

// Two int16 scales, the first for the register's low 128 bits (elements 0..15 of a block), the
// second for its high ones (16..31).
EVALD_AVX2_TARGET inline __m256i TwoScales(int lo, int hi) {
  return _mm256_set_m128i(_mm_set1_epi16(static_cast<int16_t>(hi)),
                          _mm_set1_epi16(static_cast<int16_t>(lo)));
}

}  // namespace

EVALD_AVX2_TARGET float DotQ6_KAvx2(const BlockQ6_K* w, const BlockQ8_0* x, int64_t n) {
  const __m256i low4 = _mm256_set1_epi8(0x0F), three = _mm256_set1_epi8(3);
  const __m256i thirty_two = _mm256_set1_epi8(32);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t sb = 0; sb < n / kQK_K; ++sb) {
    const BlockQ6_K& b = w[sb];
    const float d = _cvtsh_ss(b.d);
    for (int half = 0; half < 2; ++half) {
      const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.ql + half * 64));
      const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.ql + half * 64 + 32));
      const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qh + half * 32));
      // Quarter m of the half: nibbles of a (m = 0, 2) or c (1, 3), low (m < 2) or high, with
      // bits 2m and 2m + 1 of h above them; minus 32 gives the signed weight.
      const __m256i nibbles[4] = {_mm256_and_si256(a, low4), _mm256_and_si256(c, low4),
                                  _mm256_and_si256(_mm256_srli_epi16(a, 4), low4),
                                  _mm256_and_si256(_mm256_srli_epi16(c, 4), low4)};
#pragma GCC unroll 4
      for (int m = 0; m < 4; ++m) {
        const __m256i high = _mm256_and_si256(_mm256_srli_epi16(h, 2 * m), three);
        const __m256i q =
            _mm256_sub_epi8(_mm256_or_si256(nibbles[m], _mm256_slli_epi16(high, 4)), thirty_two);
        const BlockQ8_0& xb = x[sb * 8 + half * 4 + m];
        const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb.qs));
        // |x| x (q * sign x): pairs at most 2 x 127 x 32, then the 16-element scales.
        const __m256i pairs =
            _mm256_maddubs_epi16(_mm256_sign_epi8(xv, xv), _mm256_sign_epi8(q, xv));
        const int8_t* sc = b.scales + half * 8 + 2 * m;
        const __m256i sums = _mm256_madd_epi16(pairs, TwoScales(sc[0], sc[1]));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums), _mm256_set1_ps(d * _cvtsh_ss(xb.d)), acc);
      }
    }
  }
  return HorizontalSum256(acc);
}

EVALD_AVX2_TARGET float DotQ4_KAvx2(const BlockQ4_K* w, const BlockQ8_0* x, int64_t n) {
  const __m256i low4 = _mm256_set1_epi8(0x0F), ones8 = _mm256_set1_epi8(1);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t sb = 0; sb < n / kQK_K; ++sb) {
    const BlockQ4_K& b = w[sb];
    const float d = _cvtsh_ss(b.d), dmin = _cvtsh_ss(b.dmin);
    for (int chunk = 0; chunk < 4; ++chunk) {
      const __m256i packed =
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * chunk));
      const __m256i nibbles[2] = {_mm256_and_si256(packed, low4),
                                  _mm256_and_si256(_mm256_srli_epi16(packed, 4), low4)};
#pragma GCC unroll 2
      for (int odd = 0; odd < 2; ++odd) {
        const int k = 2 * chunk + odd;
        uint8_t sc, m;
        Q4_KScaleMin(k, b.scales, &sc, &m);
        const BlockQ8_0& xb = x[sb * 8 + k];
        const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb.qs));
        // Values 0..15 are vpmaddubsw's unsigned operand as they are; the minimum needs the
        // block's sum of x (ones x x).
        const __m256i sums = _mm256_madd_epi16(_mm256_maddubs_epi16(nibbles[odd], xv),
                                               _mm256_set1_epi16(static_cast<int16_t>(sc)));
        const __m256i x_sums = _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, xv),
                                                 _mm256_set1_epi16(static_cast<int16_t>(m)));
        const float dx = _cvtsh_ss(xb.d);
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums), _mm256_set1_ps(d * dx), acc);
        acc = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(x_sums), _mm256_set1_ps(dmin * dx), acc);
      }
    }
  }
  return HorizontalSum256(acc);
}

}  // namespace evald::kernels
