// What the attention kernels of every instruction set share, so that they compute the same.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kernels/ops/attention.h"

namespace evald::kernels {

// Softmax of scores[first..last] in place (exp(score - max)); returns the sum, in double as the
// scalar oracle and ggml's softmax accumulate it.
inline double SoftmaxNumerators(float* scores, int first, int last, float max) {
  double sum = 0;
  for (int t = first; t <= last; ++t) {
    scores[t] = std::exp(scores[t] - max);
    sum += scores[t];
  }
  return sum;
}

inline float Cap(float score, float softcap) {
  return softcap > 0 ? std::tanh(score / softcap) * softcap : score;
}

// Query heads per pass of the vector kernels (their per-head maxima and sums live in arrays of
// this size).
constexpr int kMaxAttendGroup = 16;

// A vector kernel for one head size, taking at most kMaxAttendGroup heads.
using AttendGroupFn = void (*)(const AttentionHead& head, int heads, const float* q,
                               const float* keys, const float* values, int first, int last,
                               float* scores, float* out);

// The heads through table[head_dim / width - 1] (the kernel for that many registers of `width`
// floats) in passes of at most kMaxAttendGroup; a head size that is not a multiple of `width`
// or is wider than the table takes the scalar path.
template <size_t N>
inline void AttendByWidth(const std::array<AttendGroupFn, N>& table, int width,
                          const AttentionHead& head, int heads, const float* q, const float* keys,
                          const float* values, int first, int last, float* scores, float* out) {
  const int lanes = head.head_dim / width;
  if (head.head_dim % width != 0 || lanes < 1 || lanes > static_cast<int>(N)) {
    AttendScalar(head, heads, q, keys, values, first, last, scores, out);
    return;
  }
  const int64_t span = last + 1;
  for (int g = 0; g < heads; g += kMaxAttendGroup)
    table[static_cast<size_t>(lanes - 1)](head, std::min(kMaxAttendGroup, heads - g),
                                          q + g * head.head_dim, keys, values, first, last,
                                          scores + g * span, out + g * head.head_dim);
}

}  // namespace evald::kernels
