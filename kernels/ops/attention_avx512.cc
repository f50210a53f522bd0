// Attention over a float KV cache, and over a Q8_0 one, with AVX-512: 16 lanes, 16 scores at a
// time, a vector exp for the softmax numerators, the values weighed for several heads at once.
// Equal to the scalar oracle up to summation order, 2 ulp in exp and the one division by the
// sum at the end (the oracle divides each numerator).
#include "kernels/ops/attention.h"

#include "kernels/ops/intrinsics_warnings.h"  // before the intrinsics' headers

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/ops/activations.h"
#include "kernels/ops/attention_math.h"
#include "kernels/ops/dot.h"
#include "kernels/ops/packed_activations.h"
#include "kernels/quant/blocks.h"
#include "kernels/quant/fp16.h"

namespace evald::kernels {

namespace {

#define EVALD_ATTEND_TARGET __attribute__((target("avx512f,avx512dq,avx512bw,f16c")))
// The Q8_0 shared scores' vpdpbusd (the table they are in is AVX-512 VNNI's).
#define EVALD_ATTEND_VNNI_TARGET \
  __attribute__((target("avx512f,avx512dq,avx512bw,avx512vnni,f16c")))

// r[j] = the sum of v[j]'s 16 lanes, for j < 16: pairs of vectors, then pairs of pairs, then
// the four 128-bit quarters; 15 additions and 30 shuffles for 16 sums (one reduction each would
// take 4 additions and 4 shuffles in a chain). Add adds two vectors lane by lane: float lanes, or
// 32-bit integer lanes carried in the same registers (the shuffles only move bits).
template <typename Add>
EVALD_ATTEND_TARGET inline __m512 TransposedSumsBy(const __m512 (&v)[16], Add add) {
  __m512 w[8], x[4];
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j)  // quarter k: v2j, v2j+1 elements {0,2} + {1,3} interleaved
    w[j] =
        add(_mm512_unpacklo_ps(v[2 * j], v[2 * j + 1]), _mm512_unpackhi_ps(v[2 * j], v[2 * j + 1]));
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {  // quarter k: the 4-element sums of v4i..v4i+3
    const __m512d a = _mm512_castps_pd(w[2 * i]), b = _mm512_castps_pd(w[2 * i + 1]);
    x[i] =
        add(_mm512_castpd_ps(_mm512_unpacklo_pd(a, b)), _mm512_castpd_ps(_mm512_unpackhi_pd(a, b)));
  }
  // Quarters 0 + 1 and 2 + 3 of x0 and x1 (x2 and x3), then the two halves of each.
  const __m512 z01 =
      add(_mm512_shuffle_f32x4(x[0], x[1], 0x88), _mm512_shuffle_f32x4(x[0], x[1], 0xDD));
  const __m512 z23 =
      add(_mm512_shuffle_f32x4(x[2], x[3], 0x88), _mm512_shuffle_f32x4(x[2], x[3], 0xDD));
  return add(_mm512_shuffle_f32x4(z01, z23, 0x88), _mm512_shuffle_f32x4(z01, z23, 0xDD));
}

struct AddFloats {
  EVALD_ATTEND_TARGET __m512 operator()(__m512 a, __m512 b) const { return _mm512_add_ps(a, b); }
};
struct AddInt32s {
  EVALD_ATTEND_TARGET __m512 operator()(__m512 a, __m512 b) const {
    return _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(a), _mm512_castps_si512(b)));
  }
};

// Where the keys (values) of positions t, t + 1, ... start (AttentionHead::At, a sliding
// layer's ring wrapping without a division).
class Rows {
 public:
  Rows(const AttentionHead& h, int t) : h_(h), t_(t), row_(h.Row(t)) {}
  int64_t Next() {
    const int64_t at = (t_ < h_.prefix ? h_.prefix_offset : 0) + row_ * h_.stride;
    ++t_;
    row_ = h_.ring > 0 && row_ + 1 == h_.ring ? 0 : row_ + 1;
    return at;
  }

