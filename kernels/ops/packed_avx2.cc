// The AVX2 kernels over PackedMatrix's AVX2 layout (see packed_matrix.h). A 16-row group is two
// halves of 8 rows; one 32-byte register holds 4 elements of each of 8 rows, so one vpmaddubsw
// against a broadcast of 4 activation bytes advances 8 rows by 4 elements, and each row's block
// sum ends in its own 32-bit lane: one conversion and one multiply-add per block scale 8 rows.
//
//   Q4_0: vpmaddubsw(nibbles 0..15, x) pairs are at most 2 x 15 x 127 = 3810, so a block's 8
//         steps add up in 16 bits (30480 < 32767) before one vpmaddwd; the nibbles' offset 8
//         comes back out as the block's correction (-8 x its sum of x).
//   Q8_0: vpmaddubsw(|x|, w * sign x): pairs at most 2 x 127 x 127 = 32258, each step widened
//         to 32 bits at once; exact because packing refused any weight of -128.
//
// One vector (decoding one sample): two groups side by side, so that one core keeps more
// memory requests in flight, and software prefetch. Batches: up to kMaxVectors vectors per pass
// over a half-group, each step's weights loaded (and Q4_0 nibbles split) once for all of them.
//
// Every vector goes through the same float operations in the same order whatever else is in
// the batch (the integer block sums are exact in any order), so a sample's logits do not depend
// on what it is decoded with.
#include "kernels/ops/intrinsics_warnings.h"  // before the intrinsics' headers

#include <immintrin.h>

#include <array>
#include <cstring>
#include <utility>

#include "kernels/ops/packed_matrix.h"

namespace evald::kernels {

namespace {

#define EVALD_AVX2_TARGET __attribute__((target("avx2,fma,f16c")))

// Vectors per pass of the batched kernel: 2 registers each, plus the step's weights and
// constants, in 16; larger batches go in chunks. Measured at n = 20 (1.1B shapes, one thread):
// 5 a little ahead of 2-4 and 6.
constexpr int kMaxVectors = 5;
// Groups read side by side by the single-vector kernel, and how far ahead in the weight stream
// software prefetches reach. Measured on Zen 3 (one thread, 1.1B shapes): 2 groups beat 1 and 4;
// prefetching 2 KiB ahead beats none, 1 KiB and 3-4 KiB (Q8_0 +10-20%, Q4_0 +5-20%).
constexpr int kSingleGroups = 2;
constexpr int64_t kPrefetchAhead = 2048;

template <int64_t kStride>
EVALD_AVX2_TARGET inline void PrefetchAhead(const uint8_t* block) {
#pragma GCC unroll 9
  for (int64_t line = 0; line < kStride; line += 64)
    _mm_prefetch(reinterpret_cast<const char*>(block + kPrefetchAhead + line), _MM_HINT_T0);
}

// Makes v opaque to the compiler at this point, in a register. The sums' adds are exact in any
// order, and GCC 12 uses that freedom to compute every vector's products of a block first and
// add them up afterwards, which holds more values than the 16 registers and spills most of them
// (103 stack accesses a block in the 5-vector Q4_0 kernel); pinned, each step's product is added
// as it is made.
EVALD_AVX2_TARGET inline void PinToRegister(__m256i& v) {
  __asm__("" : "+x"(v));
}

EVALD_AVX2_TARGET inline __m256i Broadcast4(const int8_t* x) {
  int32_t v;
  std::memcpy(&v, x, 4);
  return _mm256_set1_epi32(v);
}

// One half-group-block's weights in registers, as the multiplies take them.
template <bool kQ4>
struct HalfWeights {
  __m256i q[8];  // Q4_0: steps 0..7 = chunk c low (2c) and high (2c + 1); Q8_0: steps 0..7
  __m256 dw;     // the 8 rows' scales

  EVALD_AVX2_TARGET inline void Load(const uint8_t* block, int h) {
    if constexpr (kQ4) {
      const __m256i low4 = _mm256_set1_epi8(0x0F);
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) {
        const __m256i packed =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 64 * c + 32 * h));
        q[2 * c] = _mm256_and_si256(packed, low4);
        q[2 * c + 1] = _mm256_and_si256(_mm256_srli_epi16(packed, 4), low4);
      }
      dw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 256 + 16 * h)));
    } else {
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j)
        q[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 64 * j + 32 * h));
      dw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 512 + 16 * h)));
    }
  }
};

