// Element-wise work: the RMS norm, the gated FFN's h = silu(gate) * up, and the sampler's
// softmax weights.
// The scalar versions (activations.cc) are the oracles; activations_avx512.cc and
// activations_avx2.cc have the vector ones and the vector exp the attention uses (the AVX2
// results equal the AVX-512 ones bit for bit). The kernel table (kernel_table.h) says which one
// runs.
#pragma once

#include <cmath>
#include <cstdint>

namespace evald::kernels {

// RMS norm: out[i] = x[i] / sqrt(mean(x^2) + eps) * w[i] (w null: no weights), out may be x.
// As ggml, each square is rounded to float and the squares added in double; here in 16 lanes,
// lane j taking elements j, j + 16, ... of the whole sixteens, the rest going to lane 0 in
// order, the lanes then added in order (RmsNormScale), so that the vector versions equal the
// scalar one bit for bit. (ggml keeps one running sum: its double total differs by rounding far
// below what the float mean keeps; one running sum waited ~4 cycles a value.)
using RmsNormFn = void (*)(const float* x, const float* w, float* out, int64_t n, float eps);
void RmsNormScalar(const float* x, const float* w, float* out, int64_t n, float eps);
void RmsNormAvx2(const float* x, const float* w, float* out, int64_t n, float eps);
void RmsNormAvx512(const float* x, const float* w, float* out, int64_t n, float eps);

// The norm's 1 / sqrt(mean + eps) from the 16 lanes over the whole sixteens of x[0, n).
inline float RmsNormScale(double lanes[16], const float* x, int64_t n, float eps) {
  for (int64_t i = n - n % 16; i < n; ++i) lanes[0] += static_cast<double>(x[i] * x[i]);
  double sum = 0;
  for (int j = 0; j < 16; ++j) sum += lanes[j];
  return 1.0f / std::sqrt(static_cast<float>(sum / static_cast<double>(n)) + eps);
}

// gate[i] = gate[i] / (1 + exp(-gate[i])) * up[i] for i < n.
void GatedSiluScalar(float* gate, const float* up, int64_t n);
// The same with exp from a degree-7 polynomial after range reduction (within 2 ulp of
// std::exp); every element, the tail included, through the same vector arithmetic.
void GatedSiluAvx512(float* gate, const float* up, int64_t n);
void GatedSiluAvx2(float* gate, const float* up, int64_t n);  // the same, 8 lanes

// The sampler's weights: y[i] = e^((x[i] - m) x scale) for i < n (n >= 1, scale > 0), m the
// largest x that is a number, so that the largest weight is exactly 1 and a NaN's is 0 (x and y
// may be one array). Returns m; where it is not finite (no number, or an infinite x) y is not
// meaningful. The AVX2 and AVX-512 weights are equal bit for bit; the scalar ones use std::exp.
using SoftmaxWeightsFn = float (*)(const float* x, float* y, int64_t n, float scale);
float SoftmaxWeightsScalar(const float* x, float* y, int64_t n, float scale);
float SoftmaxWeightsAvx2(const float* x, float* y, int64_t n, float scale);
float SoftmaxWeightsAvx512(const float* x, float* y, int64_t n, float scale);

// e^x for 16 floats at a time (AVX-512; n any): within 2 ulp of std::exp, 0 below -104,
// infinity above 88.8.
void ExpAvx512(const float* x, float* y, int64_t n);
void ExpAvx2(const float* x, float* y, int64_t n);  // the same, 8 floats at a time (AVX2, FMA)

}  // namespace evald::kernels
