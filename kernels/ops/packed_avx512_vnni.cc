// The AVX-512 VNNI kernels over PackedMatrix (see packed_matrix.h for the layout). Per block of
// a 16-row group: the weights are loaded (and Q4_0 nibbles split) once into eight registers; then
// per vector eight vpdpbusd, starting from the offset correction (minus the weights' offset
// times the block sum of the activations) and reading the activations as embedded broadcasts
// from memory, advance all 16 rows; one conversion and one multiply-add scale the 16 block sums.
//
// Batches: unrolled at compile time for the number of vectors (2 to kMaxVectors), step j of
// every vector side by side, so the accumulators stay in registers and the vpdpbusd chains
// overlap: a batch costs the integer work and little else, which is what makes n samples of
// one prompt cheaper than n single-sample passes. One vector: eight groups read side by side.
//
// Every vector goes through the same float operations in the same order whatever else is in
// the batch (the integer block sums are exact in any order), so a sample's logits do not depend
// on what it is decoded with.
#include "kernels/ops/intrinsics_warnings.h"  // before the intrinsics' headers

#include <immintrin.h>

#include <array>
#include <utility>

#include "kernels/ops/packed_matrix.h"

namespace evald::kernels {

namespace {

// 10 accumulators, 10 chains and the block's scales fill 21 of the 32 registers; the weights
// take most of the rest (measured: 10 beats 7, and 16 with chains one after another).
constexpr int kMaxVectors = 10;
// Software prefetch this far ahead in the weight stream. The hardware prefetcher loses the
// stream where a batch's second chunk of vectors goes back over a group; measured at 2-8 KiB
// ahead: +25-40% for batches.
constexpr int64_t kPrefetchAhead = 4096;
// One vector reads kSingleGroups groups side by side, each stream prefetched this far ahead.
// Measured on the Zen 5 host (one thread, Q4_0 5632 x 2048 matrices streamed from memory,
// alternating in one process): 8 groups 1 KiB ahead 31.4 GB/s; 8 groups 2 KiB ahead 29.2, 4 KiB
// 28.8; 4 groups 4 KiB ahead (the kernel before) 26.5; 16 groups 28.8-29.8; 1-2 groups 23-25.
constexpr int kSingleGroups = 8;
constexpr int64_t kSinglePrefetchAhead = 1024;

#define EVALD_PACKED_TARGET __attribute__((target("avx512f,avx512bw,avx512vnni,avx512vl,f16c")))

// s += q x broadcast(4 bytes at x), the broadcast folded into the instruction as an embedded
// {1to16} memory operand (GCC 12 emits a separate vpbroadcastd for the intrinsic, one more
// instruction per vpdpbusd in the batched kernel's hot loop).
EVALD_PACKED_TARGET inline void DpbusdBroadcast(__m512i& s, __m512i q, const int8_t* x) {
  __asm__("vpdpbusd %2%{1to16%}, %1, %0"
          : "+v"(s)
          : "v"(q), "m"(*reinterpret_cast<const int32_t*>(x)));
}

// One group-block of weights in registers: eight vpdpbusd operands and the 16 row scales.
template <bool kQ4>
struct BlockWeights {
  __m512i q[8];
  __m512 dw;

  EVALD_PACKED_TARGET inline void Load(const uint8_t* p) {
    if constexpr (kQ4) {
      const __m512i low4 = _mm512_set1_epi8(0x0F);
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) {
        const __m512i packed = _mm512_loadu_si512(p + 64 * c);
        q[2 * c] = _mm512_and_si512(packed, low4);
        q[2 * c + 1] = _mm512_and_si512(_mm512_srli_epi16(packed, 4), low4);
      }
      dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 256)));
    } else {
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) q[j] = _mm512_loadu_si512(p + 64 * j);
      dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 512)));
    }
  }
};

// One 16-row group against NV vectors starting at v0.
template <bool kQ4, int NV>
EVALD_PACKED_TARGET void GroupKernel(const PackedMatrix& w, const PackedActivations& a, int v0,
                                     int64_t g, float* y) {
  const int64_t blocks = w.blocks(), rows = w.rows();
  constexpr int64_t kStride = kQ4 ? PackedMatrix::kQ4Stride : PackedMatrix::kQ8Stride;
  const uint8_t* p = w.group(g);
  // Block-major activations: this block's NV vectors at fixed offsets from three pointers.
  const int8_t* x = a.x + v0 * kQK;
  const float* dx = a.scales + v0;
  const int32_t* corr = a.corrections + v0;
  __m512 acc[NV];
#pragma GCC unroll 16
  for (int v = 0; v < NV; ++v) acc[v] = _mm512_setzero_ps();
  for (int64_t b = 0; b < blocks; ++b, p += kStride, x += a.nv * kQK, dx += a.nv, corr += a.nv) {
#pragma GCC unroll 9
    for (int64_t line = 0; line < kStride; line += 64)
      _mm_prefetch(reinterpret_cast<const char*>(p + kPrefetchAhead + line), _MM_HINT_T0);
    BlockWeights<kQ4> wb;
    wb.Load(p);
    // Step j for every vector before step j + 1: NV independent vpdpbusd side by side keep
    // both of its pipes busy despite each one's latency.
    __m512i s[NV];
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) s[v] = _mm512_set1_epi32(corr[v]);
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
#pragma GCC unroll 16
      for (int v = 0; v < NV; ++v) DpbusdBroadcast(s[v], wb.q[j], x + v * kQK + 4 * j);
    }
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v)
      acc[v] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s[v]),
                               _mm512_mul_ps(wb.dw, _mm512_set1_ps(dx[v])), acc[v]);
  }
