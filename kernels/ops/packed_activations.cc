#include "kernels/ops/packed_activations.h"

#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <immintrin.h>

#include <cmath>
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

PackedActivations PackedActivationBuffer::Prepare(const float* x, int batch, int64_t cols,
                                                  GgmlType type, Isa isa, ThreadPool* pool) {
  const int64_t blocks = cols / kQK;
  const size_t nb = static_cast<size_t>(batch * blocks);
  x_.resize(nb * kQK);
  scales_.resize(nb);
  corrections_.resize(nb);
  const int32_t offset = PackedWeightOffset(type);
  const bool vector = isa == Isa::kAvx512Vnni;
  // Blocks [begin, end) of every vector: each block index owns its own entries.
  auto quantize = [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      for (int v = 0; v < batch; ++v) {
        const size_t i = static_cast<size_t>(b * batch + v);
        uint16_t d;
        const float* xb = x + v * cols + b * kQK;
        const int32_t sum = vector ? QuantizeBlockQ8_0Avx512(xb, &x_[i * kQK], &d)
                                   : QuantizeBlockScalar(xb, &x_[i * kQK], &d);
        scales_[i] = Fp16ToFp32(d);
        corrections_[i] = -offset * sum;
      }
    }
  };
  // Worth splitting only for batches (one vector's blocks take a microsecond or two).
  if (pool && batch > 1) {
    pool->ParallelFor(blocks, quantize);
  } else {
    quantize(0, blocks);
  }
  return {batch, x_.data(), scales_.data(), corrections_.data()};
}

}  // namespace evald::kernels
