// Attention over a float KV cache, and over a Q8_0 one, with AVX2 and FMA: 8 lanes, the query
// heads of a KV head together, 8 scores at a time, the vector exp for the softmax numerators. Equal
// to the scalar oracle up to summation order, 2 ulp in exp and the one division by the sum at the
// end.
#include "kernels/ops/attention.h"

#include "kernels/ops/intrinsics_warnings.h"  // before the intrinsics' headers

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "kernels/ops/activations.h"
#include "kernels/ops/attention_math.h"
#include "kernels/ops/dot.h"
#include "kernels/quant/blocks.h"
#include "kernels/quant/fp16.h"

namespace evald::kernels {

namespace {

#define EVALD_ATTEND_AVX2_TARGET __attribute__((target("avx2,fma,f16c")))

// Positions per block (one register of scores).
constexpr int kBlock = 8;

// r[j] = the sum of v[j]'s 8 lanes, for j < 8: pairwise horizontal adds, then the two 128-bit
// halves.
EVALD_ATTEND_AVX2_TARGET inline __m256 TransposedSums(const __m256 (&v)[kBlock]) {
  const __m256 a = _mm256_hadd_ps(_mm256_hadd_ps(v[0], v[1]), _mm256_hadd_ps(v[2], v[3]));
  const __m256 b = _mm256_hadd_ps(_mm256_hadd_ps(v[4], v[5]), _mm256_hadd_ps(v[6], v[7]));
  return _mm256_add_ps(_mm256_permute2f128_ps(a, b, 0x20), _mm256_permute2f128_ps(a, b, 0x31));
}

// The first `n` lanes (n <= 8), as a load/store mask.
EVALD_ATTEND_AVX2_TARGET inline __m256i FirstLanes(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Head g's raw scores of a block's n positions, scaled and soft-capped, stored at `at`; *max
// takes their maximum.
EVALD_ATTEND_AVX2_TARGET inline void StoreScores(const AttentionHead& h, __m256 raw, int n,
                                                 float* at, float* max) {
  alignas(32) float s[kBlock];
  _mm256_store_ps(s, _mm256_mul_ps(raw, _mm256_set1_ps(h.scale)));
  for (int j = 0; j < n; ++j) {
    s[j] = Cap(s[j], h.softcap);
    *max = std::max(*max, s[j]);
  }
  _mm256_maskstore_ps(at, FirstLanes(n), _mm256_load_ps(s));
}

// Each head's scores [first, last] become the softmax numerators e^(score - max), in place, by
// the vector exp; inverse[g] = 1 / their sum, summed in double lanes.
EVALD_ATTEND_AVX2_TARGET inline void SoftmaxNumeratorsOfHeads(float* scores, int64_t span,
                                                              int heads, int first, int last,
                                                              const float* max, float* inverse) {
  for (int g = 0; g < heads; ++g) {
    float* sg = scores + g * span;
    for (int t = first; t <= last; ++t) sg[t] -= max[g];
    ExpAvx2(sg + first, sg + first, last - first + 1);
    __m256d sum4 = _mm256_setzero_pd();
    for (int t = first; t <= last; t += kBlock) {
      const __m256 e = _mm256_maskload_ps(sg + t, FirstLanes(std::min(kBlock, last + 1 - t)));
      sum4 = _mm256_add_pd(sum4, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
      sum4 = _mm256_add_pd(sum4, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
    }
    alignas(32) double lanes[4];
    _mm256_store_pd(lanes, sum4);
    inverse[g] = static_cast<float>(1.0 / ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])));
  }
}

// out_head += the weighted values of a block's n rows for one head (its numerators at e), in two
// chains where the head is narrow (one where its L registers already keep the multiply-adds busy).
template <int L>
EVALD_ATTEND_AVX2_TARGET inline void AddHeadValues(const float* const* rows, int n, const float* e,
                                                   float* out_head) {
  constexpr int kChains = L >= 4 ? 1 : 2;
  __m256 acc[kChains][L];
#pragma GCC unroll 2
  for (int c = 0; c < kChains; ++c)
#pragma GCC unroll 32
    for (int l = 0; l < L; ++l) acc[c][l] = _mm256_setzero_ps();
  for (int j = 0; j < n; ++j) {
    const __m256 a = _mm256_set1_ps(e[j]);
    __m256(&chain)[L] = acc[kChains == 1 ? 0 : j % kChains];
#pragma GCC unroll 32
    for (int l = 0; l < L; ++l)
      chain[l] = _mm256_fmadd_ps(a, _mm256_loadu_ps(rows[j] + 8 * l), chain[l]);
  }
#pragma GCC unroll 32
  for (int l = 0; l < L; ++l) {
    __m256 block = acc[0][l];
    if constexpr (kChains == 2) block = _mm256_add_ps(block, acc[1][l]);
    _mm256_storeu_ps(out_head + 8 * l, _mm256_add_ps(_mm256_loadu_ps(out_head + 8 * l), block));
  }
}

// out (head g's at out + g * 8 L) += the weighted values of a block's n rows, head by head; e:
// the block's numerators of head 0, head g's span floats further on. Heads wider than 256
// (Gemma 4's 512) go in passes of 32 registers: a lane's chain is the same in whichever pass.
template <int L>
EVALD_ATTEND_AVX2_TARGET inline void AddValueBlock(const float* const* rows, int n, const float* e0,
                                                   int64_t span, int heads, float* out) {
  constexpr int kPass = L > 32 ? 32 : L;
  static_assert(L % kPass == 0);
  const float* part[kBlock];
  for (int p = 0; p < L / kPass; ++p) {
    for (int j = 0; j < n; ++j) part[j] = rows[j] + 8 * kPass * p;
    for (int g = 0; g < heads; ++g)
      AddHeadValues<kPass>(part, n, e0 + g * span, out + g * 8 * L + 8 * kPass * p);
  }
}

// Each head's output divided by its numerators' sum (times inverse[g]).
template <int L>
EVALD_ATTEND_AVX2_TARGET inline void DivideBySums(int heads, const float* inverse, float* out) {
  for (int g = 0; g < heads; ++g) {
    const __m256 inv = _mm256_set1_ps(inverse[g]);
    float* o = out + g * 8 * L;
#pragma GCC unroll 32
    for (int l = 0; l < L; ++l)
      _mm256_storeu_ps(o + 8 * l, _mm256_mul_ps(_mm256_loadu_ps(o + 8 * l), inv));
  }
}

// max[g]: the largest of head g's scores [first, from) that came with the call (-inf if none).
inline void MaxOfGivenScores(const float* scores, int64_t span, int heads, int first, int from,
                             float* max) {
  for (int g = 0; g < heads; ++g) {
    max[g] = -INFINITY;
    for (int t = first; t < from; ++t) max[g] = std::max(max[g], scores[g * span + t]);
  }
}

// head_dim = 8 L, `heads` <= kMaxAttendGroup query heads over one KV head: as the AVX-512 kernel
// (attention_avx512.cc) with 8 lanes. Each block of 8 keys and 8 values is read from memory once
// for the group; 8 scores at a time; the values weighted head by head (AddValueBlock).
template <int L>
EVALD_ATTEND_AVX2_TARGET void AttendGroupLanes(const AttentionHead& h, int heads, const float* q,
                                               const float* keys, const float* values, int first,
                                               int last, float* scores, float* out) {
  constexpr int kDim = 8 * L;
  const int64_t span = last + 1;  // scores of head g at scores + g * span
  float max[kMaxAttendGroup];
  const int from = first + h.scored;  // the scores of [first, from) came with the call
  MaxOfGivenScores(scores, span, heads, first, from, max);
  const float* rows[kBlock];
  for (int t = from; t <= last; t += kBlock) {
    const int n = std::min(kBlock, last + 1 - t);
    for (int j = 0; j < n; ++j) rows[j] = keys + h.At(t + j);
    for (int g = 0; g < heads; ++g) {
      const float* qg = q + g * kDim;
      __m256 products[kBlock];
#pragma GCC unroll 8
      for (int j = 0; j < kBlock; ++j) {
        products[j] = _mm256_setzero_ps();
        if (j >= n) continue;
#pragma GCC unroll 32
        for (int l = 0; l < L; ++l)
          products[j] = _mm256_fmadd_ps(_mm256_loadu_ps(qg + 8 * l),
                                        _mm256_loadu_ps(rows[j] + 8 * l), products[j]);
      }
      StoreScores(h, TransposedSums(products), n, scores + g * span + t, &max[g]);
    }
  }
  float inverse[kMaxAttendGroup];
  SoftmaxNumeratorsOfHeads(scores, span, heads, first, last, max, inverse);
  for (int i = 0; i < heads * kDim; ++i) out[i] = 0.0f;
  for (int t = first; t <= last; t += kBlock) {
    const int n = std::min(kBlock, last + 1 - t);
    for (int j = 0; j < n; ++j) rows[j] = values + h.At(t + j);
    AddValueBlock<L>(rows, n, scores + t, span, heads, out);
  }
  DivideBySums<L>(heads, inverse, out);
}

// r[j] = the sum of v[j]'s 8 32-bit integer lanes, for j < 8 (TransposedSums in integers).
EVALD_ATTEND_AVX2_TARGET inline __m256i TransposedSumsInt32(const __m256i (&v)[kBlock]) {
  const __m256i a = _mm256_hadd_epi32(_mm256_hadd_epi32(v[0], v[1]), _mm256_hadd_epi32(v[2], v[3]));
  const __m256i b = _mm256_hadd_epi32(_mm256_hadd_epi32(v[4], v[5]), _mm256_hadd_epi32(v[6], v[7]));
  return _mm256_add_epi32(_mm256_permute2x128_si256(a, b, 0x20),
                          _mm256_permute2x128_si256(a, b, 0x31));
}

// The scales of block b of each of a block's n positions, position j in lane j (zeros past n):
// one conversion for 8 positions.
template <int B>
EVALD_ATTEND_AVX2_TARGET inline void PositionScales(const BlockQ8_0* const* rows, int n,
                                                    __m256 (&scales)[B]) {
  for (int b = 0; b < B; ++b) {
    alignas(16) uint16_t d[kBlock] = {};
    for (int j = 0; j < n; ++j) d[j] = rows[j][b].d;
    scales[b] = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(d)));
  }
}

