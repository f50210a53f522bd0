// Dot products of K-quant weight rows (Q4_K, Q6_K) with activations quantized to Q8_0, as
// integer sums per 32-element block: a K-quant super-block of 256 is eight Q8_0 blocks, and its
// sub-block scales line up with them (Q4_K: one scale and minimum per 32; Q6_K: one scale per
// 16). This is how ggml multiplies them (there against Q8_K activations, one float scale per
// 256), instead of dequantizing every row to floats for every token, which took ~3 ns per
// weight here: 200 ms per token for a 32000 x 2048 output matrix alone.
#include <immintrin.h>

#include "kernels/ops/dot.h"
#include "kernels/ops/horizontal_sum.h"
#include "kernels/quant/fp16.h"
#include "kernels/quant/kquants.h"

namespace evald::kernels {

namespace {

// Q6_K's 6-bit value of element i (0..255) of a super-block, 0..63 (the weight is value - 32).
int Q6Value(const BlockQ6_K& b, int i) {
  const int half = i / 128, l = i % 32, quarter = (i % 128) / 32;
  const uint8_t low = b.ql[half * 64 + (quarter & 1) * 32 + l];
  const int nibble = quarter < 2 ? (low & 0x0F) : (low >> 4);
  const int high = (b.qh[half * 32 + l] >> (2 * quarter)) & 3;
  return nibble | (high << 4);
}

// Q6_K's scale of element i: one per 16 elements, in the order of the elements.
int Q6Scale(const BlockQ6_K& b, int i) {
  const int half = i / 128, l = i % 32, quarter = (i % 128) / 32;
  return b.scales[half * 8 + 2 * quarter + l / 16];
}

}  // namespace

float DotQ6_KScalar(const BlockQ6_K* w, const BlockQ8_0* x, int64_t n) {
  float sum = 0;
  for (int64_t sb = 0; sb < n / kQK_K; ++sb) {
    const float d = Fp16ToFp32(w[sb].d);
    for (int k = 0; k < kQK_K / kQK; ++k) {
      const BlockQ8_0& xb = x[sb * (kQK_K / kQK) + k];
      int32_t s = 0;
      for (int l = 0; l < kQK; ++l) {
        const int i = k * kQK + l;
        s += Q6Scale(w[sb], i) * (Q6Value(w[sb], i) - 32) * xb.qs[l];
      }
      sum += static_cast<float>(s) * (d * Fp16ToFp32(xb.d));
    }
  }
  return sum;
}

float DotQ4_KScalar(const BlockQ4_K* w, const BlockQ8_0* x, int64_t n) {
  float sum = 0;
  for (int64_t sb = 0; sb < n / kQK_K; ++sb) {
    const float d = Fp16ToFp32(w[sb].d), dmin = Fp16ToFp32(w[sb].dmin);
    for (int k = 0; k < kQK_K / kQK; ++k) {
      const BlockQ8_0& xb = x[sb * (kQK_K / kQK) + k];
      uint8_t sc, m;
      Q4_KScaleMin(k, w[sb].scales, &sc, &m);
      // Sub-block k: chunk k / 2 of 32 bytes, low nibbles for even k, high ones for odd k.
      const uint8_t* q = w[sb].qs + 32 * (k / 2);
      int32_t s = 0, xs = 0;
      for (int l = 0; l < kQK; ++l) {
        s += (k % 2 ? q[l] >> 4 : q[l] & 0x0F) * xb.qs[l];
        xs += xb.qs[l];
      }
      const float dx = Fp16ToFp32(xb.d);
      sum += static_cast<float>(s * sc) * (d * dx) - static_cast<float>(xs * m) * (dmin * dx);
    }
  }
  return sum;
}

namespace {

#define EVALD_AVX2_TARGET __attribute__((target("avx2,fma,f16c")))

// Two int16 scales, the first for the register's low 128 bits (elements 0..15 of a block), the
// second for its high ones (16..31).
EVALD_AVX2_TARGET inline __m256i TwoScales(int lo, int hi) {
  return _mm256_set_m128i(_mm_set1_epi16(static_cast<int16_t>(hi)),
                          _mm_set1_epi16(static_cast<int16_t>(lo)));
}

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

}  // namespace

float DotQ6_K(const BlockQ6_K* w, const BlockQ8_0* x, int64_t n, Isa isa) {
  return isa == Isa::kScalar ? DotQ6_KScalar(w, x, n) : DotQ6_KAvx2(w, x, n);
}

float DotQ4_K(const BlockQ4_K* w, const BlockQ8_0* x, int64_t n, Isa isa) {
  return isa == Isa::kScalar ? DotQ4_KScalar(w, x, n) : DotQ4_KAvx2(w, x, n);
}

}  // namespace evald::kernels
