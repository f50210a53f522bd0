#include "kernels/ops/activations.h"

#include "kernels/ops/intrinsics_warnings.h"  // before the intrinsics' headers

#include <immintrin.h>

#include <limits>

namespace evald::kernels {

namespace {

#define EVALD_EXP_TARGET __attribute__((target("avx512f")))

// The lanes of a 16-wide step that lie below n (all 16 but at the tail).
inline __mmask16 TailMask(int64_t n) {
  return n >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << n) - 1);
}

// e^x = 2^n e^r with n = round(x / ln 2) and |r| <= ln 2 / 2; e^r by its Taylor series to r^7
// (the remainder, r^8 / 8!, is below 1e-8 relative); 2^n applied by vscalefps, which also
// saturates to 0 and infinity outside the float range.
EVALD_EXP_TARGET inline __m512 Exp16(__m512 x) {
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-104.0f)), _mm512_set1_ps(89.0f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // ln 2 in two parts so that n * ln2_hi is exact.
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.0f / 5040);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

}  // namespace

EVALD_EXP_TARGET void RmsNormAvx512(const float* x, const float* w, float* out, int64_t n,
                                    float eps) {
  __m512d low = _mm512_setzero_pd(), high = _mm512_setzero_pd();  // lanes 0-7 and 8-15
  for (int64_t i = 0; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    const __m512 squares = _mm512_mul_ps(v, v);
    low = _mm512_add_pd(low, _mm512_cvtps_pd(_mm512_castps512_ps256(squares)));
    high = _mm512_add_pd(
        high,
        _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(squares), 1))));
  }
  double lanes[16];
  _mm512_storeu_pd(lanes, low);
  _mm512_storeu_pd(lanes + 8, high);
  const __m512 scale = _mm512_set1_ps(RmsNormScale(lanes, x, n, eps));
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = TailMask(n - i);
    __m512 y = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), scale);
    if (w) y = _mm512_mul_ps(y, _mm512_maskz_loadu_ps(m, w + i));
    _mm512_mask_storeu_ps(out + i, m, y);
  }
}

EVALD_EXP_TARGET void ExpAvx512(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = TailMask(n - i);
    _mm512_mask_storeu_ps(y + i, m, Exp16(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

// vmaxps returns its second operand where either is NaN: max(x, acc) leaves a NaN x out. Lanes
// past n keep acc. A NaN's (x - m) x scale is clamped to -104 inside Exp16, whose e^ is 0.
EVALD_EXP_TARGET float SoftmaxWeightsAvx512(const float* x, float* y, int64_t n, float scale) {
  __m512 acc = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  for (int64_t i = 0; i < n; i += 16)
    acc = _mm512_max_ps(_mm512_mask_loadu_ps(acc, TailMask(n - i), x + i), acc);
  const float m = _mm512_reduce_max_ps(acc);
  const __m512 vm = _mm512_set1_ps(m), vs = _mm512_set1_ps(scale);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = TailMask(n - i);
    const __m512 t = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), vm), vs);
    _mm512_mask_storeu_ps(y + i, k, Exp16(t));
  }
  return m;
}

// Every element, the tail included (masked), goes through the same vector arithmetic, so a
// value does not depend on where it sits (batched vectors are concatenated).
EVALD_EXP_TARGET void GatedSiluAvx512(float* gate, const float* up, int64_t n) {
  const __m512 one = _mm512_set1_ps(1.0f);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = TailMask(n - i);
    const __m512 g = _mm512_maskz_loadu_ps(m, gate + i);
    const __m512 e = Exp16(_mm512_sub_ps(_mm512_setzero_ps(), g));
    _mm512_mask_storeu_ps(
        gate + i, m,
        _mm512_mul_ps(_mm512_div_ps(g, _mm512_add_ps(one, e)), _mm512_maskz_loadu_ps(m, up + i)));
  }
}

}  // namespace evald::kernels
