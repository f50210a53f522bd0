// The portable dot products: the oracles every SIMD version is tested against (and the SIMD
// kernels' tails), and the float types' only versions.
#include "kernels/ops/dot.h"
#include "kernels/quant/fp16.h"
#include "kernels/quant/kquants.h"

namespace evald::kernels {

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

// K-quant rows against Q8_0 activations, as integer sums per 32-element block: a K-quant
// super-block of 256 is eight Q8_0 blocks, and its sub-block scales line up with them (Q4_K:
// one scale and minimum per 32; Q6_K: one scale per 16). This is how ggml multiplies them
// (there against Q8_K activations, one float scale per 256), instead of dequantizing every row
// to floats for every token, which took ~3 ns per weight here: 200 ms per token for a
// 32000 x 2048 output matrix alone.
namespace {

// Q6_K's 6-bit value of element i (0..255) of a super-block, 0..63 (the weight is value - 32).
int Q6Value(const BlockQ6_K& b, int i) {
  const int half = i / 128, l = i % 32, quarter = (i % 128) / 32;
  const uint8_t low = b.ql[half * 64 + (quarter & 1) * 32 + l];
  const int nibble = quarter < 2 ? (low & 0x0F) : (low >> 4);
  const int high = (b.qh[half * 32 + l] >> (2 * quarter)) & 3;
  return nibble | (high << 4);
}

// Q6_K's scale of element i: one per 16 elements, in the order of the elements.
int Q6Scale(const BlockQ6_K& b, int i) {
  const int half = i / 128, l = i % 32, quarter = (i % 128) / 32;
  return b.scales[half * 8 + 2 * quarter + l / 16];
}

}  // namespace

float DotQ6_KScalar(const BlockQ6_K* w, const BlockQ8_0* x, int64_t n) {
  float sum = 0;
  for (int64_t sb = 0; sb < n / kQK_K; ++sb) {
    const float d = Fp16ToFp32(w[sb].d);
    for (int k = 0; k < kQK_K / kQK; ++k) {
      const BlockQ8_0& xb = x[sb * (kQK_K / kQK) + k];
      int32_t s = 0;
      for (int l = 0; l < kQK; ++l) {
        const int i = k * kQK + l;
        s += Q6Scale(w[sb], i) * (Q6Value(w[sb], i) - 32) * xb.qs[l];
      }
      sum += static_cast<float>(s) * (d * Fp16ToFp32(xb.d));
    }
  }
  return sum;
}

float DotQ4_KScalar(const BlockQ4_K* w, const BlockQ8_0* x, int64_t n) {
  float sum = 0;
  for (int64_t sb = 0; sb < n / kQK_K; ++sb) {
    const float d = Fp16ToFp32(w[sb].d), dmin = Fp16ToFp32(w[sb].dmin);
    for (int k = 0; k < kQK_K / kQK; ++k) {
      const BlockQ8_0& xb = x[sb * (kQK_K / kQK) + k];
      uint8_t sc, m;
      Q4_KScaleMin(k, w[sb].scales, &sc, &m);
      // Sub-block k: chunk k / 2 of 32 bytes, low nibbles for even k, high ones for odd k.
      const uint8_t* q = w[sb].qs + 32 * (k / 2);
      int32_t s = 0, xs = 0;
      for (int l = 0; l < kQK; ++l) {
        s += (k % 2 ? q[l] >> 4 : q[l] & 0x0F) * xb.qs[l];
        xs += xb.qs[l];
      }
      const float dx = Fp16ToFp32(xb.d);
      sum += static_cast<float>(s * sc) * (d * dx) - static_cast<float>(xs * m) * (dmin * dx);
    }
  }
  return sum;
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
