// Attention over a float KV cache with AVX-512: 16 lanes, 16 scores at a time, a vector exp for
// the softmax numerators, the values weighed for several heads at once (the pieces shared with
// the Q8_0-cache kernels in attention_avx512_parts.h). Equal to the scalar oracle up to
// summation order, 2 ulp in exp and the one division by the sum at the end (the oracle divides
// each numerator).
#include "kernels/ops/attention.h"

#include "kernels/ops/intrinsics_warnings.h"  // before the intrinsics' headers

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <utility>

#include "kernels/ops/attention_avx512_parts.h"
#include "kernels/ops/attention_math.h"

namespace evald::kernels {

namespace {

using namespace attention_avx512;  // NOLINT(build/namespaces): this file's own pieces

// head_dim = 16 L, `heads` <= kMaxAttendGroup query heads over one KV head (grouped-query
// attention). Scores 16 positions at a time: each position's products in one register (L
// multiply-adds), the 16 registers summed lane-wise at once; positions past `last` in the final
// block are zeros, so every score goes through the same additions. Each block of keys is read from
// memory once for all the heads of the group. The numerators by the vector exp, their sum in double
// lanes; then per block of values, the weighted values of several heads at once
// (AddWeightedValues), added to their outputs; the outputs divided by the sums once at the end. A
// head's result does not depend on the others in its group.
template <int L>
EVALD_ATTEND_TARGET void AttendGroupLanes(const AttentionHead& h, int heads, const float* q,
                                          const float* keys, const float* values, int first,
                                          int last, float* scores, float* out) {
  constexpr int kDim = 16 * L;
  const int64_t span = last + 1;  // scores of head g at scores + g * span
  __m512 vmax[kMaxAttendGroup];
  const int from = first + h.scored;  // the scores of [first, from) came with the call
  for (int g = 0; g < heads; ++g) vmax[g] = MaxOfScores(scores + g * span, first, from);
  const float* rows[kBlock];
  BlockRows<L> key_rows(h, keys, from);
  for (int t = from; t <= last; t += kBlock) {
    const int n = key_rows.Next(t, last, rows);
    for (int g = 0; g < heads; ++g) {
      __m512 products[kBlock];
      if constexpr (L > 16) {
        // A query wider than the registers (Gemma 4's 512) goes register by register across the
        // block's rows: each position's chain is the same, its multiply-adds in the same order.
#pragma GCC unroll 16
        for (int j = 0; j < kBlock; ++j) products[j] = _mm512_setzero_ps();
        for (int l = 0; l < L; ++l) {
          const __m512 ql = _mm512_loadu_ps(q + g * kDim + 16 * l);
#pragma GCC unroll 16
          for (int j = 0; j < kBlock; ++j)
            if (j < n)
              products[j] = _mm512_fmadd_ps(ql, _mm512_loadu_ps(rows[j] + 16 * l), products[j]);
        }
      } else {
        __m512 qv[L];
#pragma GCC unroll 16
        for (int l = 0; l < L; ++l) qv[l] = _mm512_loadu_ps(q + g * kDim + 16 * l);
#pragma GCC unroll 16
        for (int j = 0; j < kBlock; ++j) {
          products[j] = _mm512_setzero_ps();
          if (j >= n) continue;
#pragma GCC unroll 16
          for (int l = 0; l < L; ++l)
            products[j] = _mm512_fmadd_ps(qv[l], _mm512_loadu_ps(rows[j] + 16 * l), products[j]);
        }
      }
      StoreScores(h, TransposedSumsBy(products, AddFloats()), n, scores + g * span + t, vmax[g]);
    }
  }
  float inverse[kMaxAttendGroup];
  SoftmaxNumeratorsOfHeads(scores, span, heads, first, last, vmax, inverse);
  for (int i = 0; i < heads * kDim; ++i) out[i] = 0.0f;
  BlockRows<L> value_rows(h, values, first);
  for (int t = first; t <= last; t += kBlock) {
    const int n = value_rows.Next(t, last, rows);
    AddValueBlock<L>(rows, n, scores + t, span, heads, out);
  }
  DivideBySums<L>(heads, inverse, out);
}

// Head sizes up to 256 (Gemma's) in steps of 16, and 512 (Gemma 4's full-attention layers); the
// sizes between have no entry (the scalar path).
constexpr auto kAttendAvx512 = NarrowAndWidestTable<AttendFn, 32>(
    std::make_index_sequence<16>(), [](auto w) { return &AttendGroupLanes<decltype(w)::value>; });

// r[j] (16 rows of 16 floats) transposed in place, except that the result's rows come out with
// bits 0 and 1 of their index swapped: r[j] holds element TransposedRow(j) of every row.
EVALD_ATTEND_TARGET inline void Transpose16(__m512 (&r)[16]) {
  __m512 t[16];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i)
#pragma GCC unroll 2
    for (int k = 0; k < 2; ++k) {
      const __m512d a = _mm512_castps_pd(t[4 * i + k]), b = _mm512_castps_pd(t[4 * i + 2 + k]);
      r[4 * i + k] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
      r[4 * i + 2 + k] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
    }
#pragma GCC unroll 2
  for (int i = 0; i < 2; ++i)
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      t[8 * i + k] = _mm512_shuffle_f32x4(r[8 * i + k], r[8 * i + 4 + k], 0x88);
      t[8 * i + 4 + k] = _mm512_shuffle_f32x4(r[8 * i + k], r[8 * i + 4 + k], 0xDD);
    }
#pragma GCC unroll 8
  for (int k = 0; k < 8; ++k) {
    r[k] = _mm512_shuffle_f32x4(t[k], t[8 + k], 0x88);
    r[8 + k] = _mm512_shuffle_f32x4(t[k], t[8 + k], 0xDD);
  }
}
constexpr int TransposedRow(int j) {
  return (j & ~3) | (j & 1) << 1 | (j >> 1 & 1);
}