// The exact integer block sums of 8 rows against one vector's block (x, its magnitudes x_abs,
// its correction).
template <bool kQ4>
EVALD_AVX2_TARGET inline __m256i BlockSums(const HalfWeights<kQ4>& w, const int8_t* x,
                                           const int8_t* x_abs, int32_t correction) {
  const __m256i ones = _mm256_set1_epi16(1);
  if constexpr (kQ4) {
    // Step 2c: elements 8c..8c+3, step 2c + 1: 8c+4..8c+7; 16-bit sums stay below 30480.
    __m256i s16 = _mm256_maddubs_epi16(w.q[0], Broadcast4(x));
#pragma GCC unroll 8
    for (int j = 1; j < 8; ++j)
      s16 = _mm256_add_epi16(s16, _mm256_maddubs_epi16(w.q[j], Broadcast4(x + 4 * j)));
    return _mm256_add_epi32(_mm256_madd_epi16(s16, ones), _mm256_set1_epi32(correction));
  } else {
    __m256i even = _mm256_setzero_si256(), odd = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int j = 0; j < 8; j += 2) {
      const __m256i p0 = _mm256_maddubs_epi16(Broadcast4(x_abs + 4 * j),
                                              _mm256_sign_epi8(w.q[j], Broadcast4(x + 4 * j)));
      const __m256i p1 = _mm256_maddubs_epi16(
          Broadcast4(x_abs + 4 * j + 4), _mm256_sign_epi8(w.q[j + 1], Broadcast4(x + 4 * j + 4)));
      even = _mm256_add_epi32(even, _mm256_madd_epi16(p0, ones));
      odd = _mm256_add_epi32(odd, _mm256_madd_epi16(p1, ones));
    }
    return _mm256_add_epi32(even, odd);  // Q8_0's correction is 0 in this layout
  }
}

// One vector against G consecutive groups, group_bytes apart, read side by side.
template <bool kQ4, int G>
EVALD_AVX2_TARGET void SingleVectorKernel(const PackedMatrix& w, const PackedActivations& a,
                                          int64_t g, float* y) {
  const int64_t blocks = w.blocks();
  constexpr int64_t kStride = kQ4 ? PackedMatrix::kQ4Stride : PackedMatrix::kQ8Stride;
  const int64_t group_bytes = blocks * kStride;
  const uint8_t* p = w.group(g);
  __m256 acc[G][2];
#pragma GCC unroll 8
  for (int gg = 0; gg < G; ++gg) acc[gg][0] = acc[gg][1] = _mm256_setzero_ps();
  for (int64_t b = 0; b < blocks; ++b, p += kStride) {
    const int8_t* x = a.x + b * kQK;
    const int8_t* x_abs = kQ4 ? nullptr : a.x_abs + b * kQK;
    const __m256 dx = _mm256_set1_ps(a.scales[b]);
#pragma GCC unroll 8
    for (int gg = 0; gg < G; ++gg) {
      PrefetchAhead<kStride>(p + gg * group_bytes);
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        HalfWeights<kQ4> hw;
        hw.Load(p + gg * group_bytes, h);
        const __m256i s = BlockSums<kQ4>(hw, x, x_abs, a.corrections[b]);
        acc[gg][h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_mul_ps(hw.dw, dx), acc[gg][h]);
      }
    }
  }
#pragma GCC unroll 8
  for (int gg = 0; gg < G; ++gg) {
    _mm256_storeu_ps(y + (g + gg) * PackedMatrix::kRows, acc[gg][0]);
    _mm256_storeu_ps(y + (g + gg) * PackedMatrix::kRows + 8, acc[gg][1]);
  }
}

