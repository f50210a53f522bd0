// A Q4_0 block's 16 packed bytes as 32 signed values (low nibbles first), for the SIMD kernels.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace evald::kernels {

__attribute__((target("avx2,f16c"))) inline __m256i UnpackQ4(const uint8_t* qs) {
  const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m256i both = _mm256_set_m128i(_mm_srli_epi16(packed, 4), packed);
  return _mm256_sub_epi8(_mm256_and_si256(both, _mm256_set1_epi8(0x0F)), _mm256_set1_epi8(8));
}

}  // namespace evald::kernels
