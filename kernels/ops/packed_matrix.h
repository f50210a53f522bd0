// Weights laid out at load for the AVX-512 VNNI kernels: 16 rows interleaved per 32-element
// block, so that one vpdpbusd advances 16 rows by 4 elements against a broadcast of 4 activation
// bytes, the 16 per-block scales convert in one instruction, and the float work per block is
// one multiply-add for 16 rows instead of one per row. A group's blocks are contiguous, so a
// mat-vec streams the matrix once, front to back.
//
// Weights are the unsigned operand of vpdpbusd (the signed activations are broadcast straight
// from memory): Q8_0 values are stored + 128, Q4_0 nibbles raw (+ 8); the offset comes back out
// as offset x the block sum of the activations, once per block and vector for all rows.
//
// Per group of 16 rows, per block (stride kQ8Stride / kQ4Stride bytes):
//   Q8_0: 8 steps x 16 rows x 4 bytes (step j holds elements 4j..4j+3 of each row, + 128),
//         16 fp16 scales.
//   Q4_0: 4 chunks x 16 rows x 4 bytes; byte k of row r in chunk c holds element 8c+k in its low
//         nibble and element 8c+4+k in its high nibble; 16 fp16 scales.
#pragma once

#include <cstdint>
#include <memory>

#include "kernels/gguf/ggml_types.h"
#include "kernels/ops/packed_activations.h"
#include "kernels/quant/blocks.h"

namespace evald::kernels {

struct WeightMatrix;

class PackedMatrix {
 public:
  static constexpr int kRows = 16;
  static constexpr int64_t kQ8Stride = 8 * 64 + 32;
  static constexpr int64_t kQ4Stride = 4 * 64 + 32;

  // nullptr when `w` cannot be packed (not Q8_0/Q4_0, rows not a multiple of 16).
  static std::unique_ptr<PackedMatrix> Pack(const WeightMatrix& w);

  GgmlType type() const { return type_; }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t blocks() const { return cols_ / kQK; }
  int64_t groups() const { return rows_ / kRows; }
  int64_t block_stride() const { return type_ == GgmlType::kQ8_0 ? kQ8Stride : kQ4Stride; }
  const uint8_t* group(int64_t g) const { return data_.get() + g * blocks() * block_stride(); }

 private:
  struct Free {
    void operator()(uint8_t* p) const;
  };
  GgmlType type_ = GgmlType::kQ8_0;
  int64_t rows_ = 0, cols_ = 0;
  std::unique_ptr<uint8_t[], Free> data_;
};

// y[v * rows + r] for rows of groups [g_begin, g_end), every vector v < a.nv (AVX-512 VNNI
// only).
void PackedMatVecAvx512Vnni(const PackedMatrix& w, const PackedActivations& a, int64_t g_begin,
                            int64_t g_end, float* y);

}  // namespace evald::kernels