 private:
  const AttentionHead& h_;
  int t_;
  int64_t row_;
};

// Positions at a time: the scores' and the values' blocks (16 rows of keys or values, 4 KiB at
// head_dim 64, stay in L1 while every head of the group reads them).
constexpr int kBlock = 16;

// Asks for the rows of positions [t, t + 16) (as far as `last`) ahead of their block: the
// first head of a group reads each row from memory, 1 KiB or more apart (the KV heads of a
// position side by side), which the hardware prefetchers follow only slowly.
// kLines cache lines from each row; a row at base + offset / kPer (Rows counts floats: kPer is
// 32 for a cache of Q8_0 blocks).
template <int kLines, int kPer = 1, typename T>
EVALD_ATTEND_TARGET inline void PrefetchBlock(const T* base, Rows& rows, int t, int last) {
  const int n = std::min(16, last + 1 - t);
  for (int j = 0; j < n; ++j) {
    const char* row = reinterpret_cast<const char*>(base + rows.Next() / kPer);
#pragma GCC unroll 16
    for (int line = 0; line < kLines; ++line) _mm_prefetch(row + 64 * line, _MM_HINT_T0);
  }
}

// A window's key (or value) rows block by block from position `from`: Next(t, last, rows) points
// rows[j] at the row of position t + j for the n = min(16, last + 1 - t) positions of the block
// at t, asks for the next block's rows ahead (PrefetchBlock) and returns n. Rows of T at base +
// offset / kPer, as PrefetchBlock reads them.
template <int kLines, int kPer = 1, typename T = float>
class BlockRows {
 public:
  BlockRows(const AttentionHead& h, const T* base, int from)
      : base_(base), at_(h, from), ahead_(h, from + kBlock) {}
  EVALD_ATTEND_TARGET int Next(int t, int last, const T** rows) {
    const int n = std::min(kBlock, last + 1 - t);
    for (int j = 0; j < n; ++j) rows[j] = base_ + at_.Next() / kPer;
    PrefetchBlock<kLines, kPer>(base_, ahead_, t + kBlock, last);
    return n;
  }

 private:
  const T* base_;
  Rows at_, ahead_;
};

// Heads whose weighted values one pass over a block accumulates: their sums (heads x L registers,
// at most 16) beside one value row (L) and a broadcast weight; one head at a time past 8 lanes.
constexpr int HeadsPerValuePass(int lanes) {
  return lanes > 8 ? 1 : std::min(8, 16 / lanes);
}

