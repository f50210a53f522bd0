#include "kernels/ops/packed_activations.h"

#include "kernels/ops/intrinsics_warnings.h"  // before the intrinsics' headers

#include <immintrin.h>

#include <array>
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

namespace {

// Index vectors for _mm512_permutex2var_epi32 over two registers a (lanes 0-15) and b (16-31)
// that each hold 16 / kWidth blocks of kWidth lanes: the result holds a's blocks, then b's, of
// kWidth / 2 lanes each; lane p of a result block takes lane p of its block (low) or lane
// p + kWidth / 2 (high). One op over the low and high picks halves every block's lanes.
template <int kWidth, bool kHigh>
constexpr std::array<int32_t, 16> HalvingIndex() {
  std::array<int32_t, 16> index{};
  constexpr int kHalf = kWidth / 2, kBlocksPerRegister = 16 / kWidth;
  for (int lane = 0; lane < 16; ++lane) {
    const int block = lane / kHalf, at = lane % kHalf;
    const int reg = block < kBlocksPerRegister ? 0 : 1;
    index[static_cast<size_t>(lane)] =
        16 * reg + (block % kBlocksPerRegister) * kWidth + at + (kHigh ? kHalf : 0);
  }
  return index;
}

// The merge: a sum (kAdd) or a signed maximum.
template <bool kAdd>
EVALD_AVX512_TARGET inline __m512i Merge(__m512i a, __m512i b) {
  return kAdd ? _mm512_add_epi32(a, b) : _mm512_max_epi32(a, b);
}

template <int kWidth, bool kAdd>
EVALD_AVX512_TARGET inline void HalveEach(__m512i* v, int count) {
  alignas(64) static constexpr std::array<int32_t, 16> kLow = HalvingIndex<kWidth, false>();
  alignas(64) static constexpr std::array<int32_t, 16> kHigh = HalvingIndex<kWidth, true>();
  const __m512i low = _mm512_load_si512(kLow.data()), high = _mm512_load_si512(kHigh.data());
  for (int k = 0; k < count; ++k)
    v[k] = Merge<kAdd>(_mm512_permutex2var_epi32(v[2 * k], low, v[2 * k + 1]),
                       _mm512_permutex2var_epi32(v[2 * k], high, v[2 * k + 1]));
}

// Lane k of the result: op over the 16 lanes of v[k], for 16 registers at once (15 merges of
// two permutes and one op, where 16 separate reductions take four shuffle steps each).
template <bool kAdd>
EVALD_AVX512_TARGET inline __m512i ReduceSixteen(__m512i v[16]) {
  HalveEach<16, kAdd>(v, 8);
  HalveEach<8, kAdd>(v, 4);
  HalveEach<4, kAdd>(v, 2);
  HalveEach<2, kAdd>(v, 1);
  return v[0];
}

}  // namespace

EVALD_AVX512_TARGET void QuantizeSixteenBlocksQ8_0Avx512(const float* x, int8_t* q,
                                                         int64_t q_stride, uint16_t* d,
                                                         int32_t* sums) {
  // |x| as integers: for floats without a sign, the bit patterns order as the values do.
  const __m512i magnitude = _mm512_set1_epi32(0x7FFFFFFF);
  __m512i v[16];
  for (int k = 0; k < 16; ++k) {
    const __m512i lo = _mm512_and_si512(_mm512_loadu_si512(x + 32 * k), magnitude);
    const __m512i hi = _mm512_and_si512(_mm512_loadu_si512(x + 32 * k + 16), magnitude);
    v[k] = _mm512_max_epi32(lo, hi);
  }
  const __m512 amax = _mm512_castsi512_ps(ReduceSixteen<false>(v));
  // QuantizeRowQ8_0's scalar steps, 16 lanes at once: IEEE division and round-to-nearest-even
  // half conversion give the same bits.
  const __m512 scale = _mm512_div_ps(amax, _mm512_set1_ps(127.0f));
  const __mmask16 nonzero = _mm512_cmp_ps_mask(scale, _mm512_setzero_ps(), _CMP_NEQ_OQ);
  alignas(64) float inverse[16];
  _mm512_store_ps(inverse, _mm512_maskz_div_ps(nonzero, _mm512_set1_ps(1.0f), scale));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(d),
                      _mm512_cvtps_ph(scale, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  for (int k = 0; k < 16; ++k) {
    const __m512 id = _mm512_set1_ps(inverse[k]);
    const __m512i qlo =
        _mm512_cvtps_epi32(RoundHalfAway(_mm512_mul_ps(_mm512_loadu_ps(x + 32 * k), id)));
    const __m512i qhi =
        _mm512_cvtps_epi32(RoundHalfAway(_mm512_mul_ps(_mm512_loadu_ps(x + 32 * k + 16), id)));
    int8_t* qk = q + k * q_stride;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(qk), _mm512_cvtepi32_epi8(qlo));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(qk + 16), _mm512_cvtepi32_epi8(qhi));
    v[k] = _mm512_add_epi32(qlo, qhi);
  }
  _mm512_storeu_si512(sums, ReduceSixteen<true>(v));
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
  // Block b of vector v: its scale, correction and (AVX2 Q8_0) magnitudes from its values.
  auto finish = [&](int64_t b, int v, uint16_t d, int32_t sum) {
    const size_t i = static_cast<size_t>(b * batch + v);
    scales_[i] = Fp16ToFp32(d);
    corrections_[i] = -offset * sum;
    if (magnitudes)
      for (size_t k = i * kQK; k < (i + 1) * kQK; ++k)
        x_abs_[k] = static_cast<int8_t>(std::abs(x_[k]));  // |x| <= 127
  };
  // Blocks [begin, end) of every vector: each block index owns its own entries. AVX-512 takes
  // 16 blocks of a vector at a time (one block at a time cost ~70 cycles, most of it waiting on
  // its two reductions and divisions, 3% of a 20-sample decode step).
  const bool sixteen = layout == Isa::kAvx512Vnni;
  auto quantize = [&](int64_t begin, int64_t end) {
    for (int v = 0; v < batch; ++v) {
      int64_t b = begin;
      for (; sixteen && b + 16 <= end; b += 16) {
        uint16_t d[16];
        int32_t sums[16];
        QuantizeSixteenBlocksQ8_0Avx512(x + v * cols + b * kQK,
                                        &x_[static_cast<size_t>(b * batch + v) * kQK], batch * kQK,
                                        d, sums);
        for (int k = 0; k < 16; ++k) finish(b + k, v, d[k], sums[k]);
      }
      for (; b < end; ++b) {
        uint16_t d;
        const int32_t sum = quantize_block(x + v * cols + b * kQK,
                                           &x_[static_cast<size_t>(b * batch + v) * kQK], &d);
        finish(b, v, d, sum);
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
