// The sum of a 256-bit float vector's eight lanes, shared by the AVX2 and AVX-VNNI kernels
// (include only from files that compile AVX2 code under target attributes).
#pragma once

#include <immintrin.h>

namespace evald::kernels {

__attribute__((target("avx2,f16c"))) inline float HorizontalSum256(__m256 v) {
  __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
  lo = _mm_add_ps(lo, hi);
  lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
  lo = _mm_add_ss(lo, _mm_movehdup_ps(lo));
  return _mm_cvtss_f32(lo);
}

}  // namespace evald::kernels