// out[i] += the weighted values of positions [0, n) of a block, for H heads (head i's weights at
// e + i * span, its output at out + i * 16 L). Each value row is read once for the H heads. Per
// head and lane one chain of multiply-adds from zero, positions in order, then one addition to the
// output: a head's result is the same whatever H it is computed with. (One head at a time, in two
// chains, measured 5.0 against 3.5-3.9 ns per head-position with the cache in L2, head_dim 64,
// groups of 8, on the Zen 5 host; two chains for two heads at a time, 5.2-5.5.)
template <int L, int H>
EVALD_ATTEND_TARGET void AddWeightedValues(const float* const* rows, int n, const float* e,
                                           int64_t span, float* out) {
  __m512 acc[H][L];
#pragma GCC unroll 8
  for (int i = 0; i < H; ++i)
#pragma GCC unroll 16
    for (int l = 0; l < L; ++l) acc[i][l] = _mm512_setzero_ps();
  for (int j = 0; j < n; ++j) {
    if constexpr (H == 1) {
      const __m512 a = _mm512_set1_ps(e[j]);
#pragma GCC unroll 16
      for (int l = 0; l < L; ++l)
        acc[0][l] = _mm512_fmadd_ps(a, _mm512_loadu_ps(rows[j] + 16 * l), acc[0][l]);
    } else {
      __m512 v[L];
#pragma GCC unroll 16
      for (int l = 0; l < L; ++l) v[l] = _mm512_loadu_ps(rows[j] + 16 * l);
#pragma GCC unroll 8
      for (int i = 0; i < H; ++i) {
        const __m512 a = _mm512_set1_ps(e[i * span + j]);
#pragma GCC unroll 16
        for (int l = 0; l < L; ++l) acc[i][l] = _mm512_fmadd_ps(a, v[l], acc[i][l]);
      }
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < H; ++i) {
    float* o = out + i * 16 * L;
#pragma GCC unroll 16
    for (int l = 0; l < L; ++l)
      _mm512_storeu_ps(o + 16 * l, _mm512_add_ps(_mm512_loadu_ps(o + 16 * l), acc[i][l]));
  }
}

using ValuePassFn = void (*)(const float* const*, int, const float*, int64_t, float*);

// AddWeightedValues<L, h> at entry h - 1, for h = 1 .. HeadsPerValuePass(L): the heads a group
// leaves over after its full passes go through one pass of their own count.
template <int L, size_t... I>
constexpr std::array<ValuePassFn, sizeof...(I)> ValuePassTable(std::index_sequence<I...>) {
  return {&AddWeightedValues<L, static_cast<int>(I) + 1>...};
}

// A block's raw scores of n positions (lanes 0..n-1 of raw), scaled and soft-capped, stored at
// `at`; returns them.
EVALD_ATTEND_TARGET inline __m512 StoreScaledScores(const AttentionHead& h, __m512 raw, int n,
                                                    float* at) {
  __m512 s = _mm512_mul_ps(raw, _mm512_set1_ps(h.scale));
  if (h.softcap > 0) {
    alignas(64) float capped[kBlock];
    _mm512_store_ps(capped, s);
    for (int j = 0; j < n; ++j) capped[j] = Cap(capped[j], h.softcap);
    s = _mm512_load_ps(capped);
  }
  _mm512_mask_storeu_ps(at, static_cast<__mmask16>((1u << n) - 1), s);
  return s;
}

// Head g's raw scores of a block's n positions (lanes 0..n-1 of raw), scaled and soft-capped,
// stored at `at` and folded into the head's running maximum.
EVALD_ATTEND_TARGET inline void StoreScores(const AttentionHead& h, __m512 raw, int n, float* at,
                                            __m512& vmax) {
  const __m512 s = StoreScaledScores(h, raw, n, at);
  vmax = _mm512_mask_max_ps(vmax, static_cast<__mmask16>((1u << n) - 1), vmax, s);
}

// The lane-wise maximum of scores [first, end) (lane j: positions first + j, first + 16 + j, ...;
// -inf lanes where there are none).
EVALD_ATTEND_TARGET inline __m512 MaxOfScores(const float* scores, int first, int end) {
  __m512 vmax = _mm512_set1_ps(-INFINITY);
  for (int t = first; t < end; t += kBlock) {
    const __mmask16 valid = static_cast<__mmask16>((1u << std::min(kBlock, end - t)) - 1);
    vmax = _mm512_mask_max_ps(vmax, valid, vmax, _mm512_maskz_loadu_ps(valid, scores + t));
  }
  return vmax;
}

// Each head's scores [first, last] become the softmax numerators e^(score - max), in place, by
// the vector exp; inverse[g] = 1 / their sum, summed in double lanes.
EVALD_ATTEND_TARGET inline void SoftmaxNumeratorsOfHeads(float* scores, int64_t span, int heads,
                                                         int first, int last, const __m512* vmax,
                                                         float* inverse) {
  for (int g = 0; g < heads; ++g) {
    float* sg = scores + g * span;
    const __m512 vm = _mm512_set1_ps(_mm512_reduce_max_ps(vmax[g]));
    for (int t = first; t <= last; t += kBlock) {
      const __mmask16 valid = static_cast<__mmask16>((1u << std::min(kBlock, last + 1 - t)) - 1);
      _mm512_mask_storeu_ps(sg + t, valid, _mm512_sub_ps(_mm512_maskz_loadu_ps(valid, sg + t), vm));
    }
    ExpAvx512(sg + first, sg + first, last - first + 1);
    __m512d sum8 = _mm512_setzero_pd();
    for (int t = first; t <= last; t += kBlock) {
      const __mmask16 valid = static_cast<__mmask16>((1u << std::min(kBlock, last + 1 - t)) - 1);
      const __m512 e = _mm512_maskz_loadu_ps(valid, sg + t);
      sum8 = _mm512_add_pd(sum8, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
      sum8 = _mm512_add_pd(sum8, _mm512_cvtps_pd(_mm512_extractf32x8_ps(e, 1)));
    }
    inverse[g] = static_cast<float>(1.0 / _mm512_reduce_add_pd(sum8));
  }
}

// out (head g's at out + g * 16 L) += the weighted values of a block's n rows, heads in passes of
// HeadsPerValuePass(L); e: the block's numerators of head 0, head g's span floats further on.
template <int L>
EVALD_ATTEND_TARGET inline void AddValueBlock(const float* const* rows, int n, const float* e,
                                              int64_t span, int heads, float* out) {
  constexpr int kHeads = HeadsPerValuePass(L);
  constexpr auto kValuePasses = ValuePassTable<L>(std::make_index_sequence<kHeads>());
  for (int g = 0; g < heads; g += kHeads) {
    const int pass = std::min(kHeads, heads - g);
    kValuePasses[pass - 1](rows, n, e + g * span, span, out + g * 16 * L);
  }
}

// Each head's output divided by its numerators' sum (times inverse[g]).
template <int L>
EVALD_ATTEND_TARGET inline void DivideBySums(int heads, const float* inverse, float* out) {
  for (int g = 0; g < heads; ++g) {
    const __m512 inv = _mm512_set1_ps(inverse[g]);
    float* o = out + g * 16 * L;
#pragma GCC unroll 16
    for (int l = 0; l < L; ++l)
      _mm512_storeu_ps(o + 16 * l, _mm512_mul_ps(_mm512_loadu_ps(o + 16 * l), inv));
  }
}

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
      __m512 qv[L];
#pragma GCC unroll 16
      for (int l = 0; l < L; ++l) qv[l] = _mm512_loadu_ps(q + g * kDim + 16 * l);
      __m512 products[kBlock];
#pragma GCC unroll 16
      for (int j = 0; j < kBlock; ++j) {
        products[j] = _mm512_setzero_ps();
        if (j >= n) continue;
#pragma GCC unroll 16
        for (int l = 0; l < L; ++l)
          products[j] = _mm512_fmadd_ps(qv[l], _mm512_loadu_ps(rows[j] + 16 * l), products[j]);
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

template <size_t... I>
constexpr std::array<AttendFn, sizeof...(I)> AttendTable(std::index_sequence<I...>) {
  return {&AttendGroupLanes<static_cast<int>(I) + 1>...};
}

// Head sizes up to 256 (Gemma's), in steps of 16.
constexpr auto kAttendAvx512 = AttendTable(std::make_index_sequence<16>());

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

template <size_t... I>
constexpr std::array<SharedScoresFn, sizeof...(I)> SharedScoresTable(std::index_sequence<I...>) {
  return {&SharedScoresLanes<static_cast<int>(I) + 1>...};
}

constexpr auto kSharedScoresAvx512 = SharedScoresTable(std::make_index_sequence<16>());

// Cache lines a position's B Q8_0 blocks (34 bytes each, from any offset) can touch.
constexpr int Q8_0RowLines(int blocks) {
  return (blocks * static_cast<int>(sizeof(BlockQ8_0)) + 126) / 64;
}

// head_dim = 32 B over a Q8_0 cache, as AttendQ8_0 computes it: each query head quantized to
// Q8_0 (QuantizeBlockQ8_0Avx512, as QuantizeRowQ8_0 on finite values); per block of 16 positions
// and per 32-element block of the head, each position's key block sign-extended to 16 bits and
// multiplied into 16 pair sums (vpmaddwd) against the query's, the 16 positions' sums reduced at
// once (integers, exact), scaled by the key blocks' and the query block's scales and added up over
// the head's blocks. The values of a block of positions are dequantized once into float rows that
// every head then weighs as over a float cache. A head's result does not depend on the others in
// its group.
template <int B>
EVALD_ATTEND_TARGET void AttendQ8_0Blocks(const AttentionHead& h, int heads, const float* q,
                                          const BlockQ8_0* keys, const BlockQ8_0* values, int first,
                                          int last, float* scores, float* out) {
  constexpr int L = 2 * B, kDim = 32 * B;
  const int64_t span = last + 1;
  __m512i q16[kMaxAttendGroup][B];  // the query's values, 16 bits each
  float dq[kMaxAttendGroup][B];     // and its block scales
  for (int g = 0; g < heads; ++g) {
    for (int b = 0; b < B; ++b) {
      int8_t values[kQK];
      uint16_t d;
      QuantizeBlockQ8_0Avx512(q + g * kDim + kQK * b, values, &d);
      q16[g][b] =
          _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(values)));
      dq[g][b] = Fp16ToFp32(d);
    }
  }
  __m512 vmax[kMaxAttendGroup];
  const int from = first + h.scored;  // the scores of [first, from) came with the call
  for (int g = 0; g < heads; ++g) vmax[g] = MaxOfScores(scores + g * span, first, from);
  const BlockQ8_0* rows[kBlock];
  BlockRows<Q8_0RowLines(B), kQK, BlockQ8_0> key_rows(h, keys, from);
  for (int t = from; t <= last; t += kBlock) {
    const int n = key_rows.Next(t, last, rows);
    __m512 dk[B];  // block b's key scales, position j in lane j
    for (int b = 0; b < B; ++b) {
      alignas(32) uint16_t d[kBlock] = {};
      for (int j = 0; j < n; ++j) d[j] = rows[j][b].d;
      dk[b] = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(d)));
    }
    for (int g = 0; g < heads; ++g) {
      __m512 s = _mm512_setzero_ps();
      for (int b = 0; b < B; ++b) {
        __m512 pairs[kBlock];  // 32-bit integer lanes
#pragma GCC unroll 16
        for (int j = 0; j < kBlock; ++j) {
          pairs[j] = _mm512_setzero_ps();
          if (j >= n) continue;
          const __m512i k16 = _mm512_cvtepi8_epi16(
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows[j][b].qs)));
          pairs[j] = _mm512_castsi512_ps(_mm512_madd_epi16(k16, q16[g][b]));
        }
        const __m512 dot =
            _mm512_cvtepi32_ps(_mm512_castps_si512(TransposedSumsBy(pairs, AddInt32s())));
        s = _mm512_fmadd_ps(dot, _mm512_mul_ps(dk[b], _mm512_set1_ps(dq[g][b])), s);
      }
      StoreScores(h, s, n, scores + g * span + t, vmax[g]);
    }
  }
  float inverse[kMaxAttendGroup];
  SoftmaxNumeratorsOfHeads(scores, span, heads, first, last, vmax, inverse);
  for (int i = 0; i < heads * kDim; ++i) out[i] = 0.0f;
  alignas(64) float dequantized[kBlock][kDim];
  const float* value_rows_f[kBlock];
  BlockRows<Q8_0RowLines(B), kQK, BlockQ8_0> value_rows(h, values, first);
  for (int t = first; t <= last; t += kBlock) {
    const int n = value_rows.Next(t, last, rows);
    for (int j = 0; j < n; ++j) {
      const BlockQ8_0* v = rows[j];
      for (int b = 0; b < B; ++b) {
        const __m512 d = _mm512_set1_ps(Fp16ToFp32(v[b].d));
#pragma GCC unroll 2
        for (int half = 0; half < 2; ++half) {
          const __m512i x = _mm512_cvtepi8_epi32(
              _mm_loadu_si128(reinterpret_cast<const __m128i*>(v[b].qs + 16 * half)));
          _mm512_store_ps(&dequantized[j][32 * b + 16 * half],
                          _mm512_mul_ps(_mm512_cvtepi32_ps(x), d));
        }
      }
      value_rows_f[j] = dequantized[j];
    }
    AddValueBlock<L>(value_rows_f, n, scores + t, span, heads, out);
  }
  DivideBySums<L>(heads, inverse, out);
}

