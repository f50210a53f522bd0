// Attention over a float KV cache with AVX-512: 16 lanes, the query and the output in
// registers for the whole window, 16 scores at a time, a vector exp for the softmax numerators.
// Equal to the scalar oracle up to summation order, 2 ulp in exp and the one division by the
// sum at the end (the oracle divides each numerator).
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

#define EVALD_ATTEND_TARGET __attribute__((target("avx512f,avx512dq")))

// r[j] = the sum of v[j]'s 16 lanes, for j < 16: pairs of vectors, then pairs of pairs, then
// the four 128-bit quarters; 15 additions and 30 shuffles for 16 sums (one reduction each would
// take 4 additions and 4 shuffles in a chain).
EVALD_ATTEND_TARGET inline __m512 TransposedSums(const __m512 (&v)[16]) {
  __m512 w[8], x[4];
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j)  // quarter k: v2j, v2j+1 elements {0,2} + {1,3} interleaved
    w[j] = _mm512_add_ps(_mm512_unpacklo_ps(v[2 * j], v[2 * j + 1]),
                         _mm512_unpackhi_ps(v[2 * j], v[2 * j + 1]));
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {  // quarter k: the 4-element sums of v4i..v4i+3
    const __m512d a = _mm512_castps_pd(w[2 * i]), b = _mm512_castps_pd(w[2 * i + 1]);
    x[i] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(a, b)),
                         _mm512_castpd_ps(_mm512_unpackhi_pd(a, b)));
  }
  // Quarters 0 + 1 and 2 + 3 of x0 and x1 (x2 and x3), then the two halves of each.
  const __m512 z01 =
      _mm512_add_ps(_mm512_shuffle_f32x4(x[0], x[1], 0x88), _mm512_shuffle_f32x4(x[0], x[1], 0xDD));
  const __m512 z23 =
      _mm512_add_ps(_mm512_shuffle_f32x4(x[2], x[3], 0x88), _mm512_shuffle_f32x4(x[2], x[3], 0xDD));
  return _mm512_add_ps(_mm512_shuffle_f32x4(z01, z23, 0x88), _mm512_shuffle_f32x4(z01, z23, 0xDD));
}

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

// Asks for the rows of positions [t, t + 16) (as far as `last`) ahead of their block: the
// first head of a group reads each row from memory, 1 KiB or more apart (the KV heads of a
// position side by side), which the hardware prefetchers follow only slowly.
template <int L>
EVALD_ATTEND_TARGET inline void PrefetchBlock(const float* base, Rows& rows, int t, int last) {
  const int n = std::min(16, last + 1 - t);
  for (int j = 0; j < n; ++j) {
    const char* row = reinterpret_cast<const char*>(base + rows.Next());
#pragma GCC unroll 16
    for (int line = 0; line < L; ++line) _mm_prefetch(row + 64 * line, _MM_HINT_T0);
  }
}

// Positions at a time: the scores' and the values' blocks (16 rows of keys or values, 4 KiB at
// head_dim 64, stay in L1 while every head of the group reads them).
constexpr int kBlock = 16;

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
  const __m512 scale = _mm512_set1_ps(h.scale);
  __m512 vmax[kMaxAttendGroup];
  for (int g = 0; g < heads; ++g) vmax[g] = _mm512_set1_ps(-INFINITY);
  const float* rows[kBlock];
  Rows key_rows(h, first), keys_ahead(h, first + kBlock);
  for (int t = first; t <= last; t += kBlock) {
    const int n = std::min(kBlock, last + 1 - t);
    for (int j = 0; j < n; ++j) rows[j] = keys + key_rows.Next();
    PrefetchBlock<L>(keys, keys_ahead, t + kBlock, last);
    const __mmask16 valid = static_cast<__mmask16>((1u << n) - 1);
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
      __m512 s = _mm512_mul_ps(TransposedSums(products), scale);
      if (h.softcap > 0) {
        alignas(64) float capped[kBlock];
        _mm512_store_ps(capped, s);
        for (int j = 0; j < n; ++j) capped[j] = Cap(capped[j], h.softcap);
        s = _mm512_load_ps(capped);
      }
      _mm512_mask_storeu_ps(scores + g * span + t, valid, s);
      vmax[g] = _mm512_mask_max_ps(vmax[g], valid, vmax[g], s);
    }
  }
  // Numerators e^(score - max), in place, and the inverse of their sum, per head.
  float inverse[kMaxAttendGroup];
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
  for (int i = 0; i < heads * kDim; ++i) out[i] = 0.0f;
  Rows value_rows(h, first), values_ahead(h, first + kBlock);
  constexpr int kHeads = HeadsPerValuePass(L);
  constexpr auto kValuePasses = ValuePassTable<L>(std::make_index_sequence<kHeads>());
  for (int t = first; t <= last; t += kBlock) {
    const int n = std::min(kBlock, last + 1 - t);
    for (int j = 0; j < n; ++j) rows[j] = values + value_rows.Next();
    PrefetchBlock<L>(values, values_ahead, t + kBlock, last);
    for (int g = 0; g < heads; g += kHeads) {
      const int pass = std::min(kHeads, heads - g);
      kValuePasses[pass - 1](rows, n, scores + g * span + t, span, out + g * kDim);
    }
  }
  for (int g = 0; g < heads; ++g) {
    const __m512 inv = _mm512_set1_ps(inverse[g]);
    float* o = out + g * kDim;
#pragma GCC unroll 16
    for (int l = 0; l < L; ++l)
      _mm512_storeu_ps(o + 16 * l, _mm512_mul_ps(_mm512_loadu_ps(o + 16 * l), inv));
  }
}

template <size_t... I>
constexpr std::array<AttendGroupFn, sizeof...(I)> AttendTable(std::index_sequence<I...>) {
  return {&AttendGroupLanes<static_cast<int>(I) + 1>...};
}

// Head sizes up to 256 (Gemma's), in steps of 16.
constexpr auto kAttendAvx512 = AttendTable(std::make_index_sequence<16>());

}  // namespace

void AttendAvx512(const AttentionHead& head, int heads, const float* q, const float* keys,
                  const float* values, int first, int last, float* scores, float* out) {
  AttendByWidth(kAttendAvx512, 16, head, heads, q, keys, values, first, last, scores, out);
}

}  // namespace evald::kernels
