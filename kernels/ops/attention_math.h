// What the attention kernels of every instruction set share, so that they compute the same.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

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

// `heads` query heads through `kernel` (a vector kernel taking at most kMaxAttendGroup heads,
// AttendFn's form without the cache's block stride) in passes of at most kMaxAttendGroup.
template <typename Kernel, typename Cache>
inline void InHeadPasses(Kernel kernel, const AttentionHead& head, int heads, const float* q,
                         const Cache* keys, const Cache* values, int first, int last, float* scores,
                         float* out) {
  const int64_t span = last + 1;
  for (int g = 0; g < heads; g += kMaxAttendGroup)
    kernel(head, std::min(kMaxAttendGroup, heads - g), q + g * head.head_dim, keys, values, first,
           last, scores + g * span, out + g * head.head_dim);
}

// A kernel table of N entries, entry w - 1 for width w (registers or Q8_0 blocks per head): the
// narrow widths 1 .. sizeof...(I) and the widest, N (Gemma 4's 512-wide heads), none between (the
// caller's fallback path). kernel(std::integral_constant<int, w>{}) names the width-w kernel.
template <typename Fn, size_t N, size_t... I, typename Kernel>
constexpr std::array<Fn, N> NarrowAndWidestTable(std::index_sequence<I...>, Kernel kernel) {
  std::array<Fn, N> table{};
  ((table[I] = kernel(std::integral_constant<int, static_cast<int>(I) + 1>{})), ...);
  table[N - 1] = kernel(std::integral_constant<int, static_cast<int>(N)>{});
  return table;
}

// Whether table (entry w - 1 for heads of w x `width` values) has a kernel for head_dim.
template <typename Fn, size_t N>
inline bool HasKernel(const std::array<Fn, N>& table, int head_dim, int width) {
  const int w = head_dim / width;
  return head_dim % width == 0 && w >= 1 && w <= static_cast<int>(N) &&
         table[static_cast<size_t>(w - 1)] != nullptr;
}

// The heads through table[head_dim / width - 1] (the kernel for that many registers of `width`
// floats, at most kMaxAttendGroup heads a call); a head size the table has no kernel for
// (HasKernel) takes the scalar path.
template <size_t N>
inline void AttendByWidth(const std::array<AttendFn, N>& table, int width,
                          const AttentionHead& head, int heads, const float* q, const float* keys,
                          const float* values, int first, int last, float* scores, float* out) {
  if (!HasKernel(table, head.head_dim, width)) {
    AttendScalar(head, heads, q, keys, values, first, last, scores, out);
    return;
  }
  InHeadPasses(table[static_cast<size_t>(head.head_dim / width - 1)], head, heads, q, keys, values,
               first, last, scores, out);
}

// A vector kernel over a Q8_0 cache for one head size (32 B), taking at most kMaxAttendGroup
// heads (it addresses the cache through AttentionHead's floats, so it takes no block stride).
using AttendQ8_0GroupFn = void (*)(const AttentionHead& head, int heads, const float* q,
                                   const BlockQ8_0* keys, const BlockQ8_0* values, int first,
                                   int last, float* scores, float* out);

// Whether table (of N entries) has a kernel for head_dim = 32 x blocks over a cache it can address
// as AttentionHead's floats / 32 (blocks of block_stride per row). The shared-scores kernels over
// a Q8_0 cache ask the same, so that a head's scores come from the kernel that would compute them.
template <typename Fn, size_t N>
inline bool HasQ8_0Kernel(const std::array<Fn, N>& table, const AttentionHead& head,
                          int64_t block_stride) {
  return HasKernel(table, head.head_dim, kQK) && head.stride == block_stride * kQK &&
         head.prefix_offset % kQK == 0;
}

// The heads through table[head_dim / 32 - 1]; what the table has no kernel for (HasQ8_0Kernel)
// goes to `heads_path` (AttendQ8_0Heads).
template <size_t N>
inline void AttendQ8_0ByBlocks(const std::array<AttendQ8_0GroupFn, N>& table,
                               AttendQ8_0Fn heads_path, const AttentionHead& head, int heads,
                               const float* q, const BlockQ8_0* keys, const BlockQ8_0* values,
                               int64_t block_stride, int first, int last, float* scores,
                               float* out) {
  const int blocks = head.head_dim / kQK;
  if (!HasQ8_0Kernel(table, head, block_stride)) {
    heads_path(head, heads, q, keys, values, block_stride, first, last, scores, out);
    return;
  }
  InHeadPasses(table[static_cast<size_t>(blocks - 1)], head, heads, q, keys, values, first, last,
               scores, out);
}

}  // namespace evald::kernels
