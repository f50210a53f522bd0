// Activations as the packed AVX-512 VNNI kernels read them (see packed_matrix.h), prepared once
// per mat-vec for every thread: quantized to Q8_0 exactly as QuantizeRowQ8_0 does, laid out
// block-major so that the kernel reaches every vector of a block from one pointer at fixed
// offsets, with each block's scale as float and the weights' offset correction.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/gguf/ggml_types.h"
#include "kernels/ops/dot.h"

namespace evald::kernels {

class ThreadPool;

struct PackedActivations {
  int nv = 0;                            // vectors
  const int8_t* x = nullptr;             // block b of vector v: x + (b * nv + v) * 32
  const float* scales = nullptr;         // scales[b * nv + v]
  const int32_t* corrections = nullptr;  // corrections[b * nv + v] = -offset x block sum of x
};

// The weights' offset in the packed layout of `type`: Q8_0 values are stored + 128, Q4_0
// nibbles raw (+ 8).
constexpr int32_t PackedWeightOffset(GgmlType type) {
  return type == GgmlType::kQ4_0 ? 8 : 128;
}

class PackedActivationBuffer {
 public:
  // Quantizes `batch` vectors of `cols` floats (stride cols; cols a multiple of 32) for weights
  // of `type`. kAvx512Vnni uses the vector quantizer (bit-identical to QuantizeRowQ8_0 on
  // finite input); any other isa the scalar one. The result points into this buffer and stays
  // valid until the next Prepare.
  // pool (optional) splits the blocks across threads (the result is the same).
  PackedActivations Prepare(const float* x, int batch, int64_t cols, GgmlType type, Isa isa,
                            ThreadPool* pool = nullptr);

 private:
  std::vector<int8_t> x_;
  std::vector<float> scales_;
  std::vector<int32_t> corrections_;
};

// One block of 32 floats quantized as QuantizeRowQ8_0 does (AVX-512; bit-identical on finite
// input): the values into q, the scale as IEEE half into *d; returns the sum of the values.
int32_t QuantizeBlockQ8_0Avx512(const float* x, int8_t* q, uint16_t* d);

}  // namespace evald::kernels
