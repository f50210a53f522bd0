// The pieces the AVX-512 attention kernels share (attention_avx512.cc over a float cache,
// attention_q8_0_avx512.cc over a Q8_0 one): the lane-wise reduction of 16 registers, the walk
// over a window's rows block by block, the scores' scaling and maximum, the softmax numerators
// and the weighted values. Included by those two files only.
#pragma once

#include "kernels/ops/intrinsics_warnings.h"  // before the intrinsics' headers

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>

#include "kernels/ops/activations.h"
#include "kernels/ops/attention.h"
#include "kernels/ops/attention_math.h"

namespace evald::kernels::attention_avx512 {

#define EVALD_ATTEND_TARGET __attribute__((target("avx512f,avx512dq,avx512bw,f16c")))

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
  if constexpr (L > 16) {
    // Heads wider than 256 (Gemma 4's 512) in passes of 16 registers, one head at a time: a
    // lane's chain over the positions is the same in whichever pass it is computed.
    static_assert(L % 16 == 0);
    const float* part[kBlock];
    for (int p = 0; p < L / 16; ++p) {
      for (int j = 0; j < n; ++j) part[j] = rows[j] + 256 * p;
      for (int g = 0; g < heads; ++g)
        AddWeightedValues<16, 1>(part, n, e + g * span, span, out + g * 16 * L + 256 * p);
    }
    return;
  }
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

}  // namespace evald::kernels::attention_avx512
