// Dot products between a weight row and the activations, per weight type. Quantized weights
// meet activations quantized to Q8_0 (W8A8 for Q8_0 weights, W4A8 for Q4_0) and are summed in
// integers per 32-block, as ggml does. Each has a portable scalar version, which is the test
// oracle, and AVX2, AVX-VNNI and AVX-512 VNNI versions chosen at run time by what the CPU has.
#pragma once

#include <cstdint>

#include "kernels/quant/blocks.h"
#include "kernels/quant/kquants.h"

namespace evald::kernels {

enum class Isa { kScalar, kAvx2, kAvxVnni, kAvx512Vnni };

// The best path this CPU supports (EVALD_FORCE_SCALAR=1 in the environment forces the oracle).
Isa DetectIsa();
// Whether this CPU can run `isa`.
bool IsaSupported(Isa isa);
const char* IsaName(Isa isa);

// The VNNI implementations (dot_vnni.cc); call only where IsaSupported says so.
float DotQ8_0Avx512Vnni(const BlockQ8_0* w, const BlockQ8_0* x, int64_t n);
float DotQ4_0Avx512Vnni(const BlockQ4_0* w, const BlockQ8_0* x, int64_t n);
float DotQ8_0AvxVnni(const BlockQ8_0* w, const BlockQ8_0* x, int64_t n);
float DotQ4_0AvxVnni(const BlockQ4_0* w, const BlockQ8_0* x, int64_t n);
// One weight row against nv <= 8 activation vectors; bit-identical to nv single calls.
// x_scales[v][b] is block b's scale of vector v as float (converted once per mat-vec, not per row).
void DotQ4_0MultiAvx512Vnni(const BlockQ4_0* w, const BlockQ8_0* const* xs,
                            const float* const* x_scales, int nv, int64_t n, float* out);
void DotQ8_0MultiAvx512Vnni(const BlockQ8_0* w, const BlockQ8_0* const* xs,
                            const float* const* x_scales, int nv, int64_t n, float* out);

// The portable oracles (also the SIMD kernels' tails).
float DotQ8_0Scalar(const BlockQ8_0* w, const BlockQ8_0* x, int64_t n);
float DotQ4_0Scalar(const BlockQ4_0* w, const BlockQ8_0* x, int64_t n);

float DotQ8_0(const BlockQ8_0* w, const BlockQ8_0* x, int64_t n, Isa isa);
float DotQ4_0(const BlockQ4_0* w, const BlockQ8_0* x, int64_t n, Isa isa);
// K-quant rows against Q8_0 activations, integer sums per 32-block (dot_kquants.cc): the
// scalar oracles and, for any isa but kScalar, AVX2.
float DotQ4_KScalar(const BlockQ4_K* w, const BlockQ8_0* x, int64_t n);
float DotQ6_KScalar(const BlockQ6_K* w, const BlockQ8_0* x, int64_t n);
float DotQ4_K(const BlockQ4_K* w, const BlockQ8_0* x, int64_t n, Isa isa);
float DotQ6_K(const BlockQ6_K* w, const BlockQ8_0* x, int64_t n, Isa isa);
float DotF32(const float* w, const float* x, int64_t n);
float DotF16(const uint16_t* w, const float* x, int64_t n);
float DotBF16(const uint16_t* w, const float* x, int64_t n);

}  // namespace evald::kernels