// head_dim = 32 B over a Q8_0 cache, as AttendQ8_0 computes it (the AVX-512 kernel's method with
// 8 lanes): the query quantized to Q8_0; per block of 8 positions and per 32-element block, each
// key block sign-extended to 16 bits and multiplied into pair sums (vpmaddwd) against the
// query's, the 8 positions' integer sums reduced at once (exact) and scaled by the blocks'
// scales; the values of a block of positions dequantized once into float rows for every head.
// Where every score came with the call, the query is not quantized at all.
template <int B>
EVALD_ATTEND_AVX2_TARGET void AttendQ8_0Blocks(const AttentionHead& h, int heads, const float* q,
                                               const BlockQ8_0* keys, const BlockQ8_0* values,
                                               int first, int last, float* scores, float* out) {
  constexpr int L = 4 * B, kDim = 32 * B;
  const int64_t span = last + 1;
  __m256i q16[kMaxAttendGroup][B][2];  // the query's values, 16 bits each
  float dq[kMaxAttendGroup][B];        // and its block scales
  const int from = first + h.scored;   // the scores of [first, from) came with the call
  for (int g = 0; g < heads && from <= last; ++g) {  // the query, where it scores a position
    BlockQ8_0 qb[B];
    QuantizeRowQ8_0(q + g * kDim, qb, kDim);
    for (int b = 0; b < B; ++b) {
      for (int half = 0; half < 2; ++half)
        q16[g][b][half] = _mm256_cvtepi8_epi16(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(qb[b].qs + 16 * half)));
      dq[g][b] = Fp16ToFp32(qb[b].d);
    }
  }
  // Position t's blocks (AttentionHead counts floats).
  auto blocks_at = [&](const BlockQ8_0* base, int t) { return base + h.At(t) / kQK; };
  float max[kMaxAttendGroup];
  MaxOfGivenScores(scores, span, heads, first, from, max);
  const BlockQ8_0* rows[kBlock];
  for (int t = from; t <= last; t += kBlock) {
    const int n = std::min(kBlock, last + 1 - t);
    for (int j = 0; j < n; ++j) rows[j] = blocks_at(keys, t + j);
    __m256 dk[B];  // block b's key scales, position j in lane j
    PositionScales<B>(rows, n, dk);
    for (int g = 0; g < heads; ++g) {
      __m256 s = _mm256_setzero_ps();
      for (int b = 0; b < B; ++b) {
        __m256i pairs[kBlock];
#pragma GCC unroll 8
        for (int j = 0; j < kBlock; ++j) {
          pairs[j] = _mm256_setzero_si256();
          if (j >= n) continue;
#pragma GCC unroll 2
          for (int half = 0; half < 2; ++half) {
            const __m256i k16 = _mm256_cvtepi8_epi16(
                _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[j][b].qs + 16 * half)));
            pairs[j] = _mm256_add_epi32(pairs[j], _mm256_madd_epi16(k16, q16[g][b][half]));
          }
        }
        const __m256 dot = _mm256_cvtepi32_ps(TransposedSumsInt32(pairs));
        s = _mm256_fmadd_ps(dot, _mm256_mul_ps(dk[b], _mm256_set1_ps(dq[g][b])), s);
      }
      StoreScores(h, s, n, scores + g * span + t, &max[g]);
    }
  }
  float inverse[kMaxAttendGroup];
  SoftmaxNumeratorsOfHeads(scores, span, heads, first, last, max, inverse);
  for (int i = 0; i < heads * kDim; ++i) out[i] = 0.0f;
  alignas(32) float dequantized[kBlock][kDim];
  const float* value_rows[kBlock];
  for (int t = first; t <= last; t += kBlock) {
    const int n = std::min(kBlock, last + 1 - t);
    for (int j = 0; j < n; ++j) rows[j] = blocks_at(values, t + j);
    alignas(32) float dv[B][kBlock];  // block b's value scales, position j at dv[b][j]
    {
      __m256 scales[B];
      PositionScales<B>(rows, n, scales);
      for (int b = 0; b < B; ++b) _mm256_store_ps(dv[b], scales[b]);
    }
    for (int j = 0; j < n; ++j) {
      const BlockQ8_0* v = rows[j];
      for (int b = 0; b < B; ++b) {
        const __m256 d = _mm256_set1_ps(dv[b][j]);
#pragma GCC unroll 4
        for (int quarter = 0; quarter < 4; ++quarter) {
          const __m256i x = _mm256_cvtepi8_epi32(
              _mm_loadl_epi64(reinterpret_cast<const __m128i*>(v[b].qs + 8 * quarter)));
          _mm256_store_ps(&dequantized[j][32 * b + 8 * quarter],
                          _mm256_mul_ps(_mm256_cvtepi32_ps(x), d));
        }
      }
      value_rows[j] = dequantized[j];
    }
    AddValueBlock<L>(value_rows, n, scores + t, span, heads, out);
  }
  DivideBySums<L>(heads, inverse, out);
}