template <size_t... I>
constexpr std::array<AttendQ8_0GroupFn, sizeof...(I)> AttendQ8_0Table(std::index_sequence<I...>) {
  return {&AttendQ8_0Blocks<static_cast<int>(I) + 1>...};
}

// Head sizes up to 256, in steps of 32.
constexpr auto kAttendQ8_0Avx512 = AttendQ8_0Table(std::make_index_sequence<8>());

// head_dim = 32 B over a Q8_0 cache: the scores AttendQ8_0Blocks computes, for many heads at
// once. Per block of 16 positions each 32-value block of the keys is transposed once into 8
// registers (values 4i..4i+3 of position j in lane j, as unsigned bytes k + 128), and a head's 16
// integer dots are 8 vpdpbusd against its quantized query, four values broadcast at a time, less
// 128 x the query block's sum: exactly the integers AttendQ8_0Blocks' pair sums give, so the same
// float steps after them (each dot times the key and query scales' product, added over the
// head's blocks in order) give its scores bit for bit. Heads go 8 at a time (8 independent
// vpdpbusd chains; the heads are padded to a multiple of 8 with zero queries).
template <int B>
EVALD_ATTEND_VNNI_TARGET void SharedScoresQ8_0Blocks(const AttentionHead& h, int heads,
                                                     const float* const* q, const BlockQ8_0* keys,
                                                     int first, int last, float* const* scores) {
  constexpr int kTogether = 8;
  const int padded = (heads + kTogether - 1) / kTogether * kTogether;
  // Head g's block b at g * B + b: its 32 values from 32 x that, its scale, -128 x its sum.
  thread_local std::vector<int8_t> values;
  thread_local std::vector<float> scale;
  thread_local std::vector<int32_t> offset;
  thread_local std::vector<float> sums;  // head g's scores of the block so far, 16 from g * 16
  values.assign(static_cast<size_t>(padded) * B * kQK, 0);
  scale.assign(static_cast<size_t>(padded) * B, 0.0f);
  offset.assign(scale.size(), 0);
  sums.resize(static_cast<size_t>(padded) * kBlock);
  for (int g = 0; g < heads; ++g)
    for (int b = 0; b < B; ++b) {
      const size_t at = static_cast<size_t>(g) * B + b;
      uint16_t d;
      offset[at] = -128 * QuantizeBlockQ8_0Avx512(q[g] + kQK * b, &values[at * kQK], &d);
      scale[at] = Fp16ToFp32(d);
    }
  const BlockQ8_0* rows[kBlock];
  BlockRows<Q8_0RowLines(B), kQK, BlockQ8_0> key_rows(h, keys, first);
  for (int t = first; t <= last; t += kBlock) {
    const int n = key_rows.Next(t, last, rows);
    for (int b = 0; b < B; ++b) {
      alignas(32) uint16_t d[kBlock] = {};
      for (int j = 0; j < n; ++j) d[j] = rows[j][b].d;
      const __m512 dk = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(d)));
      alignas(64) uint32_t column[8][kBlock];  // positions past `last`: zeros (dots of 0)
      for (int j = 0; j < kBlock; ++j)
        for (int i = 0; i < 8; ++i) {
          uint32_t w = 0;
          if (j < n) std::memcpy(&w, rows[j][b].qs + 4 * i, sizeof w);
          column[i][j] = w ^ 0x80808080u;
        }
      for (int g0 = 0; g0 < padded; g0 += kTogether) {
        __m512i dot[kTogether];
#pragma GCC unroll 8
        for (int k = 0; k < kTogether; ++k)
          dot[k] = _mm512_set1_epi32(offset[static_cast<size_t>(g0 + k) * B + b]);
#pragma GCC unroll 8
        for (int i = 0; i < 8; ++i) {
          const __m512i column_i = _mm512_load_si512(column[i]);
#pragma GCC unroll 8
          for (int k = 0; k < kTogether; ++k) {
            int32_t four;
            std::memcpy(&four, &values[(static_cast<size_t>(g0 + k) * B + b) * kQK + 4 * i],
                        sizeof four);
            dot[k] = _mm512_dpbusd_epi32(dot[k], column_i, _mm512_set1_epi32(four));
          }
        }
#pragma GCC unroll 8
        for (int k = 0; k < kTogether; ++k) {
          const size_t at = static_cast<size_t>(g0 + k) * B + b;
          float* s = &sums[static_cast<size_t>(g0 + k) * kBlock];
          const __m512 before = b == 0 ? _mm512_setzero_ps() : _mm512_loadu_ps(s);
          const __m512 product = _mm512_mul_ps(dk, _mm512_set1_ps(scale[at]));
          _mm512_storeu_ps(s, _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[k]), product, before));
        }
      }
    }
    for (int g = 0; g < heads; ++g)
      StoreScaledScores(h, _mm512_loadu_ps(&sums[static_cast<size_t>(g) * kBlock]), n,
                        scores[g] + t);
  }
}

