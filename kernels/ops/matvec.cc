#include "kernels/ops/matvec.h"

#include <algorithm>

#include "kernels/ops/packed_matrix.h"
#include "kernels/ops/thread_pool.h"
#include "kernels/quant/fp16.h"

namespace evald::kernels {

namespace {

// The types multiplied in integers against activations quantized to Q8_0.
bool QuantizesActivations(GgmlType type) {
  return type == GgmlType::kQ8_0 || type == GgmlType::kQ4_0 || type == GgmlType::kQ4_K ||
         type == GgmlType::kQ6_K;
}

}  // namespace

void MatVec::Apply(const WeightMatrix& w, const float* x, float* y) {
  ApplyBatch(w, x, 1, y);
}

void MatVec::ApplyBatch(const WeightMatrix& w, const float* x, int batch, float* y) {
  const int64_t blocks = w.cols / kQK;
  if (w.packed && w.packed->layout() == PackedLayoutFor(isa_)) {
    // The activations as the packed kernels read them, prepared once for every thread.
    const PackedMatrix& p = *w.packed;
    const PackedActivations a = packed_x_.Prepare(x, batch, w.cols, w.type, p.layout(), pool_);
    auto groups = [&](int64_t begin, int64_t end) {
      if (p.layout() == Isa::kAvx512Vnni) {
        PackedMatVecAvx512Vnni(p, a, begin, end, y);
      } else {
        PackedMatVecAvx2(p, a, begin, end, y);
      }
    };
    if (pool_) {
      pool_->ParallelFor(p.groups(), groups);
    } else {
      groups(0, p.groups());
    }
    return;
  }
  if (QuantizesActivations(w.type)) {
    // Activations quantized once per call, shared read-only by every thread.
    xq_.resize(static_cast<size_t>(blocks * batch));
    for (int b = 0; b < batch; ++b)
      QuantizeRowQ8_0(x + b * w.cols, xq_.data() + b * blocks, w.cols);
    if (batch > 1) {
      xq_scales_.resize(xq_.size());
      for (size_t i = 0; i < xq_.size(); ++i) xq_scales_[i] = Fp16ToFp32(xq_[i].d);
    }
  }
  auto rows = [&](int64_t begin, int64_t end) { Rows(w, x, batch, y, begin, end); };
  if (pool_) {
    pool_->ParallelFor(w.rows, rows);
  } else {
    rows(0, w.rows);
  }
}

void MatVec::Rows(const WeightMatrix& w, const float* x, int batch, float* y, int64_t begin,
                  int64_t end) {
  const int64_t blocks = w.cols / kQK;
  const bool multi = batch > 1 && isa_ == Isa::kAvx512Vnni &&
                     (w.type == GgmlType::kQ8_0 || w.type == GgmlType::kQ4_0);
  for (int64_t r = begin; r < end; ++r) {
    const uint8_t* row = w.data + r * w.row_bytes;
    if (multi) {
      // The weight row is read and unpacked once for up to 8 vectors at a time.
      const BlockQ8_0* xs[8];
      const float* scales[8];
      float out[8];
      for (int b0 = 0; b0 < batch; b0 += 8) {
        const int nv = std::min(8, batch - b0);
        for (int v = 0; v < nv; ++v) {
          xs[v] = xq_.data() + (b0 + v) * blocks;
          scales[v] = xq_scales_.data() + (b0 + v) * blocks;
        }
        if (w.type == GgmlType::kQ4_0) {
          DotQ4_0MultiAvx512Vnni(reinterpret_cast<const BlockQ4_0*>(row), xs, scales, nv, w.cols,
                                 out);
        } else {
          DotQ8_0MultiAvx512Vnni(reinterpret_cast<const BlockQ8_0*>(row), xs, scales, nv, w.cols,
                                 out);
        }
        for (int v = 0; v < nv; ++v) y[(b0 + v) * w.rows + r] = out[v];
      }
      continue;
    }
    for (int b = 0; b < batch; ++b) {
      const float* xb = x + b * w.cols;
      float v;
      switch (w.type) {
        case GgmlType::kQ8_0:
          v = DotQ8_0(reinterpret_cast<const BlockQ8_0*>(row), xq_.data() + b * blocks, w.cols,
                      isa_);
          break;
        case GgmlType::kQ4_0:
          v = DotQ4_0(reinterpret_cast<const BlockQ4_0*>(row), xq_.data() + b * blocks, w.cols,
                      isa_);
          break;
        case GgmlType::kF16:
          v = DotF16(reinterpret_cast<const uint16_t*>(row), xb, w.cols);
          break;
        case GgmlType::kBF16:
          v = DotBF16(reinterpret_cast<const uint16_t*>(row), xb, w.cols);
          break;
        case GgmlType::kQ4_K:
          v = DotQ4_K(reinterpret_cast<const BlockQ4_K*>(row), xq_.data() + b * blocks, w.cols,
                      isa_);
          break;
        case GgmlType::kQ6_K:
          v = DotQ6_K(reinterpret_cast<const BlockQ6_K*>(row), xq_.data() + b * blocks, w.cols,
                      isa_);
          break;
        default:
          v = DotF32(reinterpret_cast<const float*>(row), xb, w.cols);
          break;
      }
      y[b * w.rows + r] = v;
    }
  }
}

}  // namespace evald::kernels
