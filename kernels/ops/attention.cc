#include "kernels/ops/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/ops/attention_math.h"
#include "kernels/quant/fp16.h"

namespace evald::kernels {

namespace {

// Position t's score: q . k in order, scaled and capped.
float ScoreOne(const AttentionHead& h, const float* q, const float* keys, int t) {
  const float* k = keys + h.At(t);
  float dot = 0;
  for (int i = 0; i < h.head_dim; ++i) dot += q[i] * k[i];
  return Cap(dot * h.scale, h.softcap);
}

void AttendOne(const AttentionHead& h, const float* q, const float* keys, const float* values,
               int first, int last, float* scores, float* out) {
  float max = -INFINITY;
  for (int t = first; t <= last; ++t) {
    if (t >= first + h.scored) scores[t] = ScoreOne(h, q, keys, t);
    max = std::max(max, scores[t]);
  }
  const double sum = SoftmaxNumerators(scores, first, last, max);
  std::fill(out, out + h.head_dim, 0.0f);
  for (int t = first; t <= last; ++t) {
    const float a = static_cast<float>(scores[t] / sum);
    const float* v = values + h.At(t);
    for (int i = 0; i < h.head_dim; ++i) out[i] += a * v[i];
  }
}

// AttentionHead::At in blocks of a Q8_0 cache (the prefix offset is a whole number of rows).
int64_t BlockAt(const AttentionHead& h, int t, int64_t block_stride) {
  return (t < h.prefix ? h.prefix_offset / kQK : 0) + h.Row(t) * block_stride;
}

}  // namespace

void AttendScalar(const AttentionHead& h, int heads, const float* q, const float* keys,
                  const float* values, int first, int last, float* scores, float* out) {
  for (int g = 0; g < heads; ++g)
    AttendOne(h, q + g * h.head_dim, keys, values, first, last,
              scores + static_cast<int64_t>(g) * (last + 1), out + g * h.head_dim);
}

void SharedScoresScalar(const AttentionHead& h, int heads, const float* const* q, const float* keys,
                        int first, int last, float* const* scores) {
  for (int i = 0; i < heads; ++i)
    for (int t = first; t <= last; ++t) scores[i][t] = ScoreOne(h, q[i], keys, t);
}

float ScoreQ8_0(const AttentionHead& h, const BlockQ8_0* query, const BlockQ8_0* keys,
                int64_t block_stride, int t, BlockDotQ8_0Fn dot) {
  return Cap(dot(keys + BlockAt(h, t, block_stride), query, h.head_dim) * h.scale, h.softcap);
}

void SharedScoresQ8_0ByDot(const AttentionHead& h, int heads, const float* const* q,
                           const BlockQ8_0* keys, int64_t block_stride, int first, int last,
                           float* const* scores, BlockDotQ8_0Fn dot) {
  std::vector<BlockQ8_0> query(static_cast<size_t>(h.head_dim / kQK));
  for (int i = 0; i < heads; ++i) {
    QuantizeRowQ8_0(q[i], query.data(), h.head_dim);
    for (int t = first; t <= last; ++t)
      scores[i][t] = ScoreQ8_0(h, query.data(), keys, block_stride, t, dot);
  }
}

void AttendQ8_0(const AttentionHead& h, const float* q, const BlockQ8_0* keys,
                const BlockQ8_0* values, int64_t block_stride, int first, int last, float* scores,
                float* out, BlockDotQ8_0Fn dot) {
  const int blocks = h.head_dim / kQK;
  thread_local std::vector<BlockQ8_0> query;
  query.resize(static_cast<size_t>(blocks));
  QuantizeRowQ8_0(q, query.data(), h.head_dim);
  float max = -INFINITY;
  for (int t = first; t <= last; ++t) {
    if (t >= first + h.scored) scores[t] = ScoreQ8_0(h, query.data(), keys, block_stride, t, dot);
    max = std::max(max, scores[t]);
  }
  const double sum = SoftmaxNumerators(scores, first, last, max);
  std::fill(out, out + h.head_dim, 0.0f);
  for (int t = first; t <= last; ++t) {
    const float a = static_cast<float>(scores[t] / sum);
    const BlockQ8_0* v = values + BlockAt(h, t, block_stride);
    for (int b = 0; b < blocks; ++b) {
      const float av = a * Fp16ToFp32(v[b].d);
      float* o = out + b * kQK;
      for (int i = 0; i < kQK; ++i) o[i] += av * static_cast<float>(v[b].qs[i]);
    }
  }
}

}  // namespace evald::kernels
