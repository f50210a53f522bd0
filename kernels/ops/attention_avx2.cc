// Attention over a float KV cache with AVX2 and FMA: 8 lanes, the query and the output held in
// registers through the window where they fit (the compiler keeps the rest of a wide head on
// the stack), the vector exp for the softmax numerators. Equal to the scalar oracle up to
// summation order and 2 ulp in exp.
#include "kernels/ops/attention.h"

#include "kernels/ops/intrinsics_warnings.h"  // before the intrinsics' headers

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "kernels/ops/activations.h"
#include "kernels/ops/attention_math.h"
#include "kernels/ops/horizontal_sum.h"

namespace evald::kernels {

namespace {

#define EVALD_ATTEND_AVX2_TARGET __attribute__((target("avx2,fma,f16c")))

// head_dim = 8 L.
template <int L>
EVALD_ATTEND_AVX2_TARGET void AttendLanes(const AttentionHead& h, const float* q, const float* keys,
                                          const float* values, int first, int last, float* scores,
                                          float* out) {
  __m256 qv[L];
#pragma GCC unroll 32
  for (int l = 0; l < L; ++l) qv[l] = _mm256_loadu_ps(q + 8 * l);
  float max = -INFINITY;
  for (int t = first; t <= last; ++t) {
    const float* k = keys + h.At(t);
    __m256 acc = _mm256_mul_ps(qv[0], _mm256_loadu_ps(k));
#pragma GCC unroll 32
    for (int l = 1; l < L; ++l) acc = _mm256_fmadd_ps(qv[l], _mm256_loadu_ps(k + 8 * l), acc);
    scores[t] = Cap(HorizontalSum256(acc) * h.scale, h.softcap);
    max = std::max(max, scores[t]);
  }
  // The numerators 8 at a time (vector exp), their sum in double as in the scalar path.
  const __m256 vmax = _mm256_set1_ps(max);
  int t = first;
  for (; t + 8 <= last + 1; t += 8)
    _mm256_storeu_ps(scores + t, _mm256_sub_ps(_mm256_loadu_ps(scores + t), vmax));
  for (; t <= last; ++t) scores[t] -= max;
  ExpAvx2(scores + first, scores + first, last - first + 1);
  double sum = 0;
  for (t = first; t <= last; ++t) sum += scores[t];
  __m256 o[L];
#pragma GCC unroll 32
  for (int l = 0; l < L; ++l) o[l] = _mm256_setzero_ps();
  for (t = first; t <= last; ++t) {
    const __m256 a = _mm256_set1_ps(static_cast<float>(scores[t] / sum));
    const float* v = values + h.At(t);
#pragma GCC unroll 32
    for (int l = 0; l < L; ++l) o[l] = _mm256_fmadd_ps(a, _mm256_loadu_ps(v + 8 * l), o[l]);
  }
#pragma GCC unroll 32
  for (int l = 0; l < L; ++l) _mm256_storeu_ps(out + 8 * l, o[l]);
}

using AttendWidthFn = void (*)(const AttentionHead&, const float*, const float*, const float*, int,
                               int, float*, float*);

template <size_t... I>
constexpr std::array<AttendWidthFn, sizeof...(I)> AttendTable(std::index_sequence<I...>) {
  return {&AttendLanes<static_cast<int>(I) + 1>...};
}

// Head sizes up to 256 (Gemma's), in steps of 8.
constexpr auto kAttendAvx2 = AttendTable(std::make_index_sequence<32>());

}  // namespace

void AttendAvx2(const AttentionHead& head, int heads, const float* q, const float* keys,
                const float* values, int first, int last, float* scores, float* out) {
  const int lanes = head.head_dim / 8;
  if (head.head_dim % 8 != 0 || lanes < 1 || lanes > static_cast<int>(kAttendAvx2.size())) {
    AttendScalar(head, heads, q, keys, values, first, last, scores, out);
    return;
  }
  for (int g = 0; g < heads; ++g)
    kAttendAvx2[static_cast<size_t>(lanes - 1)](head, q + g * head.head_dim, keys, values, first,
                                                last, scores + static_cast<int64_t>(g) * (last + 1),
                                                out + g * head.head_dim);
}

}  // namespace evald::kernels
