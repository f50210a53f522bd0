// Activations as the packed kernels read them (see packed_matrix.h), prepared once per mat-vec
// for every thread: quantized to Q8_0 exactly as QuantizeRowQ8_0 does, laid out block-major so
// that the kernel reaches every vector of a block from one pointer at fixed offsets, with each
// block's scale as float, the weights' offset correction, and for the AVX2 Q8_0 kernel the
// values' magnitudes.
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
  const int8_t* x_abs = nullptr;         // |x|, laid out as x (AVX2 layout, Q8_0 only)
};

// The weights' offset in the packed layout (PackedLayoutFor) of `type`: Q4_0 nibbles are stored
// raw (+ 8); Q8_0 values + 128 for AVX-512 VNNI, as they are for AVX2.
constexpr int32_t PackedWeightOffset(GgmlType type, Isa layout) {
  if (type == GgmlType::kQ4_0) return 8;
  return layout == Isa::kAvx512Vnni ? 128 : 0;
}

class PackedActivationBuffer {
 public:
  // Quantizes `batch` vectors of `cols` floats (stride cols; cols a multiple of 32) for weights
  // of `type` packed for `layout` (kAvx2 or kAvx512Vnni). The AVX-512 and AVX2 vector
  // quantizers are bit-identical to QuantizeRowQ8_0 on finite input. The result points into
  // this buffer and stays valid until the next Prepare.
  // pool (optional) splits the blocks across threads (the result is the same).
  PackedActivations Prepare(const float* x, int batch, int64_t cols, GgmlType type, Isa layout,
                            ThreadPool* pool = nullptr);

 private:
  std::vector<int8_t> x_;
  std::vector<float> scales_;
  std::vector<int32_t> corrections_;
  std::vector<int8_t> x_abs_;
};

// One block of 32 floats quantized as QuantizeRowQ8_0 does (AVX-512; bit-identical on finite
// input): the values into q, the scale as IEEE half into *d; returns the sum of the values.
int32_t QuantizeBlockQ8_0Avx512(const float* x, int8_t* q, uint16_t* d);
int32_t QuantizeBlockQ8_0Avx2(const float* x, int8_t* q, uint16_t* d);  // the same with AVX2
// Sixteen consecutive blocks of x (512 floats) at once, each exactly as QuantizeBlockQ8_0Avx512
// does it: block k's values to q + k * q_stride, its scale to d[k], its sum to sums[k]. The
// per-block maxima and sums are reduced for all 16 together.
void QuantizeSixteenBlocksQ8_0Avx512(const float* x, int8_t* q, int64_t q_stride, uint16_t* d,
                                     int32_t* sums);

}  // namespace evald::kernels
