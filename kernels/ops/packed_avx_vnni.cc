// The batched kernels over PackedMatrix's AVX2 layout for CPUs with AVX-VNNI (vpdpbusd on 256
// bits) but no AVX-512: one instruction multiplies and adds 4 elements of 8 rows into their
// 32-bit sums, where AVX2 needs vpmaddubsw and an add (and, for Q8_0, a widening vpmaddwd).
// A single vector is bound mostly by memory; its kernel reads four groups side by side, each
// half's steps in two vpdpbusd chains (even and odd) so that the chains are half as long.
//
//   Q4_0: vpdpbusd(nibbles 0..15, x), starting from the block's correction (-8 x its sum of x).
//   Q8_0: vpdpbusd(|x|, w * sign x), exact because packing refused any weight of -128.
//
// Per row, the float work is the AVX2 kernels' (one conversion of the exact integer block sum,
// the scales' product, one multiply-add, in the same order), so a vector's results are
// bit-identical alone and in a batch.
#include "kernels/ops/intrinsics_warnings.h"  // before the intrinsics' headers

#include <immintrin.h>

#include <array>
#include <cstring>
#include <utility>

#include "kernels/ops/packed_matrix.h"

namespace evald::kernels {

namespace {

#define EVALD_AVX_VNNI_TARGET __attribute__((target("avx2,avxvnni,fma,f16c")))

// Vectors per pass: two sums and two accumulators each, beside two weight registers and a
// broadcast, in 16 registers.
constexpr int kMaxVectors = 4;
// How far ahead in each weight stream software prefetches reach, batches and single vectors.
constexpr int64_t kPrefetchAhead = 2048;
// One vector reads four groups side by side: on the Zen 5 host (EVALD_ISA=avx-vnni, 1.1B, one
// thread, alternating runs) Q4_0 decoded at 34-37 tok/s this way against 29-35 with the AVX2
// kernel and Q8_0 at 23-26 against 18.5-19.3; two groups, or prefetching 4 and 8 KiB ahead,
// were no better (8 KiB: 27-28.5 for Q4_0).
constexpr int kSingleGroups = 4;

EVALD_AVX_VNNI_TARGET inline __m256i Broadcast4(const int8_t* x) {
  int32_t v;
  std::memcpy(&v, x, 4);
  return _mm256_set1_epi32(v);
}

template <int64_t kStride>
EVALD_AVX_VNNI_TARGET inline void PrefetchAhead(const uint8_t* block) {
#pragma GCC unroll 9
  for (int64_t line = 0; line < kStride; line += 64)
    _mm_prefetch(reinterpret_cast<const char*>(block + kPrefetchAhead + line), _MM_HINT_T0);
}

// Step j's weights of half h (8 rows) of a group-block, as vpdpbusd takes them. Q4_0: step 2c
// is chunk c's low nibbles (elements 8c..8c+3), step 2c + 1 its high ones.
template <bool kQ4>
EVALD_AVX_VNNI_TARGET inline __m256i StepWeights(const uint8_t* block, int j, int h) {
  if constexpr (kQ4) {
    const __m256i q =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 64 * (j / 2) + 32 * h));
    return _mm256_and_si256(j % 2 ? _mm256_srli_epi16(q, 4) : q, _mm256_set1_epi8(0x0F));
  } else {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 64 * j + 32 * h));
  }
}

// s + one step's products: Q4_0 nibbles x x, Q8_0 |x| x (w * sign x); xv and xv_abs are the
// step's 4 activation bytes (and their magnitudes) broadcast.
template <bool kQ4>
EVALD_AVX_VNNI_TARGET inline __m256i Step(__m256i s, __m256i q, __m256i xv, __m256i xv_abs) {
  if constexpr (kQ4) return _mm256_dpbusd_avx_epi32(s, q, xv);
  return _mm256_dpbusd_avx_epi32(s, xv_abs, _mm256_sign_epi8(q, xv));
}

// The scales of half h's 8 rows.
template <bool kQ4>
EVALD_AVX_VNNI_TARGET inline __m256 HalfScales(const uint8_t* block, int h) {
  const int64_t at = (kQ4 ? 256 : 512) + 16 * h;
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + at)));
}

