// Element-wise work of the gated FFN, SIMD where the CPU allows: h = silu(gate) * up.
#pragma once

#include <cstdint>

#include "kernels/ops/dot.h"

namespace evald::kernels {

// gate[i] = gate[i] / (1 + exp(-gate[i])) * up[i] for i < n. The AVX-512 path computes exp
// with a degree-7 polynomial after range reduction (within 2 ulp of std::exp); the scalar
// path is the oracle.
void GatedSilu(float* gate, const float* up, int64_t n, Isa isa);

// e^x for 16 floats at a time (AVX-512; n any): within 2 ulp of std::exp, 0 below -104,
// infinity above 88.8.
void ExpAvx512(const float* x, float* y, int64_t n);

}  // namespace evald::kernels
