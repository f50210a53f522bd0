// int8 dot products with AVX-VNNI (vpdpbusd on 256 bits: unsigned x signed bytes summed into
// int32 lanes), one 32-element block per register. The integer block sums are exact, so
// results equal the scalar oracle up to the order of the float accumulation.
#include <immintrin.h>

#include "kernels/ops/dot.h"
#include "kernels/ops/horizontal_sum.h"
#include "kernels/ops/unpack_q4.h"
#include "kernels/quant/fp16.h"

namespace evald::kernels {

namespace {

__attribute__((target("avx2,avxvnni,f16c"))) inline __m256i DotBytes256(__m256i a, __m256i b) {
  const __m256i abs_a = _mm256_sign_epi8(a, a);
  const __m256i signed_b = _mm256_sign_epi8(b, a);
  return _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), abs_a, signed_b);
}

}  // namespace

__attribute__((target("avx2,avxvnni,fma,f16c"))) float DotQ8_0AvxVnni(const BlockQ8_0* w,
                                                                      const BlockQ8_0* x,
                                                                      int64_t n) {
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQK; ++b) {
    const __m256 d = _mm256_set1_ps(_cvtsh_ss(w[b].d) * _cvtsh_ss(x[b].d));
    const __m256i qw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[b].qs));
    const __m256i qx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].qs));
    acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(DotBytes256(qw, qx)), acc);
  }
  return HorizontalSum256(acc);
}

__attribute__((target("avx2,avxvnni,fma,f16c"))) float DotQ4_0AvxVnni(const BlockQ4_0* w,
                                                                      const BlockQ8_0* x,
                                                                      int64_t n) {
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQK; ++b) {
    const __m256 d = _mm256_set1_ps(_cvtsh_ss(w[b].d) * _cvtsh_ss(x[b].d));
    const __m256i qx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].qs));
    acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(DotBytes256(UnpackQ4(w[b].qs), qx)), acc);
  }
  return HorizontalSum256(acc);
}

}  // namespace evald::kernels
