#include "kernels/ops/dot.h"

#include <immintrin.h>

#include <cstdlib>
#include <cstring>

#include "kernels/ops/horizontal_sum.h"
#include "kernels/quant/fp16.h"

namespace evald::kernels {

bool IsaSupported(Isa isa) {
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                    __builtin_cpu_supports("f16c");
  switch (isa) {
    case Isa::kScalar:
      return true;
    case Isa::kAvx2:
      return avx2;
    case Isa::kAvxVnni:
      return avx2 && __builtin_cpu_supports("avxvnni");
    case Isa::kAvx512Vnni:
      return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx512vnni");
  }
  return false;
}

Isa DetectIsa() {
  const char* force = std::getenv("EVALD_FORCE_SCALAR");
  if (force && std::strcmp(force, "1") == 0) return Isa::kScalar;
  for (Isa isa : {Isa::kAvx512Vnni, Isa::kAvxVnni, Isa::kAvx2})
    if (IsaSupported(isa)) return isa;
  return Isa::kScalar;
}

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvxVnni:
      return "avx-vnni";
    case Isa::kAvx512Vnni:
      return "avx512-vnni";
    default:
      return "scalar";
  }
}

float DotQ8_0Scalar(const BlockQ8_0* w, const BlockQ8_0* x, int64_t n) {
  float sum = 0;
  for (int64_t b = 0; b < n / kQK; ++b) {
    int32_t s = 0;
    for (int j = 0; j < kQK; ++j) s += w[b].qs[j] * x[b].qs[j];
    sum += static_cast<float>(s) * (Fp16ToFp32(w[b].d) * Fp16ToFp32(x[b].d));
  }
  return sum;
}

float DotQ4_0Scalar(const BlockQ4_0* w, const BlockQ8_0* x, int64_t n) {
  float sum = 0;
  for (int64_t b = 0; b < n / kQK; ++b) {
    int32_t s0 = 0, s1 = 0;
    for (int j = 0; j < kQK / 2; ++j) {
      s0 += ((w[b].qs[j] & 0x0F) - 8) * x[b].qs[j];
      s1 += ((w[b].qs[j] >> 4) - 8) * x[b].qs[j + kQK / 2];
    }
    sum += static_cast<float>(s0 + s1) * (Fp16ToFp32(w[b].d) * Fp16ToFp32(x[b].d));
  }
  return sum;
}

namespace {

// Sum of int8 x int8 products in each 32-byte lane group, as 8 int32.
__attribute__((target("avx2,fma,f16c"))) inline __m256 MulSumI8(__m256i a, __m256i b) {
  // maddubs needs one unsigned operand: move a's sign onto b.
  const __m256i ax = _mm256_sign_epi8(a, a);
  const __m256i sy = _mm256_sign_epi8(b, a);
  const __m256i dot16 = _mm256_maddubs_epi16(ax, sy);
  const __m256i dot32 = _mm256_madd_epi16(dot16, _mm256_set1_epi16(1));
  return _mm256_cvtepi32_ps(dot32);
}

__attribute__((target("avx2,fma,f16c"))) float DotQ8_0Avx2(const BlockQ8_0* w, const BlockQ8_0* x,
                                                           int64_t n) {
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQK; ++b) {
    const __m256 d = _mm256_set1_ps(_cvtsh_ss(w[b].d) * _cvtsh_ss(x[b].d));
    const __m256i qw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[b].qs));
    const __m256i qx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].qs));
    acc = _mm256_fmadd_ps(d, MulSumI8(qw, qx), acc);
  }
  return HorizontalSum256(acc);
}

__attribute__((target("avx2,fma,f16c"))) float DotQ4_0Avx2(const BlockQ4_0* w, const BlockQ8_0* x,
                                                           int64_t n) {
  __m256 acc = _mm256_setzero_ps();
  const __m256i low_mask = _mm256_set1_epi8(0x0F), eight = _mm256_set1_epi8(8);
  for (int64_t b = 0; b < n / kQK; ++b) {
    const __m256 d = _mm256_set1_ps(_cvtsh_ss(w[b].d) * _cvtsh_ss(x[b].d));
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[b].qs));
    // Low nibbles are elements 0..15, high nibbles 16..31.
    const __m256i both = _mm256_set_m128i(_mm_srli_epi16(packed, 4), packed);
    const __m256i qw = _mm256_sub_epi8(_mm256_and_si256(both, low_mask), eight);
    const __m256i qx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].qs));
    acc = _mm256_fmadd_ps(d, MulSumI8(qw, qx), acc);
  }
  return HorizontalSum256(acc);
}

}  // namespace

float DotQ8_0(const BlockQ8_0* w, const BlockQ8_0* x, int64_t n, Isa isa) {
  switch (isa) {
    case Isa::kAvx512Vnni:
      return DotQ8_0Avx512Vnni(w, x, n);
    case Isa::kAvxVnni:
      return DotQ8_0AvxVnni(w, x, n);
    case Isa::kAvx2:
      return DotQ8_0Avx2(w, x, n);
    default:
      return DotQ8_0Scalar(w, x, n);
  }
}

float DotQ4_0(const BlockQ4_0* w, const BlockQ8_0* x, int64_t n, Isa isa) {
  switch (isa) {
    case Isa::kAvx512Vnni:
      return DotQ4_0Avx512Vnni(w, x, n);
    case Isa::kAvxVnni:
      return DotQ4_0AvxVnni(w, x, n);
    case Isa::kAvx2:
      return DotQ4_0Avx2(w, x, n);
    default:
      return DotQ4_0Scalar(w, x, n);
  }
}

float DotF32(const float* w, const float* x, int64_t n) {
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += w[i] * x[i];
  return sum;
}

float DotF16(const uint16_t* w, const float* x, int64_t n) {
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += Fp16ToFp32(w[i]) * x[i];
  return sum;
}

float DotBF16(const uint16_t* w, const float* x, int64_t n) {
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += Bf16ToFp32(w[i]) * x[i];
  return sum;
}

}  // namespace evald::kernels