// Head sizes up to 256 in steps of 32, and 512 (Gemma 4's full-attention layers); the sizes
// between have no entry (head by head, AttendQ8_0Heads).
constexpr auto kAttendQ8_0Avx2 = NarrowAndWidestTable<AttendQ8_0GroupFn, 16>(
    std::make_index_sequence<8>(), [](auto w) { return &AttendQ8_0Blocks<decltype(w)::value>; });

// Head sizes up to 256 (Gemma's) in steps of 8, and 512; the sizes between have no entry (the
// scalar path).
constexpr auto kAttendAvx2 = NarrowAndWidestTable<AttendFn, 64>(
    std::make_index_sequence<32>(), [](auto w) { return &AttendGroupLanes<decltype(w)::value>; });

}  // namespace

void AttendAvx2(const AttentionHead& head, int heads, const float* q, const float* keys,
                const float* values, int first, int last, float* scores, float* out) {
  AttendByWidth(kAttendAvx2, 8, head, heads, q, keys, values, first, last, scores, out);
}

void AttendQ8_0Avx2(const AttentionHead& head, int heads, const float* q, const BlockQ8_0* keys,
                    const BlockQ8_0* values, int64_t block_stride, int first, int last,
                    float* scores, float* out) {
  AttendQ8_0ByBlocks(kAttendQ8_0Avx2, &AttendQ8_0Heads<&DotQ8_0Avx2>, head, heads, q, keys, values,
                     block_stride, first, last, scores, out);
}

}  // namespace evald::kernels