// columns[d][j] = element d of rows[j] for the n rows of a block (zeros for j >= n), d < 16 L:
// the block's keys with one position per lane.
template <int L>
EVALD_ATTEND_TARGET inline void TransposeBlock(const float* const* rows, int n,
                                               float (*columns)[kBlock]) {
#pragma GCC unroll 16
  for (int l = 0; l < L; ++l) {
    __m512 r[16];
#pragma GCC unroll 16
    for (int j = 0; j < kBlock; ++j)
      r[j] = j < n ? _mm512_loadu_ps(rows[j] + 16 * l) : _mm512_setzero_ps();
    Transpose16(r);
#pragma GCC unroll 16
    for (int j = 0; j < kBlock; ++j) _mm512_store_ps(columns[16 * l + TransposedRow(j)], r[j]);
  }
}

// From here v is read from its register: GCC would otherwise fold the load of a column into each
// head's multiply-add as a memory operand, reading it once per head; with the query's broadcast
// that is two loads per multiply-add, which held the kernel to one multiply-add a cycle
// (measured: 1.40 -> 1.13 ns per head-position, 160 heads over 800 positions of 64, in L2).
EVALD_ATTEND_TARGET inline void KeepInRegister(__m512& v) {
  __asm__("" : "+v"(v));
}

// Heads whose scores one pass over a transposed block computes: their 8 chains each (16
// registers) beside the column they share.
constexpr int kSharedHeads = 2;