using SharedScoresQ8_0BlocksFn = void (*)(const AttentionHead& h, int heads, const float* const* q,
                                          const BlockQ8_0* keys, int first, int last,
                                          float* const* scores);

template <size_t... I>
constexpr std::array<SharedScoresQ8_0BlocksFn, sizeof...(I)> SharedScoresQ8_0Table(
    std::index_sequence<I...>) {
  return {&SharedScoresQ8_0Blocks<static_cast<int>(I) + 1>...};
}

// The head sizes kAttendQ8_0Avx512 takes.
constexpr auto kSharedScoresQ8_0Avx512 = SharedScoresQ8_0Table(std::make_index_sequence<8>());

}  // namespace

void AttendAvx512(const AttentionHead& head, int heads, const float* q, const float* keys,
                  const float* values, int first, int last, float* scores, float* out) {
  AttendByWidth(kAttendAvx512, 16, head, heads, q, keys, values, first, last, scores, out);
}

void SharedScoresAvx512(const AttentionHead& head, int heads, const float* const* q,
                        const float* keys, int first, int last, float* const* scores) {
  const int lanes = head.head_dim / 16;
  if (head.head_dim % 16 != 0 || lanes < 1 ||
      lanes > static_cast<int>(kSharedScoresAvx512.size())) {
    SharedScoresScalar(head, heads, q, keys, first, last, scores);
    return;
  }
  kSharedScoresAvx512[static_cast<size_t>(lanes - 1)](head, heads, q, keys, first, last, scores);
}

