// int8 dot products with VNNI (vpdpbusd: unsigned x signed bytes summed into int32 lanes).
// AVX-512 VNNI handles two 32-element blocks per 512-bit register; AVX-VNNI one per 256 bits.
// The integer block sums are exact, so results equal the scalar oracle up to the order of the
// float accumulation.
// GCC 12's AVX-512 headers build some intrinsics from _mm512_undefined_*(), which its
// uninitialized-value warnings then report inside the headers (a known false positive).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <immintrin.h>

#include "kernels/ops/dot.h"
#include "kernels/ops/horizontal_sum.h"
#include "kernels/quant/fp16.h"

namespace evald::kernels {

namespace {

__attribute__((target("avx512f,avx512bw,avx512vnni,f16c"))) inline __m512i DotBytes512(__m512i a,
                                                                                       __m512i b) {
  // dpbusd wants an unsigned left operand: |a|, with a's sign moved onto b.
  const __mmask64 neg = _mm512_movepi8_mask(a);
  const __m512i abs_a = _mm512_abs_epi8(a);
  const __m512i signed_b = _mm512_mask_sub_epi8(b, neg, _mm512_setzero_si512(), b);
  return _mm512_dpbusd_epi32(_mm512_setzero_si512(), abs_a, signed_b);
}

__attribute__((target("avx2,avxvnni,f16c"))) inline __m256i DotBytes256(__m256i a, __m256i b) {
  const __m256i abs_a = _mm256_sign_epi8(a, a);
  const __m256i signed_b = _mm256_sign_epi8(b, a);
  return _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), abs_a, signed_b);
}

// Expands a Q4_0 block's 16 packed bytes to 32 signed values (low nibbles first).
__attribute__((target("avx2,f16c"))) inline __m256i UnpackQ4(const uint8_t* qs) {
  const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m256i both = _mm256_set_m128i(_mm_srli_epi16(packed, 4), packed);
  return _mm256_sub_epi8(_mm256_and_si256(both, _mm256_set1_epi8(0x0F)), _mm256_set1_epi8(8));
}

}  // namespace

namespace {

// Blocks b and b + 1 of a weight row as 64 signed bytes, and their scales.
template <bool kQ4>
__attribute__((target("avx512f,avx512bw,avx512vnni,avx2,f16c"))) inline __m512i WeightPair(
    const void* w_row, int64_t b, float* d0, float* d1) {
  if constexpr (kQ4) {
    const BlockQ4_0* w = static_cast<const BlockQ4_0*>(w_row);
    *d0 = _cvtsh_ss(w[b].d);
    *d1 = _cvtsh_ss(w[b + 1].d);
    return _mm512_inserti64x4(_mm512_castsi256_si512(UnpackQ4(w[b].qs)), UnpackQ4(w[b + 1].qs), 1);
  } else {
    const BlockQ8_0* w = static_cast<const BlockQ8_0*>(w_row);
    *d0 = _cvtsh_ss(w[b].d);
    *d1 = _cvtsh_ss(w[b + 1].d);
    return _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[b].qs))),
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[b + 1].qs)), 1);
  }
}

// Blocks b and b + 1 of a Q8_0 activation vector as 64 signed bytes.
__attribute__((target("avx512f,avx512bw,avx512vnni,avx2,f16c"))) inline __m512i ActivationPair(
    const BlockQ8_0* x, int64_t b) {
  return _mm512_inserti64x4(
      _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].qs))),
      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b + 1].qs)), 1);
}

// An odd last block, as the scalar oracle computes it.
template <bool kQ4>
float TailBlock(const void* w_row, const BlockQ8_0* x, int64_t b) {
  if constexpr (kQ4) {
    return DotQ4_0Scalar(static_cast<const BlockQ4_0*>(w_row) + b, x + b, kQK);
  } else {
    return DotQ8_0Scalar(static_cast<const BlockQ8_0*>(w_row) + b, x + b, kQK);
  }
}

template <bool kQ4>
__attribute__((target("avx512f,avx512bw,avx512vnni,avx2,f16c"))) float DotAvx512Vnni(
    const void* w_row, const BlockQ8_0* x, int64_t n) {
  const int64_t blocks = n / kQK;
  __m512 acc = _mm512_setzero_ps();
  int64_t b = 0;
  for (; b + 1 < blocks; b += 2) {
    float dw0, dw1;
    const __m512i qw = WeightPair<kQ4>(w_row, b, &dw0, &dw1);
    const __m512i qx = ActivationPair(x, b);
    const float d0 = dw0 * _cvtsh_ss(x[b].d);
    const float d1 = dw1 * _cvtsh_ss(x[b + 1].d);
    const __m512 d = _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(d0), _mm512_set1_ps(d1));
    acc = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(DotBytes512(qw, qx)), acc);
  }
  float sum = _mm512_reduce_add_ps(acc);
  if (b < blocks) sum += TailBlock<kQ4>(w_row, x, b);
  return sum;
}

}  // namespace

