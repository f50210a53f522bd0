#include "kernels/ops/packed_activations.h"

#include "kernels/ops/intrinsics_warnings.h"  // before the intrinsics' headers

#include <immintrin.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "kernels/ops/thread_pool.h"
#include "kernels/quant/blocks.h"
#include "kernels/quant/fp16.h"

namespace evald::kernels {

namespace {

#define EVALD_AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,f16c")))

// roundf (halves away from zero) of 16 floats: truncate, then step away from zero where the
// part cut off is at least one half. y - trunc(y) is exact for every float, so the comparison
// decides exactly as roundf does (adding 0.5 first would not: 0.49999997 + 0.5 rounds to 1).
EVALD_AVX512_TARGET inline __m512 RoundHalfAway(__m512 y) {
  const __m512 t = _mm512_roundscale_ps(y, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __m512 frac = _mm512_abs_ps(_mm512_sub_ps(y, t));
  const __mmask16 away = _mm512_cmp_ps_mask(frac, _mm512_set1_ps(0.5f), _CMP_GE_OQ);
  const __m512 sign = _mm512_castsi512_ps(
      _mm512_and_si512(_mm512_castps_si512(y), _mm512_set1_epi32(static_cast<int>(0x80000000u))));
  const __m512 one = _mm512_or_ps(_mm512_set1_ps(1.0f), sign);
  return _mm512_mask_add_ps(t, away, t, one);
}

#define EVALD_AVX2_TARGET __attribute__((target("avx2,fma,f16c")))

// RoundHalfAway for 8 floats with AVX2 compares.
EVALD_AVX2_TARGET inline __m256 RoundHalfAway8(__m256 y) {
  const __m256 t = _mm256_round_ps(y, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __m256 sign_bit = _mm256_set1_ps(-0.0f);
  const __m256 frac = _mm256_andnot_ps(sign_bit, _mm256_sub_ps(y, t));
  const __m256 away = _mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ);
  const __m256 one = _mm256_or_ps(_mm256_set1_ps(1.0f), _mm256_and_ps(y, sign_bit));
  return _mm256_add_ps(t, _mm256_and_ps(away, one));
}

int32_t QuantizeBlockScalar(const float* x, int8_t* q, uint16_t* d) {
  BlockQ8_0 block;
  QuantizeRowQ8_0(x, &block, kQK);
  std::memcpy(q, block.qs, kQK);
  *d = block.d;
  int32_t sum = 0;
  for (int8_t v : block.qs) sum += v;
  return sum;
}

}  // namespace

EVALD_AVX512_TARGET int32_t QuantizeBlockQ8_0Avx512(const float* x, int8_t* q, uint16_t* d) {
  const __m512 lo = _mm512_loadu_ps(x), hi = _mm512_loadu_ps(x + 16);
  const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(lo), _mm512_abs_ps(hi)));
  // The same scalar steps as QuantizeRowQ8_0: the scale, its inverse, the half conversion.
  const float scale = amax / 127.0f;
  const float inverse = scale != 0 ? 1.0f / scale : 0.0f;
  *d = Fp32ToFp16(scale);
  const __m512 id = _mm512_set1_ps(inverse);
  const __m512i qlo = _mm512_cvtps_epi32(RoundHalfAway(_mm512_mul_ps(lo, id)));
  const __m512i qhi = _mm512_cvtps_epi32(RoundHalfAway(_mm512_mul_ps(hi, id)));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(q), _mm512_cvtepi32_epi8(qlo));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 16), _mm512_cvtepi32_epi8(qhi));
  return _mm512_reduce_add_epi32(_mm512_add_epi32(qlo, qhi));
}

EVALD_AVX2_TARGET int32_t QuantizeBlockQ8_0Avx2(const float* x, int8_t* q, uint16_t* d) {
  __m256 v[4];
  __m256 amax = _mm256_setzero_ps();
  const __m256 sign_bit = _mm256_set1_ps(-0.0f);
  for (int i = 0; i < 4; ++i) {
    v[i] = _mm256_loadu_ps(x + 8 * i);
    amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign_bit, v[i]));
  }
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  const float scale = _mm_cvtss_f32(m) / 127.0f;
  const float inverse = scale != 0 ? 1.0f / scale : 0.0f;
  *d = Fp32ToFp16(scale);
  const __m256 id = _mm256_set1_ps(inverse);
  __m256i n[4];
  for (int i = 0; i < 4; ++i) n[i] = _mm256_cvtps_epi32(RoundHalfAway8(_mm256_mul_ps(v[i], id)));
  // Saturating packs work in 128-bit lanes: 32 -> 16 -> 8 bits leaves the dwords of the four
  // inputs interleaved as 0 2 1 3 | ... ; one permute puts them back in order.
  const __m256i w16a = _mm256_packs_epi32(n[0], n[1]), w16b = _mm256_packs_epi32(n[2], n[3]);
  const __m256i w8 = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(w16a, w16b),
                                                 _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), w8);
  __m256i sum = _mm256_add_epi32(_mm256_add_epi32(n[0], n[1]), _mm256_add_epi32(n[2], n[3]));
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

PackedActivations PackedActivationBuffer::Prepare(const float* x, int batch, int64_t cols,
                                                  GgmlType type, Isa layout, ThreadPool* pool) {
  const int64_t blocks = cols / kQK;
  const size_t nb = static_cast<size_t>(batch * blocks);
  x_.resize(nb * kQK);
  scales_.resize(nb);
  corrections_.resize(nb);
  const int32_t offset = PackedWeightOffset(type, layout);
  const bool magnitudes = layout == Isa::kAvx2 && type == GgmlType::kQ8_0;
  if (magnitudes) x_abs_.resize(nb * kQK);
  auto quantize_block = layout == Isa::kAvx512Vnni ? &QuantizeBlockQ8_0Avx512
                        : layout == Isa::kAvx2     ? &QuantizeBlockQ8_0Avx2
                                                   : &QuantizeBlockScalar;
  // Blocks [begin, end) of every vector: each block index owns its own entries.
  auto quantize = [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      for (int v = 0; v < batch; ++v) {
        const size_t i = static_cast<size_t>(b * batch + v);
        uint16_t d;
        const float* xb = x + v * cols + b * kQK;
        const int32_t sum = quantize_block(xb, &x_[i * kQK], &d);
        scales_[i] = Fp16ToFp32(d);
        corrections_[i] = -offset * sum;
        if (magnitudes)
          for (size_t k = i * kQK; k < (i + 1) * kQK; ++k)
            x_abs_[k] = static_cast<int8_t>(std::abs(x_[k]));  // |x| <= 127
      }
    }
  };
  // Worth splitting only for batches (one vector's blocks take a microsecond or two).
  if (pool && batch > 1) {
    pool->ParallelFor(blocks, quantize);
  } else {
    quantize(0, blocks);
  }
  return {batch, x_.data(), scales_.data(), corrections_.data(),
          magnitudes ? x_abs_.data() : nullptr};
}

}  // namespace evald::kernels
