// Attention over a float KV cache with AVX-512: 16 lanes, the query and the output in
// registers for the whole window, a vector exp for the softmax numerators. Equal to the scalar
// oracle up to summation order and 2 ulp in exp.
#include "kernels/ops/attention.h"

#include "kernels/ops/intrinsics_warnings.h"  // before the intrinsics' headers

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "kernels/ops/activations.h"
#include "kernels/ops/attention_math.h"

namespace evald::kernels {

namespace {

// head_dim = 16 L: the query and the output held in L registers each for the whole window.
template <int L>
__attribute__((target("avx512f"))) void AttendLanes(const AttentionHead& h, const float* q,
                                                    const float* keys, const float* values,
                                                    int first, int last, float* scores,
                                                    float* out) {
  __m512 qv[L];
#pragma GCC unroll 16
  for (int l = 0; l < L; ++l) qv[l] = _mm512_loadu_ps(q + 16 * l);
  float max = -INFINITY;
  for (int t = first; t <= last; ++t) {
    const float* k = keys + h.Row(t) * h.stride;
    __m512 acc = _mm512_mul_ps(qv[0], _mm512_loadu_ps(k));
#pragma GCC unroll 16
    for (int l = 1; l < L; ++l) acc = _mm512_fmadd_ps(qv[l], _mm512_loadu_ps(k + 16 * l), acc);
    scores[t] = Cap(_mm512_reduce_add_ps(acc) * h.scale, h.softcap);
    max = std::max(max, scores[t]);
  }
  // The numerators 16 at a time (vector exp), their sum in double as in the scalar path.
  const __m512 vmax = _mm512_set1_ps(max);
  int t = first;
  for (; t + 16 <= last + 1; t += 16)
    _mm512_storeu_ps(scores + t, _mm512_sub_ps(_mm512_loadu_ps(scores + t), vmax));
  for (; t <= last; ++t) scores[t] -= max;
  ExpAvx512(scores + first, scores + first, last - first + 1);
  double sum = 0;
  for (t = first; t <= last; ++t) sum += scores[t];
  __m512 o[L];
#pragma GCC unroll 16
  for (int l = 0; l < L; ++l) o[l] = _mm512_setzero_ps();
  for (t = first; t <= last; ++t) {
    const __m512 a = _mm512_set1_ps(static_cast<float>(scores[t] / sum));
    const float* v = values + h.Row(t) * h.stride;
#pragma GCC unroll 16
    for (int l = 0; l < L; ++l) o[l] = _mm512_fmadd_ps(a, _mm512_loadu_ps(v + 16 * l), o[l]);
  }
#pragma GCC unroll 16
  for (int l = 0; l < L; ++l) _mm512_storeu_ps(out + 16 * l, o[l]);
}

using AttendWidthFn = void (*)(const AttentionHead&, const float*, const float*, const float*, int,
                               int, float*, float*);

template <size_t... I>
constexpr std::array<AttendWidthFn, sizeof...(I)> AttendTable(std::index_sequence<I...>) {
  return {&AttendLanes<static_cast<int>(I) + 1>...};
}

// Head sizes up to 256 (Gemma's), in steps of 16.
constexpr auto kAttendAvx512 = AttendTable(std::make_index_sequence<16>());

}  // namespace

void AttendAvx512(const AttentionHead& head, const float* q, const float* keys, const float* values,
                  int first, int last, float* scores, float* out) {
  const int lanes = head.head_dim / 16;
  if (head.head_dim % 16 == 0 && lanes >= 1 && lanes <= static_cast<int>(kAttendAvx512.size())) {
    kAttendAvx512[static_cast<size_t>(lanes - 1)](head, q, keys, values, first, last, scores, out);
  } else {
    AttendScalar(head, q, keys, values, first, last, scores, out);
  }
}

}  // namespace evald::kernels
