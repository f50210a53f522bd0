// Element-wise work of the gated FFN: h = silu(gate) * up. The scalar version
// (activations.cc) is the oracle; activations_avx512.cc has the AVX-512 one and the vector exp
// the attention uses. The kernel table (kernel_table.h) says which one runs.
#pragma once

#include <cstdint>

namespace evald::kernels {

// gate[i] = gate[i] / (1 + exp(-gate[i])) * up[i] for i < n.
void GatedSiluScalar(float* gate, const float* up, int64_t n);
// The same with exp from a degree-7 polynomial after range reduction (within 2 ulp of
// std::exp); every element, the tail included, through the same vector arithmetic.
void GatedSiluAvx512(float* gate, const float* up, int64_t n);

// e^x for 16 floats at a time (AVX-512; n any): within 2 ulp of std::exp, 0 below -104,
// infinity above 88.8.
void ExpAvx512(const float* x, float* y, int64_t n);

}  // namespace evald::kernels
