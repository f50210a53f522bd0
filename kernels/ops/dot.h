// Dot products between a weight row and the activations, per weight type and instruction set.
// Quantized weights meet activations quantized to Q8_0 (W8A8 for Q8_0 weights, W4A8 for Q4_0
// and the K-quants) and are summed in integers per 32-block, as ggml does. One file per
// instruction set: dot_scalar.cc (the portable oracles, also the SIMD kernels' tails, and the
// float types), dot_avx2.cc, dot_avx_vnni.cc, dot_avx512_vnni.cc. Which one runs is decided
// once per session by the kernel table (kernel_table.h); call a SIMD version only where
// IsaSupported says so.
#pragma once

#include <cstdint>

#include "kernels/ops/isa.h"
#include "kernels/quant/blocks.h"
#include "kernels/quant/kquants.h"

namespace evald::kernels {

// dot_scalar.cc
float DotQ8_0Scalar(const BlockQ8_0* w, const BlockQ8_0* x, int64_t n);
float DotQ4_0Scalar(const BlockQ4_0* w, const BlockQ8_0* x, int64_t n);
float DotQ4_KScalar(const BlockQ4_K* w, const BlockQ8_0* x, int64_t n);
float DotQ6_KScalar(const BlockQ6_K* w, const BlockQ8_0* x, int64_t n);
float DotF32(const float* w, const float* x, int64_t n);
float DotF16(const uint16_t* w, const float* x, int64_t n);
float DotBF16(const uint16_t* w, const float* x, int64_t n);

// dot_avx2.cc
float DotQ8_0Avx2(const BlockQ8_0* w, const BlockQ8_0* x, int64_t n);
float DotQ4_0Avx2(const BlockQ4_0* w, const BlockQ8_0* x, int64_t n);
float DotQ4_KAvx2(const BlockQ4_K* w, const BlockQ8_0* x, int64_t n);
float DotQ6_KAvx2(const BlockQ6_K* w, const BlockQ8_0* x, int64_t n);

// dot_avx_vnni.cc
float DotQ8_0AvxVnni(const BlockQ8_0* w, const BlockQ8_0* x, int64_t n);
float DotQ4_0AvxVnni(const BlockQ4_0* w, const BlockQ8_0* x, int64_t n);

// dot_avx512_vnni.cc
float DotQ8_0Avx512Vnni(const BlockQ8_0* w, const BlockQ8_0* x, int64_t n);
float DotQ4_0Avx512Vnni(const BlockQ4_0* w, const BlockQ8_0* x, int64_t n);
// One weight row against nv <= 8 activation vectors; bit-identical to nv single calls.
// x_scales[v][b] is block b's scale of vector v as float (converted once per mat-vec, not per row).
void DotQ4_0MultiAvx512Vnni(const BlockQ4_0* w, const BlockQ8_0* const* xs,
                            const float* const* x_scales, int nv, int64_t n, float* out);
void DotQ8_0MultiAvx512Vnni(const BlockQ8_0* w, const BlockQ8_0* const* xs,
                            const float* const* x_scales, int nv, int64_t n, float* out);

}  // namespace evald::kernels