float DotQ8_0Avx512Vnni(const BlockQ8_0* w, const BlockQ8_0* x, int64_t n) {
  return DotAvx512Vnni<false>(w, x, n);
}

float DotQ4_0Avx512Vnni(const BlockQ4_0* w, const BlockQ8_0* x, int64_t n) {
  return DotAvx512Vnni<true>(w, x, n);
}

// Several activation vectors against one weight row: the weights are loaded (and, for Q4_0,
// unpacked) once per block pair for all of them. Per vector the operations and their order are
// those of the single-vector kernels above, so the results are bit-identical to them.
template <bool kQ4>
__attribute__((target("avx512f,avx512bw,avx512vnni,avx2,f16c"))) void DotMultiAvx512Vnni(
    const void* w_row, const BlockQ8_0* const* xs, const float* const* x_scales, int nv, int64_t n,
    float* out) {
  constexpr int kMax = 8;
  const int64_t blocks = n / kQK;
  __m512 acc[kMax];
  for (int v = 0; v < nv; ++v) acc[v] = _mm512_setzero_ps();
  int64_t b = 0;
  for (; b + 1 < blocks; b += 2) {
    float dw0, dw1;
    const __m512i qw = WeightPair<kQ4>(w_row, b, &dw0, &dw1);
    const __mmask64 w_negative = _mm512_movepi8_mask(qw);
    const __m512i w_abs = _mm512_abs_epi8(qw);
    for (int v = 0; v < nv; ++v) {
      const __m512i qx = ActivationPair(xs[v], b);
      const float d0 = dw0 * x_scales[v][b];
      const float d1 = dw1 * x_scales[v][b + 1];
      const __m512 d = _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(d0), _mm512_set1_ps(d1));
      // DotBytes512(qw, qx) with the weight-only half hoisted out of the vector loop.
      const __m512i signed_x = _mm512_mask_sub_epi8(qx, w_negative, _mm512_setzero_si512(), qx);
      const __m512i dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), w_abs, signed_x);
      acc[v] = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(dot), acc[v]);
    }
  }
  for (int v = 0; v < nv; ++v) {
    float sum = _mm512_reduce_add_ps(acc[v]);
    if (b < blocks) sum += TailBlock<kQ4>(w_row, xs[v], b);  // as the single-vector kernel
    out[v] = sum;
  }
}

void DotQ4_0MultiAvx512Vnni(const BlockQ4_0* w, const BlockQ8_0* const* xs,
                            const float* const* x_scales, int nv, int64_t n, float* out) {
  DotMultiAvx512Vnni<true>(w, xs, x_scales, nv, n, out);
}

void DotQ8_0MultiAvx512Vnni(const BlockQ8_0* w, const BlockQ8_0* const* xs,
                            const float* const* x_scales, int nv, int64_t n, float* out) {
  DotMultiAvx512Vnni<false>(w, xs, x_scales, nv, n, out);
}

__attribute__((target("avx2,avxvnni,fma,f16c"))) float DotQ8_0AvxVnni(const BlockQ8_0* w,
                                                                      const BlockQ8_0* x,
                                                                      int64_t n) {
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQK; ++b) {
    const __m256 d = _mm256_set1_ps(_cvtsh_ss(w[b].d) * _cvtsh_ss(x[b].d));
    const __m256i qw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[b].qs));
    const __m256i qx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].qs));
    acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(DotBytes256(qw, qx)), acc);
  }
  return HorizontalSum256(acc);
}

__attribute__((target("avx2,avxvnni,fma,f16c"))) float DotQ4_0AvxVnni(const BlockQ4_0* w,
                                                                      const BlockQ8_0* x,
                                                                      int64_t n) {
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQK; ++b) {
    const __m256 d = _mm256_set1_ps(_cvtsh_ss(w[b].d) * _cvtsh_ss(x[b].d));
    const __m256i qx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].qs));
    acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(DotBytes256(UnpackQ4(w[b].qs), qx)), acc);
  }
  return HorizontalSum256(acc);
}

}  // namespace evald::kernels
