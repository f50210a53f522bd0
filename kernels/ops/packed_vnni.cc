// The AVX-512 VNNI kernel over PackedMatrix (see packed_matrix.h for the layout). Per block and
// vector: eight vpdpbusd (two independent chains) advance 16 rows, one subtraction applies the
// unsigned-operand correction, one conversion and one multiply-add scale the 16 block sums.
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

template <bool kQ4>
__attribute__((target("avx512f,avx512bw,avx512vnni,avx512vl,f16c"))) void GroupKernel(
    const PackedMatrix& w, const PackedActivations& a, int v0, int nv, int64_t g, float* y) {
  constexpr int kMax = 8;
  const int64_t blocks = w.blocks(), stride = w.block_stride(), cols = w.cols(), rows = w.rows();
  const uint8_t* base = w.group(g);
  __m512 acc[kMax];
  for (int v = 0; v < nv; ++v) acc[v] = _mm512_setzero_ps();
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  for (int64_t b = 0; b < blocks; ++b, base += stride) {
    __m512i q[8];
    __m512 dw;
    __m512i corr = _mm512_setzero_si512();
    if constexpr (kQ4) {
      for (int c = 0; c < 4; ++c) {
        const __m512i packed = _mm512_loadu_si512(base + 64 * c);
        q[2 * c] = _mm512_and_si512(packed, low4);
        q[2 * c + 1] = _mm512_and_si512(_mm512_srli_epi16(packed, 4), low4);
      }
      dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(base + 256)));
    } else {
      for (int j = 0; j < 8; ++j) q[j] = _mm512_loadu_si512(base + 64 * j);
      dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(base + 512)));
      corr = _mm512_slli_epi32(
          _mm512_cvtepi16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(base + 544))),
          7);
    }
    for (int v = 0; v < nv; ++v) {
      const int vv = v0 + v;
      __m512i s0 = _mm512_setzero_si512(), s1 = _mm512_setzero_si512();
      if constexpr (kQ4) {
        // Raw nibbles (unsigned) x signed activations; the -8 comes back as -8 * sum(x).
        const int8_t* x = a.x + vv * cols + b * kQK;
        s0 = _mm512_dpbusd_epi32(s0, q[0], Broadcast4(x + 0));
        s1 = _mm512_dpbusd_epi32(s1, q[1], Broadcast4(x + 4));
        s0 = _mm512_dpbusd_epi32(s0, q[2], Broadcast4(x + 8));
        s1 = _mm512_dpbusd_epi32(s1, q[3], Broadcast4(x + 12));
        s0 = _mm512_dpbusd_epi32(s0, q[4], Broadcast4(x + 16));
        s1 = _mm512_dpbusd_epi32(s1, q[5], Broadcast4(x + 20));
        s0 = _mm512_dpbusd_epi32(s0, q[6], Broadcast4(x + 24));
        s1 = _mm512_dpbusd_epi32(s1, q[7], Broadcast4(x + 28));
        corr = _mm512_set1_epi32(a.sum8[vv * blocks + b]);
      } else {
        // Unsigned activations (x + 128) x signed weights; the +128 comes back as 128 * sum(w).
        const uint8_t* x = a.xu + vv * cols + b * kQK;
        s0 = _mm512_dpbusd_epi32(s0, Broadcast4(x + 0), q[0]);
        s1 = _mm512_dpbusd_epi32(s1, Broadcast4(x + 4), q[1]);
        s0 = _mm512_dpbusd_epi32(s0, Broadcast4(x + 8), q[2]);
        s1 = _mm512_dpbusd_epi32(s1, Broadcast4(x + 12), q[3]);
        s0 = _mm512_dpbusd_epi32(s0, Broadcast4(x + 16), q[4]);
        s1 = _mm512_dpbusd_epi32(s1, Broadcast4(x + 20), q[5]);
        s0 = _mm512_dpbusd_epi32(s0, Broadcast4(x + 24), q[6]);
        s1 = _mm512_dpbusd_epi32(s1, Broadcast4(x + 28), q[7]);
      }
      const __m512i sum = _mm512_sub_epi32(_mm512_add_epi32(s0, s1), corr);
      const __m512 d = _mm512_mul_ps(dw, _mm512_set1_ps(a.scales[vv * blocks + b]));
      acc[v] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), d, acc[v]);
    }
  }
  for (int v = 0; v < nv; ++v)
    _mm512_storeu_ps(y + (v0 + v) * rows + g * PackedMatrix::kRows, acc[v]);
}

}  // namespace

void PackedMatVecAvx512Vnni(const PackedMatrix& w, const PackedActivations& a, int nv,
                            int64_t g_begin, int64_t g_end, float* y) {
  for (int64_t g = g_begin; g < g_end; ++g) {
    for (int v0 = 0; v0 < nv; v0 += 8) {
      const int n = std::min(8, nv - v0);
      if (w.type() == GgmlType::kQ4_0) {
        GroupKernel<true>(w, a, v0, n, g, y);
      } else {
        GroupKernel<false>(w, a, v0, n, g, y);
      }
    }
  }
}

}  // namespace evald::kernels
