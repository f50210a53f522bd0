// The FFN activation and the vector exp with AVX2 and FMA (8 lanes), for the CPUs without
// AVX-512 (and the AVX2 and AVX-VNNI kernel paths of any CPU). The arithmetic is the AVX-512
// path's, step for step: the same clamp, rounding, range reduction and polynomial, and 2^n
// applied as two exact powers of two (AVX2 has no vscalefps), whose product rounds once as
// vscalefps does, so the results equal the AVX-512 path's bit for bit.
#include "kernels/ops/activations.h"

#include "kernels/ops/intrinsics_warnings.h"  // before the intrinsics' headers

#include <immintrin.h>

#include <limits>

namespace evald::kernels {

namespace {

#define EVALD_EXP_AVX2_TARGET __attribute__((target("avx2,fma")))

// 2^k for integer k in [-75, 64], built in the exponent field (a normal float).
EVALD_EXP_AVX2_TARGET inline __m256 PowerOfTwo(__m256i k) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k, _mm256_set1_epi32(127)), 23));
}

// e^x = 2^n e^r, n = round(x / ln 2), |r| <= ln 2 / 2, e^r by its Taylor series to r^7. After
// the clamp n lies in [-150, 128]; p * 2^n is p * 2^(n/2) * 2^(n - n/2), both factors normal and
// the first product exact (p is near 1), so the one rounding is the second's, into the
// subnormals or to infinity as the float range requires.
EVALD_EXP_AVX2_TARGET inline __m256 Exp8(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-104.0f)), _mm256_set1_ps(89.0f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // ln 2 in two parts so that n * ln2_hi is exact.
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.0f / 5040);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i k = _mm256_cvtps_epi32(n);  // exact: n is an integer in [-150, 128]
  const __m256i half = _mm256_srai_epi32(k, 1);
  return _mm256_mul_ps(_mm256_mul_ps(p, PowerOfTwo(half)), PowerOfTwo(_mm256_sub_epi32(k, half)));
}

// The lanes of an 8-wide step that lie below n (all 8 but at the tail), as a load/store mask.
EVALD_EXP_AVX2_TARGET inline __m256i TailMask(int64_t n) {
  const int lanes = n >= 8 ? 8 : static_cast<int>(n);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(lanes), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

}  // namespace

EVALD_EXP_AVX2_TARGET void RmsNormAvx2(const float* x, const float* w, float* out, int64_t n,
                                       float eps) {
  __m256d acc[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(),
                    _mm256_setzero_pd()};  // lanes 0-3, 4-7, 8-11, 12-15
  for (int64_t i = 0; i + 16 <= n; i += 16) {
    for (int h = 0; h < 2; ++h) {
      const __m256 v = _mm256_loadu_ps(x + i + 8 * h);
      const __m256 squares = _mm256_mul_ps(v, v);
      acc[2 * h] = _mm256_add_pd(acc[2 * h], _mm256_cvtps_pd(_mm256_castps256_ps128(squares)));
      acc[2 * h + 1] =
          _mm256_add_pd(acc[2 * h + 1], _mm256_cvtps_pd(_mm256_extractf128_ps(squares, 1)));
    }
  }
  double lanes[16];
  for (int k = 0; k < 4; ++k) _mm256_storeu_pd(lanes + 4 * k, acc[k]);
  const float s = RmsNormScale(lanes, x, n, eps);
  const __m256 scale = _mm256_set1_ps(s);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 y = _mm256_mul_ps(_mm256_loadu_ps(x + i), scale);
    if (w) y = _mm256_mul_ps(y, _mm256_loadu_ps(w + i));
    _mm256_storeu_ps(out + i, y);
  }
  for (; i < n; ++i) out[i] = w ? x[i] * s * w[i] : x[i] * s;
}

EVALD_EXP_AVX2_TARGET void ExpAvx2(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; i += 8) {
    const __m256i m = TailMask(n - i);
    _mm256_maskstore_ps(y + i, m, Exp8(_mm256_maskload_ps(x + i, m)));
  }
}

// As SoftmaxWeightsAvx512, 8 lanes: lanes past n keep acc by a blend.
EVALD_EXP_AVX2_TARGET float SoftmaxWeightsAvx2(const float* x, float* y, int64_t n, float scale) {
  __m256 acc = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  for (int64_t i = 0; i < n; i += 8) {
    const __m256i k = TailMask(n - i);
    const __m256 v = _mm256_blendv_ps(acc, _mm256_maskload_ps(x + i, k), _mm256_castsi256_ps(k));
    acc = _mm256_max_ps(v, acc);
  }
  __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
  m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
  m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
  const float m = _mm_cvtss_f32(m4);
  const __m256 vm = _mm256_set1_ps(m), vs = _mm256_set1_ps(scale);
  for (int64_t i = 0; i < n; i += 8) {
    const __m256i k = TailMask(n - i);
    const __m256 t = _mm256_mul_ps(_mm256_sub_ps(_mm256_maskload_ps(x + i, k), vm), vs);
    _mm256_maskstore_ps(y + i, k, Exp8(t));
  }
  return m;
}

// Every element, the tail included (masked), goes through the same vector arithmetic, so a
// value does not depend on where it sits (batched vectors are concatenated).
EVALD_EXP_AVX2_TARGET void GatedSiluAvx2(float* gate, const float* up, int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f);
  for (int64_t i = 0; i < n; i += 8) {
    const __m256i m = TailMask(n - i);
    const __m256 g = _mm256_maskload_ps(gate + i, m);
    const __m256 e = Exp8(_mm256_sub_ps(_mm256_setzero_ps(), g));
    _mm256_maskstore_ps(
        gate + i, m,
        _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(one, e)), _mm256_maskload_ps(up + i, m)));
  }
}

}  // namespace evald::kernels