#pragma GCC unroll 16
  for (int v = 0; v < NV; ++v)
    _mm512_storeu_ps(y + (v0 + v) * rows + g * PackedMatrix::kRows, acc[v]);
}

// One vector against G consecutive groups: G weight streams, group_bytes apart, read side by
// side. One core keeps more memory requests in flight over several streams than over one.
// Per row the arithmetic is the batched kernel's (the integer sums are exact in either order),
// so a vector's results are bit-identical alone and in a batch.
template <bool kQ4, int G>
EVALD_PACKED_TARGET void SingleVectorKernel(const PackedMatrix& w, const PackedActivations& a,
                                            int64_t g, float* y) {
  const int64_t blocks = w.blocks();
  constexpr int64_t kStride = kQ4 ? PackedMatrix::kQ4Stride : PackedMatrix::kQ8Stride;
  const int64_t group_bytes = blocks * kStride;
  const uint8_t* p = w.group(g);
  __m512 acc[G];
#pragma GCC unroll 8
  for (int gg = 0; gg < G; ++gg) acc[gg] = _mm512_setzero_ps();
  for (int64_t b = 0; b < blocks; ++b, p += kStride) {
    const int8_t* x = a.x + b * kQK;
    const __m512 dx = _mm512_set1_ps(a.scales[b]);
#pragma GCC unroll 8
    for (int gg = 0; gg < G; ++gg) {
      const uint8_t* pg = p + gg * group_bytes;
#pragma GCC unroll 9
      for (int64_t line = 0; line < kStride; line += 64)
        _mm_prefetch(reinterpret_cast<const char*>(pg + kSinglePrefetchAhead + line), _MM_HINT_T0);
      BlockWeights<kQ4> wb;
      wb.Load(pg);
      __m512i even = _mm512_set1_epi32(a.corrections[b]), odd = _mm512_setzero_si512();
#pragma GCC unroll 4
      for (int j = 0; j < 8; j += 2) {
        DpbusdBroadcast(even, wb.q[j], x + 4 * j);
        DpbusdBroadcast(odd, wb.q[j + 1], x + 4 * j + 4);
      }
      acc[gg] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(even, odd)),
                                _mm512_mul_ps(wb.dw, dx), acc[gg]);
    }
  }
#pragma GCC unroll 8
  for (int gg = 0; gg < G; ++gg) _mm512_storeu_ps(y + (g + gg) * PackedMatrix::kRows, acc[gg]);
}

using Kernel = void (*)(const PackedMatrix&, const PackedActivations&, int, int64_t, float*);

// Widths 2..kMaxVectors (one vector goes to SingleVectorKernel): entry n - 2 for n vectors.
template <bool kQ4, size_t... I>
constexpr std::array<Kernel, sizeof...(I)> KernelTable(std::index_sequence<I...>) {
  return {&GroupKernel<kQ4, static_cast<int>(I) + 2>...};
}

constexpr auto kQ8Kernels = KernelTable<false>(std::make_index_sequence<kMaxVectors - 1>());
constexpr auto kQ4Kernels = KernelTable<true>(std::make_index_sequence<kMaxVectors - 1>());

}  // namespace

void PackedMatVecAvx512Vnni(const PackedMatrix& w, const PackedActivations& a, int64_t g_begin,
                            int64_t g_end, float* y) {
  const int nv = a.nv;
  if (nv == 1) {
    // One vector (decoding one sample): kSingleGroups groups at a time, the rest one by one.
    const bool q4 = w.type() == GgmlType::kQ4_0;
    int64_t g = g_begin;
    for (; g + kSingleGroups <= g_end; g += kSingleGroups)
      q4 ? SingleVectorKernel<true, kSingleGroups>(w, a, g, y)
         : SingleVectorKernel<false, kSingleGroups>(w, a, g, y);
    if (g + 4 <= g_end) {
      q4 ? SingleVectorKernel<true, 4>(w, a, g, y) : SingleVectorKernel<false, 4>(w, a, g, y);
      g += 4;
    }
    for (; g < g_end; ++g)
      q4 ? SingleVectorKernel<true, 1>(w, a, g, y) : SingleVectorKernel<false, 1>(w, a, g, y);
    return;
  }
  // Batches go in chunks of 2..kMaxVectors (nv >= 2 here, so never a chunk of one).
  const auto& kernels = w.type() == GgmlType::kQ4_0 ? kQ4Kernels : kQ8Kernels;
  for (int64_t g = g_begin; g < g_end; ++g)
    ForEachVectorChunk(nv, kMaxVectors, [&](int v0, int n) { kernels[n - 2](w, a, v0, g, y); });
}

}  // namespace evald::kernels