// One group against NV vectors starting at v0, one half at a time (the second half's pass reads
// the group from cache): per step, one weight register for every vector, whose sums stay in
// registers through the block (NV sums, NV accumulators and the step's weights fill the 16).
template <bool kQ4, int NV>
EVALD_AVX2_TARGET void GroupKernel(const PackedMatrix& w, const PackedActivations& a, int v0,
                                   int64_t g, float* y) {
  const int64_t blocks = w.blocks(), rows = w.rows();
  constexpr int64_t kStride = kQ4 ? PackedMatrix::kQ4Stride : PackedMatrix::kQ8Stride;
  const __m256i ones = _mm256_set1_epi16(1), low4 = _mm256_set1_epi8(0x0F);
  for (int h = 0; h < 2; ++h) {
    const uint8_t* p = w.group(g);
    __m256 acc[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[v] = _mm256_setzero_ps();
    for (int64_t b = 0; b < blocks; ++b, p += kStride) {
      if (h == 0) PrefetchAhead<kStride>(p);
      // Block-major activations: this block's vectors at fixed offsets.
      const int8_t* x = a.x + (b * a.nv + v0) * kQK;
      const int8_t* x_abs = kQ4 ? nullptr : a.x_abs + (b * a.nv + v0) * kQK;
      __m256i s[NV];
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) s[v] = _mm256_setzero_si256();
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) {
        __m256i q;
        if constexpr (kQ4) {
          // Step 2c: chunk c's low nibbles (elements 8c..8c+3), step 2c + 1 its high ones.
          q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 64 * (j / 2) + 32 * h));
          q = _mm256_and_si256(j % 2 ? _mm256_srli_epi16(q, 4) : q, low4);
        } else {
          q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 64 * j + 32 * h));
        }
#pragma GCC unroll 8
        for (int v = 0; v < NV; ++v) {
          const int8_t* xv = x + v * kQK + 4 * j;
          if constexpr (kQ4) {
            s[v] = _mm256_add_epi16(s[v], _mm256_maddubs_epi16(q, Broadcast4(xv)));
          } else {
            const __m256i prod = _mm256_maddubs_epi16(Broadcast4(x_abs + v * kQK + 4 * j),
                                                      _mm256_sign_epi8(q, Broadcast4(xv)));
            s[v] = _mm256_add_epi32(s[v], _mm256_madd_epi16(prod, ones));
          }
          PinToRegister(s[v]);
        }
      }
      const int64_t scales_at = (kQ4 ? 256 : 512) + 16 * h;
      const __m256 dw =
          _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + scales_at)));
      const float* dx = a.scales + b * a.nv + v0;
      const int32_t* corr = a.corrections + b * a.nv + v0;
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) {
        const __m256i sums =
            kQ4 ? _mm256_add_epi32(_mm256_madd_epi16(s[v], ones), _mm256_set1_epi32(corr[v]))
                : s[v];
        acc[v] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums), _mm256_mul_ps(dw, _mm256_set1_ps(dx[v])),
                                 acc[v]);
      }
    }
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v)
      _mm256_storeu_ps(y + (v0 + v) * rows + g * PackedMatrix::kRows + 8 * h, acc[v]);
  }
}

using Kernel = void (*)(const PackedMatrix&, const PackedActivations&, int, int64_t, float*);

// Widths 1..kMaxVectors: entry n - 1 for n vectors.
template <bool kQ4, size_t... I>
constexpr std::array<Kernel, sizeof...(I)> KernelTable(std::index_sequence<I...>) {
  return {&GroupKernel<kQ4, static_cast<int>(I) + 1>...};
}

constexpr auto kQ8Kernels = KernelTable<false>(std::make_index_sequence<kMaxVectors>());
constexpr auto kQ4Kernels = KernelTable<true>(std::make_index_sequence<kMaxVectors>());

}  // namespace

void PackedMatVecAvx2(const PackedMatrix& w, const PackedActivations& a, int64_t g_begin,
                      int64_t g_end, float* y) {
  const int nv = a.nv;
  if (nv == 1) {
    const bool q4 = w.type() == GgmlType::kQ4_0;
    int64_t g = g_begin;
    for (; g + kSingleGroups <= g_end; g += kSingleGroups)
      q4 ? SingleVectorKernel<true, kSingleGroups>(w, a, g, y)
         : SingleVectorKernel<false, kSingleGroups>(w, a, g, y);
    for (; g < g_end; ++g)
      q4 ? SingleVectorKernel<true, 1>(w, a, g, y) : SingleVectorKernel<false, 1>(w, a, g, y);
    return;
  }
  const auto& kernels = w.type() == GgmlType::kQ4_0 ? kQ4Kernels : kQ8Kernels;
  for (int64_t g = g_begin; g < g_end; ++g)
    ForEachVectorChunk(nv, kMaxVectors, [&](int v0, int n) { kernels[n - 1](w, a, v0, g, y); });
}

}  // namespace evald::kernels