void SharedScoresQ8_0Avx512(const AttentionHead& head, int heads, const float* const* q,
                            const BlockQ8_0* keys, int64_t block_stride, int first, int last,
                            float* const* scores) {
  // The cases AttendQ8_0ByBlocks sends head by head.
  const int blocks = head.head_dim / kQK;
  if (head.head_dim % kQK != 0 || blocks < 1 ||
      blocks > static_cast<int>(kSharedScoresQ8_0Avx512.size()) ||
      head.stride != block_stride * kQK || head.prefix_offset % kQK != 0) {
    SharedScoresQ8_0Heads<&DotQ8_0Avx512Vnni>(head, heads, q, keys, block_stride, first, last,
                                              scores);
    return;
  }
  kSharedScoresQ8_0Avx512[static_cast<size_t>(blocks - 1)](head, heads, q, keys, first, last,
                                                           scores);
}

void AttendQ8_0Avx512(const AttentionHead& head, int heads, const float* q, const BlockQ8_0* keys,
                      const BlockQ8_0* values, int64_t block_stride, int first, int last,
                      float* scores, float* out) {
  AttendQ8_0ByBlocks(kAttendQ8_0Avx512, &AttendQ8_0Heads<&DotQ8_0Avx512Vnni>, head, heads, q, keys,
                     values, block_stride, first, last, scores, out);
}

}  // namespace evald::kernels
