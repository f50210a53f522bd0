// Attention over a float KV cache with AVX2 and FMA: 8 lanes, the query heads of a KV head
// together, 8 scores at a time, the vector exp for the softmax numerators. Equal to the scalar
// oracle up to summation order, 2 ulp in exp and the one division by the sum at the end.
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

// head_dim = 8 L, `heads` <= kMaxAttendGroup query heads over one KV head: as the AVX-512 kernel
// (attention_avx512.cc) with 8 lanes. Each block of 8 keys and 8 values is read from memory once
// for the group; 8 scores at a time; the values weighted in two chains where the head is narrow
// (one where its L registers already keep the multiply-adds busy).
template <int L>
EVALD_ATTEND_AVX2_TARGET void AttendGroupLanes(const AttentionHead& h, int heads, const float* q,
                                               const float* keys, const float* values, int first,
                                               int last, float* scores, float* out) {
  constexpr int kDim = 8 * L;
  const int64_t span = last + 1;  // scores of head g at scores + g * span
  const __m256 scale = _mm256_set1_ps(h.scale);
  float max[kMaxAttendGroup];
  for (int g = 0; g < heads; ++g) max[g] = -INFINITY;
  const float* rows[kBlock];
  for (int t = first; t <= last; t += kBlock) {
    const int n = std::min(kBlock, last + 1 - t);
    for (int j = 0; j < n; ++j) rows[j] = keys + h.At(t + j);
    const __m256i valid = FirstLanes(n);
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
      alignas(32) float s[kBlock];
      _mm256_store_ps(s, _mm256_mul_ps(TransposedSums(products), scale));
      for (int j = 0; j < n; ++j) {
        s[j] = Cap(s[j], h.softcap);
        max[g] = std::max(max[g], s[j]);
      }
      _mm256_maskstore_ps(scores + g * span + t, valid, _mm256_load_ps(s));
    }
  }
  // Numerators e^(score - max), in place, and the inverse of their sum, per head.
  float inverse[kMaxAttendGroup];
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
  for (int i = 0; i < heads * kDim; ++i) out[i] = 0.0f;
  constexpr int kChains = L >= 4 ? 1 : 2;
  for (int t = first; t <= last; t += kBlock) {
    const int n = std::min(kBlock, last + 1 - t);
    for (int j = 0; j < n; ++j) rows[j] = values + h.At(t + j);
    for (int g = 0; g < heads; ++g) {
      const float* e = scores + g * span + t;
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
      float* o = out + g * kDim;
#pragma GCC unroll 32
      for (int l = 0; l < L; ++l) {
        __m256 block = acc[0][l];
        if constexpr (kChains == 2) block = _mm256_add_ps(block, acc[1][l]);
        _mm256_storeu_ps(o + 8 * l, _mm256_add_ps(_mm256_loadu_ps(o + 8 * l), block));
      }
    }
  }
  for (int g = 0; g < heads; ++g) {
    const __m256 inv = _mm256_set1_ps(inverse[g]);
    float* o = out + g * kDim;
#pragma GCC unroll 32
    for (int l = 0; l < L; ++l)
      _mm256_storeu_ps(o + 8 * l, _mm256_mul_ps(_mm256_loadu_ps(o + 8 * l), inv));
  }
}

template <size_t... I>
constexpr std::array<AttendGroupFn, sizeof...(I)> AttendTable(std::index_sequence<I...>) {
  return {&AttendGroupLanes<static_cast<int>(I) + 1>...};
}

// Head sizes up to 256 (Gemma's), in steps of 8.
constexpr auto kAttendAvx2 = AttendTable(std::make_index_sequence<32>());

}  // namespace

void AttendAvx2(const AttentionHead& head, int heads, const float* q, const float* keys,
                const float* values, int first, int last, float* scores, float* out) {
  AttendByWidth(kAttendAvx2, 8, head, heads, q, keys, values, first, last, scores, out);
}

}  // namespace evald::kernels
