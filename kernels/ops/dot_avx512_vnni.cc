// int8 dot products with AVX-512 VNNI (vpdpbusd: unsigned x signed bytes summed into int32
// lanes), two 32-element blocks per 512-bit register, and one weight row against several
// activation vectors. The integer block sums are exact, so results equal the scalar oracle up
// to the order of the float accumulation.
#include "kernels/ops/intrinsics_warnings.h"  // before the intrinsics' headers

#include <immintrin.h>

#include "kernels/ops/dot.h"
#include "kernels/ops/unpack_q4.h"
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

}  // namespace evald::kernels