// Half `half` of a block's raw scores for H heads, positions in lanes, added up as
// AttendGroupLanes adds its per-lane products: lane i of that kernel's products is, here, the
// chain a_i = q[i] k[i] + q[16 + i] k[16 + i] + ... (multiply-adds from zero, in that order), and
// TransposedSumsBy adds the 16 chains as ((Q0 + Q1) + (Q2 + Q3)) with the quarters
// Qk = (a_4k + a_4k+2) + (a_4k+1 + a_4k+3); half 0 is Q0 + Q1, half 1 Q2 + Q3.
template <int L, int H>
EVALD_ATTEND_TARGET inline void HalfOfScores(const float* const* q, const float (*columns)[kBlock],
                                             int half, __m512* sums) {
  __m512 a[H][8];
#pragma GCC unroll 8
  for (int g = 0; g < H; ++g)
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) a[g][i] = _mm512_setzero_ps();
#pragma GCC unroll 16
  for (int l = 0; l < L; ++l)
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
      const int d = 16 * l + 8 * half + i;
      __m512 k = _mm512_load_ps(columns[d]);
      KeepInRegister(k);
#pragma GCC unroll 8
      for (int g = 0; g < H; ++g) a[g][i] = _mm512_fmadd_ps(_mm512_set1_ps(q[g][d]), k, a[g][i]);
    }
#pragma GCC unroll 8
  for (int g = 0; g < H; ++g)
    sums[g] = _mm512_add_ps(
        _mm512_add_ps(_mm512_add_ps(a[g][0], a[g][2]), _mm512_add_ps(a[g][1], a[g][3])),
        _mm512_add_ps(_mm512_add_ps(a[g][4], a[g][6]), _mm512_add_ps(a[g][5], a[g][7])));
}

// H heads' scores of a transposed block's n positions from t, stored as AttendGroupLanes stores
// them.
template <int L, int H>
EVALD_ATTEND_TARGET inline void SharedBlockScores(const AttentionHead& h, const float* const* q,
                                                  const float (*columns)[kBlock], int t, int n,
                                                  float* const* scores) {
  __m512 low[H], high[H];
  HalfOfScores<L, H>(q, columns, 0, low);
  HalfOfScores<L, H>(q, columns, 1, high);
#pragma GCC unroll 8
  for (int g = 0; g < H; ++g)
    StoreScaledScores(h, _mm512_add_ps(low[g], high[g]), n, scores[g] + t);
}

// SharedScoresFn for head_dim = 16 L: per block of 16 positions the keys transposed once, then
// kSharedHeads heads at a time.
template <int L>
EVALD_ATTEND_TARGET void SharedScoresLanes(const AttentionHead& h, int heads, const float* const* q,
                                           const float* keys, int first, int last,
                                           float* const* scores) {
  alignas(64) float columns[16 * L][kBlock];
  const float* rows[kBlock];
  BlockRows<L> key_rows(h, keys, first);
  for (int t = first; t <= last; t += kBlock) {
    const int n = key_rows.Next(t, last, rows);
    TransposeBlock<L>(rows, n, columns);
    int g = 0;
    for (; g + kSharedHeads <= heads; g += kSharedHeads)
      SharedBlockScores<L, kSharedHeads>(h, q + g, columns, t, n, scores + g);
    for (; g < heads; ++g) SharedBlockScores<L, 1>(h, q + g, columns, t, n, scores + g);
  }
}

// The head sizes kAttendAvx512 takes in registers.
constexpr auto kSharedScoresAvx512 = NarrowAndWidestTable<SharedScoresFn, 32>(
    std::make_index_sequence<16>(), [](auto w) { return &SharedScoresLanes<decltype(w)::value>; });

}  // namespace

void AttendAvx512(const AttentionHead& head, int heads, const float* q, const float* keys,
                  const float* values, int first, int last, float* scores, float* out) {
  AttendByWidth(kAttendAvx512, 16, head, heads, q, keys, values, first, last, scores, out);
}

void SharedScoresAvx512(const AttentionHead& head, int heads, const float* const* q,
                        const float* keys, int first, int last, float* const* scores) {
  if (!HasKernel(kSharedScoresAvx512, head.head_dim, 16)) {
    SharedScoresScalar(head, heads, q, keys, first, last, scores);
    return;
  }
  kSharedScoresAvx512[static_cast<size_t>(head.head_dim / 16 - 1)](head, heads, q, keys, first,
                                                                   last, scores);
}

}  // namespace evald::kernels