// One group against NV vectors starting at v0, both 8-row halves in one pass: per step, the
// halves' two weight registers against one broadcast of each vector's 4 activation bytes.
template <bool kQ4, int NV>
EVALD_AVX_VNNI_TARGET void GroupKernel(const PackedMatrix& w, const PackedActivations& a, int v0,
                                       int64_t g, float* y) {
  const int64_t blocks = w.blocks(), rows = w.rows();
  constexpr int64_t kStride = kQ4 ? PackedMatrix::kQ4Stride : PackedMatrix::kQ8Stride;
  const uint8_t* p = w.group(g);
  __m256 acc[NV][2];
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) acc[v][0] = acc[v][1] = _mm256_setzero_ps();
  for (int64_t b = 0; b < blocks; ++b, p += kStride) {
    PrefetchAhead<kStride>(p);
    // Block-major activations: this block's vectors at fixed offsets.
    const int8_t* x = a.x + (b * a.nv + v0) * kQK;
    const int8_t* x_abs = kQ4 ? nullptr : a.x_abs + (b * a.nv + v0) * kQK;
    const int32_t* corr = a.corrections + b * a.nv + v0;
    __m256i s[NV][2];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v)
      s[v][0] = s[v][1] = kQ4 ? _mm256_set1_epi32(corr[v]) : _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
      const __m256i q[2] = {StepWeights<kQ4>(p, j, 0), StepWeights<kQ4>(p, j, 1)};
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) {
        const __m256i xv = Broadcast4(x + v * kQK + 4 * j);
        const __m256i xv_abs = kQ4 ? xv : Broadcast4(x_abs + v * kQK + 4 * j);
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) s[v][h] = Step<kQ4>(s[v][h], q[h], xv, xv_abs);
      }
    }
    const float* dx = a.scales + b * a.nv + v0;
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m256 dw = HalfScales<kQ4>(p, h);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v)
        acc[v][h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s[v][h]),
                                    _mm256_mul_ps(dw, _mm256_set1_ps(dx[v])), acc[v][h]);
    }
  }
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v)
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h)
      _mm256_storeu_ps(y + (v0 + v) * rows + g * PackedMatrix::kRows + 8 * h, acc[v][h]);
}

// One vector against G consecutive groups, group_bytes apart, read side by side (as the AVX2
// single-vector kernel reads them). Each half's 8 steps go into two sums, even and odd steps,
// so that the vpdpbusd chains are half as long; the integer block sum is exact either way.
template <bool kQ4, int G>
EVALD_AVX_VNNI_TARGET void SingleVectorKernel(const PackedMatrix& w, const PackedActivations& a,
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
      const uint8_t* block = p + gg * group_bytes;
      PrefetchAhead<kStride>(block);
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        __m256i even = kQ4 ? _mm256_set1_epi32(a.corrections[b]) : _mm256_setzero_si256();
        __m256i odd = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int j = 0; j < 8; ++j) {
          __m256i& s = j % 2 ? odd : even;
          const __m256i xv = Broadcast4(x + 4 * j);
          s = Step<kQ4>(s, StepWeights<kQ4>(block, j, h), xv, kQ4 ? xv : Broadcast4(x_abs + 4 * j));
        }
        acc[gg][h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(even, odd)),
                                     _mm256_mul_ps(HalfScales<kQ4>(block, h), dx), acc[gg][h]);
      }
    }
  }
#pragma GCC unroll 8
  for (int gg = 0; gg < G; ++gg)
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h)
      _mm256_storeu_ps(y + (g + gg) * PackedMatrix::kRows + 8 * h, acc[gg][h]);
}

using Kernel = void (*)(const PackedMatrix&, const PackedActivations&, int, int64_t, float*);

// Widths 2..kMaxVectors: entry n - 2 for n vectors.
template <bool kQ4, size_t... I>
constexpr std::array<Kernel, sizeof...(I)> KernelTable(std::index_sequence<I...>) {
  return {&GroupKernel<kQ4, static_cast<int>(I) + 2>...};
}

constexpr auto kQ8Kernels = KernelTable<false>(std::make_index_sequence<kMaxVectors - 1>());
constexpr auto kQ4Kernels = KernelTable<true>(std::make_index_sequence<kMaxVectors - 1>());

}  // namespace

void PackedMatVecAvxVnni(const PackedMatrix& w, const PackedActivations& a, int64_t g_begin,
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
  // Chunks of 2..kMaxVectors (nv >= 2 here, so never a chunk of one).
  const auto& kernels = w.type() == GgmlType::kQ4_0 ? kQ4Kernels : kQ8Kernels;
  for (int64_t g = g_begin; g < g_end; ++g)
    ForEachVectorChunk(nv, kMaxVectors, [&](int v0, int n) { kernels[n - 2](w, a, v0, g, y); });
}

}  // namespace evald::kernels
