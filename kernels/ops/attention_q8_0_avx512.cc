// Attention over a Q8_0 KV cache with AVX-512 (the pieces it shares with the float-cache kernels
// in attention_avx512_parts.h): each score an integer block dot, 16 positions at a time; the
// values dequantized once per block of positions for all the heads. Equal to AttendQ8_0 up to
// summation order and 2 ulp in exp.
#include "kernels/ops/attention.h"

#include "kernels/ops/intrinsics_warnings.h"  // before the intrinsics' headers

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/ops/attention_avx512_parts.h"
#include "kernels/ops/attention_math.h"
#include "kernels/ops/dot.h"
#include "kernels/ops/packed_activations.h"
#include "kernels/quant/blocks.h"
#include "kernels/quant/fp16.h"

namespace evald::kernels {

namespace {

using namespace attention_avx512;  // NOLINT(build/namespaces): this file's own pieces

// The Q8_0 shared scores' vpdpbusd (the table they are in is AVX-512 VNNI's).
#define EVALD_ATTEND_VNNI_TARGET \
  __attribute__((target("avx512f,avx512dq,avx512bw,avx512vnni,f16c")))

// Cache lines a position's B Q8_0 blocks (34 bytes each, from any offset) can touch.
constexpr int Q8_0RowLines(int blocks) {
  return (blocks * static_cast<int>(sizeof(BlockQ8_0)) + 126) / 64;
}

// The scales of block b of each of a block's n positions, position j in lane j (zeros past n):
// one conversion for 16 positions.
template <int B>
EVALD_ATTEND_TARGET inline void PositionScales(const BlockQ8_0* const* rows, int n,
                                               __m512 (&scales)[B]) {
  for (int b = 0; b < B; ++b) {
    alignas(32) uint16_t d[kBlock] = {};
    for (int j = 0; j < n; ++j) d[j] = rows[j][b].d;
    scales[b] = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(d)));
  }
}

// head_dim = 32 B over a Q8_0 cache, as AttendQ8_0 computes it: each query head quantized to
// Q8_0 (QuantizeBlockQ8_0Avx512, as QuantizeRowQ8_0 on finite values); per block of 16 positions
// and per 32-element block of the head, each position's key block sign-extended to 16 bits and
// multiplied into 16 pair sums (vpmaddwd) against the query's, the 16 positions' sums reduced at
// once (integers, exact), scaled by the key blocks' and the query block's scales and added up over
// the head's blocks. The values of a block of positions are dequantized once into float rows that
// every head then weighs as over a float cache. A head's result does not depend on the others in
// its group. Where every score came with the call (a decode step's shared scores), the query is
// not quantized at all.
template <int B>
EVALD_ATTEND_TARGET void AttendQ8_0Blocks(const AttentionHead& h, int heads, const float* q,
                                          const BlockQ8_0* keys, const BlockQ8_0* values, int first,
                                          int last, float* scores, float* out) {
  constexpr int L = 2 * B, kDim = 32 * B;
  const int64_t span = last + 1;
  __m512i q16[kMaxAttendGroup][B];    // the query's values, 16 bits each
  float dq[kMaxAttendGroup][B];       // and its block scales
  const int from = first + h.scored;  // the scores of [first, from) came with the call
  for (int g = 0; g < heads && from <= last; ++g) {  // the query, where it scores a position
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
  for (int g = 0; g < heads; ++g) vmax[g] = MaxOfScores(scores + g * span, first, from);
  const BlockQ8_0* rows[kBlock];
  BlockRows<Q8_0RowLines(B), kQK, BlockQ8_0> key_rows(h, keys, from);
  for (int t = from; t <= last; t += kBlock) {
    const int n = key_rows.Next(t, last, rows);
    __m512 dk[B];  // block b's key scales, position j in lane j
    PositionScales<B>(rows, n, dk);
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
    alignas(64) float dv[B][kBlock];  // block b's value scales, position j at dv[b][j]
    {
      __m512 scales[B];
      PositionScales<B>(rows, n, scales);
      for (int b = 0; b < B; ++b) _mm512_store_ps(dv[b], scales[b]);
    }
    for (int j = 0; j < n; ++j) {
      const BlockQ8_0* v = rows[j];
      for (int b = 0; b < B; ++b) {
        const __m512 d = _mm512_set1_ps(dv[b][j]);
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

// Head sizes up to 256 in steps of 32, and 512 (Gemma 4's full-attention layers); the sizes
// between have no entry (head by head, AttendQ8_0Heads).
constexpr auto kAttendQ8_0Avx512 = NarrowAndWidestTable<AttendQ8_0GroupFn, 16>(
    std::make_index_sequence<8>(), [](auto w) { return &AttendQ8_0Blocks<decltype(w)::value>; });

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
    __m512 dk[B];  // block b's key scales, position j in lane j
    PositionScales<B>(rows, n, dk);
    for (int b = 0; b < B; ++b) {
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
          const __m512 product = _mm512_mul_ps(dk[b], _mm512_set1_ps(scale[at]));
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

// The head sizes kAttendQ8_0Avx512 takes.
constexpr auto kSharedScoresQ8_0Avx512 = NarrowAndWidestTable<SharedScoresQ8_0BlocksFn, 16>(
    std::make_index_sequence<8>(),
    [](auto w) { return &SharedScoresQ8_0Blocks<decltype(w)::value>; });

}  // namespace

void SharedScoresQ8_0Avx512(const AttentionHead& head, int heads, const float* const* q,
                            const BlockQ8_0* keys, int64_t block_stride, int first, int last,
                            float* const* scores) {
  // The cases AttendQ8_0ByBlocks sends head by head (the two tables have the same entries).
  const int blocks = head.head_dim / kQK;
  if (!HasQ8_0Kernel(kSharedScoresQ8_0Avx512, head, block_stride)) {
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
