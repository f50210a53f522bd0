// y = W x for one weight matrix stored in any supported type. Quantized weights: x is
// quantized once to Q8_0 blocks, then each row is an integer-block dot product.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/gguf/ggml_types.h"
#include "kernels/ops/kernel_table.h"
#include "kernels/ops/packed_activations.h"
#include "kernels/quant/blocks.h"

namespace evald::kernels {

struct WeightMatrix {
  GgmlType type = GgmlType::kF32;
  const uint8_t* data = nullptr;
  int64_t rows = 0;  // output size
  int64_t cols = 0;  // input size (ggml ne[0])
  uint64_t row_bytes = 0;
  // The same weights laid out for the packed SIMD kernels (set at load; owned by the model).
  const class PackedMatrix* packed = nullptr;
};

class ThreadPool;

class MatVec {
 public:
  // pool (optional) splits the rows across threads; every row is computed by one thread with
  // the same arithmetic, so results do not depend on the thread count.
  explicit MatVec(const KernelTable& kernels, ThreadPool* pool = nullptr)
      : kernels_(kernels), pool_(pool) {}
  // y[r] for r in [0, rows).
  void Apply(const WeightMatrix& w, const float* x, float* y);
  // Y[b] = W X[b] for a batch of `batch` input vectors (stride cols) into outputs (stride rows).
  // Each weight row is read once for the whole batch: this is what makes n samples cheaper
  // than n single-sample passes when decoding is bound by memory bandwidth. Per vector the
  // arithmetic is exactly that of Apply.
  void ApplyBatch(const WeightMatrix& w, const float* x, int batch, float* y);
  // ys[i] = ws[i] X for several matrices of one input (queries, keys and values; gate and up):
  // where they are packed alike the input is quantized once for all of them, and the rows of all
  // of them are split across the pool in one call. Per output the arithmetic is exactly that of
  // ApplyBatch.
  void ApplyBatchToEach(std::span<const WeightMatrix* const> ws, const float* x, int batch,
                        std::span<float* const> ys);
  const KernelTable& kernels() const { return kernels_; }
  ThreadPool* pool() const { return pool_; }

 private:
  // Whether every matrix of ws is packed for this kernel table, of one type and one width.
  bool PackedAlike(std::span<const WeightMatrix* const> ws) const;
  // The packed matrices' row groups one after another, against one prepared input.
  void ApplyPacked(std::span<const WeightMatrix* const> ws, const float* x, int batch,
                   std::span<float* const> ys);
  // Through the file's own layout (row by row), for what is not packed.
  void ApplyUnpacked(const WeightMatrix& w, const float* x, int batch, float* y);
  // Rows [begin, end) of W times each of the `batch` vectors.
  void Rows(const WeightMatrix& w, const float* x, int batch, float* y, int64_t begin, int64_t end);

  const KernelTable& kernels_;
  ThreadPool* pool_;
  std::vector<BlockQ8_0> xq_;
  std::vector<float> xq_scales_;     // the scales of xq_ as float, for the multi-vector kernels
  PackedActivationBuffer packed_x_;  // activations for packed weights
};

}  // namespace evald::kernels
