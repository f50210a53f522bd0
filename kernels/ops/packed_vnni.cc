// The AVX-512 VNNI kernel over PackedMatrix (see packed_matrix.h for the layout). Per block and
// vector: eight vpdpbusd (two independent chains, activations broadcast from memory) advance 16
// rows, one subtraction takes the weights' offset back out, one conversion and one
// multiply-add scale the 16 block sums.
// Every vector goes through the same operations in the same order whatever else is in the
// batch, so a sample's logits do not depend on what it is decoded with.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <immintrin.h>

#include <cstring>

#include "kernels/ops/packed_matrix.h"

namespace evald::kernels {

namespace {

__attribute__((target("avx512f,avx512bw,avx512vnni"))) inline __m512i Broadcast4(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// G row groups (G x 16 rows) against up to kMax vectors: the weights of a block are loaded once
// for all vectors, each activation broadcast once for all G groups.
template <bool kQ4, int G, int kMax>
__attribute__((target("avx512f,avx512bw,avx512vnni,avx512vl,f16c"))) void GroupKernel(
    const PackedMatrix& w, const PackedActivations& a, int v0, int nv, int64_t g, float* y) {
  const int64_t blocks = w.blocks(), stride = w.block_stride(), cols = w.cols(), rows = w.rows();
  const int64_t group_bytes = blocks * stride;
  const uint8_t* base = w.group(g);
  const int32_t offset = kQ4 ? 8 : 128;
  __m512 acc[G][kMax];
  for (int gg = 0; gg < G; ++gg)
    for (int v = 0; v < nv; ++v) acc[gg][v] = _mm512_setzero_ps();
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  for (int64_t b = 0; b < blocks; ++b, base += stride) {
    __m512i q[G][8];
    __m512 dw[G];
    for (int gg = 0; gg < G; ++gg) {
      const uint8_t* p = base + gg * group_bytes;
      if constexpr (kQ4) {
        for (int c = 0; c < 4; ++c) {
          const __m512i packed = _mm512_loadu_si512(p + 64 * c);
          q[gg][2 * c] = _mm512_and_si512(packed, low4);
          q[gg][2 * c + 1] = _mm512_and_si512(_mm512_srli_epi16(packed, 4), low4);
        }
        dw[gg] = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 256)));
      } else {
        for (int j = 0; j < 8; ++j) q[gg][j] = _mm512_loadu_si512(p + 64 * j);
        dw[gg] = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 512)));
      }
    }
    for (int v = 0; v < nv; ++v) {
      const int vv = v0 + v;
      const int8_t* x = a.x + vv * cols + b * kQK;
      const __m512i corr = _mm512_set1_epi32(offset * a.sums[vv * blocks + b]);
      const __m512 dx = _mm512_set1_ps(a.scales[vv * blocks + b]);
      for (int gg = 0; gg < G; ++gg) {
        // Two independent chains of four vpdpbusd each.
        __m512i s0 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q[gg][0], Broadcast4(x + 0));
        __m512i s1 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q[gg][1], Broadcast4(x + 4));
        s0 = _mm512_dpbusd_epi32(s0, q[gg][2], Broadcast4(x + 8));
        s1 = _mm512_dpbusd_epi32(s1, q[gg][3], Broadcast4(x + 12));
        s0 = _mm512_dpbusd_epi32(s0, q[gg][4], Broadcast4(x + 16));
        s1 = _mm512_dpbusd_epi32(s1, q[gg][5], Broadcast4(x + 20));
        s0 = _mm512_dpbusd_epi32(s0, q[gg][6], Broadcast4(x + 24));
        s1 = _mm512_dpbusd_epi32(s1, q[gg][7], Broadcast4(x + 28));
        const __m512i sum = _mm512_sub_epi32(_mm512_add_epi32(s0, s1), corr);
        acc[gg][v] =
            _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), _mm512_mul_ps(dw[gg], dx), acc[gg][v]);
      }
    }
  }
  for (int gg = 0; gg < G; ++gg)
    for (int v = 0; v < nv; ++v)
      _mm512_storeu_ps(y + (v0 + v) * rows + (g + gg) * PackedMatrix::kRows, acc[gg][v]);
}

}  // namespace

void PackedMatVecAvx512Vnni(const PackedMatrix& w, const PackedActivations& a, int nv,
                            int64_t g_begin, int64_t g_end, float* y) {
  // One vector (decoding one sample): groups one at a time. Batches: two groups at a time,
  // four vectors each, so that a broadcast serves 32 rows and the registers hold it all.
  const bool q4 = w.type() == GgmlType::kQ4_0;
  int64_t g = g_begin;
  if (nv > 1) {
    for (; g + 1 < g_end; g += 2)
      for (int v0 = 0; v0 < nv; v0 += 4) {
        const int n = std::min(4, nv - v0);
        q4 ? GroupKernel<true, 2, 4>(w, a, v0, n, g, y)
           : GroupKernel<false, 2, 4>(w, a, v0, n, g, y);
      }
  }
  for (; g < g_end; ++g)
    for (int v0 = 0; v0 < nv; v0 += 8) {
      const int n = std::min(8, nv - v0);
      q4 ? GroupKernel<true, 1, 8>(w, a, v0, n, g, y) : GroupKernel<false, 1, 8>(w, a, v0, n, g, y);
    }
}

}  // namespace evald::kernels
