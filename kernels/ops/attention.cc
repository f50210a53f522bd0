#include "kernels/ops/attention.h"

// GCC 12's AVX-512 reduction intrinsics read a deliberately undefined register.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

namespace evald::kernels {

namespace {

// q . k over n floats, 16 lanes at a time (n a multiple of 16).
__attribute__((target("avx512f"))) inline float DotAvx512(const float* q, const float* k, int n) {
  __m512 acc = _mm512_mul_ps(_mm512_loadu_ps(q), _mm512_loadu_ps(k));
  for (int i = 16; i < n; i += 16)
    acc = _mm512_fmadd_ps(_mm512_loadu_ps(q + i), _mm512_loadu_ps(k + i), acc);
  return _mm512_reduce_add_ps(acc);
}

// out += a * v over n floats (n a multiple of 16).
__attribute__((target("avx512f"))) inline void AxpyAvx512(float a, const float* v, float* out,
                                                          int n) {
  const __m512 av = _mm512_set1_ps(a);
  for (int i = 0; i < n; i += 16)
    _mm512_storeu_ps(out + i,
                     _mm512_fmadd_ps(av, _mm512_loadu_ps(v + i), _mm512_loadu_ps(out + i)));
}

float DotScalar(const float* q, const float* k, int n) {
  float dot = 0;
  for (int i = 0; i < n; ++i) dot += q[i] * k[i];
  return dot;
}

void AxpyScalar(float a, const float* v, float* out, int n) {
  for (int i = 0; i < n; ++i) out[i] += a * v[i];
}

template <typename DotFn, typename AxpyFn>
inline void AttendWith(const AttentionHead& h, const float* q, const float* keys,
                       const float* values, int first, int last, float* scores, float* out,
                       DotFn dot, AxpyFn axpy) {
  float max = -INFINITY;
  for (int t = first; t <= last; ++t) {
    float score = dot(q, keys + t * h.stride, h.head_dim) * h.scale;
    if (h.softcap > 0) score = std::tanh(score / h.softcap) * h.softcap;
    scores[t] = score;
    max = std::max(max, score);
  }
  double sum = 0;
  for (int t = first; t <= last; ++t) {
    scores[t] = std::exp(scores[t] - max);
    sum += scores[t];
  }
  std::fill(out, out + h.head_dim, 0.0f);
  for (int t = first; t <= last; ++t)
    axpy(static_cast<float>(scores[t] / sum), values + t * h.stride, out, h.head_dim);
}

}  // namespace

void Attend(const AttentionHead& head, const float* q, const float* keys, const float* values,
            int first, int last, float* scores, float* out, Isa isa) {
  if (isa == Isa::kAvx512Vnni && head.head_dim % 16 == 0) {
    AttendWith(
        head, q, keys, values, first, last, scores, out,
        [](const float* a, const float* b, int n) { return DotAvx512(a, b, n); },
        [](float a, const float* v, float* o, int n) { AxpyAvx512(a, v, o, n); });
  } else {
    AttendWith(head, q, keys, values, first, last, scores, out, DotScalar, AxpyScalar);
  }
}

}  // namespace evald::kernels
