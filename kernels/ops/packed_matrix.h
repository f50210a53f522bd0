// Quantized weights laid out again at load for the SIMD mat-vec kernels: 16 rows interleaved per
// 32-element block, so that one multiply instruction advances many rows against a broadcast of 4
// activation bytes, the 16 per-block scales convert in one or two instructions, and the float
// work per block is one multiply-add for 8 or 16 rows instead of one per row. A group's blocks
// are contiguous, so a mat-vec streams the matrix once, front to back.
//
// Two layouts, one per kernel family (packed_avx512_vnni.cc, packed_avx2.cc), differing only in how
// Q8_0 values are stored:
//   AVX-512 VNNI: weights are the unsigned operand of vpdpbusd (the signed activations are
//     broadcast straight from memory): Q8_0 values are stored + 128, Q4_0 nibbles raw (+ 8).
//   AVX2: Q4_0 nibbles raw (the unsigned operand of vpmaddubsw, 0..15); Q8_0 values as they
//     are (signed), multiplied as |x| x (w * sign x), which is exact only while no weight is
//     -128: a matrix holding one (ggml's quantizer never writes it) is not packed.
// The offset comes back out as offset x the block sum of the activations, once per block and
// vector for all rows (PackedWeightOffset).
//
// Per group of 16 rows, per block (stride kQ8Stride / kQ4Stride bytes):
//   Q8_0: 8 steps x 16 rows x 4 bytes (step j holds elements 4j..4j+3 of each row),
//         16 fp16 scales.
//   Q4_0: 4 chunks x 16 rows x 4 bytes; byte k of row r in chunk c holds element 8c+k in its low
//         nibble and element 8c+4+k in its high nibble; 16 fp16 scales.
// Rows 0-7 of a step are its first 32 bytes: one AVX2 register.
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

  // `w` in the layout of `isa`'s kernels (PackedLayoutFor); nullptr when it cannot be packed
  // (not Q8_0/Q4_0, rows not a multiple of 16, no packed kernel for isa, a -128 in a Q8_0 matrix
  // for AVX2).
  static std::unique_ptr<PackedMatrix> Pack(const WeightMatrix& w, Isa isa);

  Isa layout() const { return layout_; }  // kAvx2 or kAvx512Vnni
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
  Isa layout_ = Isa::kAvx2;
  GgmlType type_ = GgmlType::kQ8_0;
  int64_t rows_ = 0, cols_ = 0;
  std::unique_ptr<uint8_t[], Free> data_;
};

// Splits nv vectors into the fewest chunks of at most `most` vectors, of nearly equal sizes
// (20 = 10 + 10, 23 = 8 + 8 + 7; never a chunk smaller than nv / chunks): chunk(v0, n) for each,
// in order. The batched kernels take a chunk per pass over a group's weights, read from memory
// once and from cache for the other chunks.
template <typename Chunk>
inline void ForEachVectorChunk(int nv, int most, const Chunk& chunk) {
  const int chunks = (nv + most - 1) / most;
  for (int c = 0, v0 = 0; c < chunks; ++c) {
    const int n = (nv - v0) / (chunks - c);
    chunk(v0, n);
    v0 += n;
  }
}

// The packed layout whose kernels run on `isa` (AVX-VNNI CPUs read the AVX2 layout), or kScalar
// where none does.
Isa PackedLayoutFor(Isa isa);

// y[v * rows + r] for rows of groups [g_begin, g_end), every vector v < a.nv, for a matrix of
// the matching layout (AVX-512 VNNI / AVX2 only).
void PackedMatVecAvx512Vnni(const PackedMatrix& w, const PackedActivations& a, int64_t g_begin,
                            int64_t g_end, float* y);
void PackedMatVecAvx2(const PackedMatrix& w, const PackedActivations& a, int64_t g_begin,
                      int64_t g_end, float* y);
// AVX-VNNI CPUs, the AVX2 layout: batches by vpdpbusd on 256 bits, one vector by the AVX2 kernel.
void PackedMatVecAvxVnni(const PackedMatrix& w, const PackedActivations& a, int64_t g_begin,
                         int64_t g_end, float* y);

}  // namespace evald::kernels
