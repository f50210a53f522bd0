#include "kernels/ops/matvec.h"

#include <algorithm>

#include "kernels/ops/packed_matrix.h"
#include "kernels/ops/thread_pool.h"
#include "kernels/quant/fp16.h"

namespace evald::kernels {

void MatVec::Apply(const WeightMatrix& w, const float* x, float* y) {
  ApplyBatch(w, x, 1, y);
}

void MatVec::ApplyBatch(const WeightMatrix& w, const float* x, int batch, float* y) {
  const WeightMatrix* ws[] = {&w};
  float* ys[] = {y};
  ApplyBatchToEach(ws, x, batch, ys);
}

void MatVec::ApplyBatchToEach(std::span<const WeightMatrix* const> ws, const float* x, int batch,
                              std::span<float* const> ys) {
  if (PackedAlike(ws)) {
    ApplyPacked(ws, x, batch, ys);
    return;
  }
  for (size_t i = 0; i < ws.size(); ++i) {
    if (PackedAlike(ws.subspan(i, 1))) {
      ApplyPacked(ws.subspan(i, 1), x, batch, ys.subspan(i, 1));
    } else {
      ApplyUnpacked(*ws[i], x, batch, ys[i]);
    }
  }
}

bool MatVec::PackedAlike(std::span<const WeightMatrix* const> ws) const {
  for (const WeightMatrix* w : ws) {
    if (!w->packed || w->packed->layout() != kernels_.packed_layout) return false;
    if (w->type != ws[0]->type || w->cols != ws[0]->cols) return false;
  }
  return !ws.empty();
}

void MatVec::ApplyPacked(std::span<const WeightMatrix* const> ws, const float* x, int batch,
                         std::span<float* const> ys) {
  // The activations as the packed kernels read them, prepared once for every matrix and thread.
  const PackedMatrix& first = *ws[0]->packed;
  const PackedActivations a =
      packed_x_.Prepare(x, batch, first.cols(), first.type(), first.layout(), pool_);
  const PackedMatVecFn matvec = kernels_.packed_matvec;
  int64_t total = 0;
  for (const WeightMatrix* w : ws) total += w->packed->groups();
  // Groups [begin, end) counted across the matrices in order.
  auto groups = [&](int64_t begin, int64_t end) {
    int64_t base = 0;
    for (size_t i = 0; i < ws.size(); ++i) {
      const PackedMatrix& p = *ws[i]->packed;
      const int64_t lo = std::max(begin, base), hi = std::min(end, base + p.groups());
      if (lo < hi) matvec(p, a, lo - base, hi - base, ys[i]);
      base += p.groups();
    }
  };
  if (pool_) {
    // Pieces of whole eight-group runs, the AVX-512 single-vector kernel's unit (a multiple of
    // the others' 2 and 4).
    pool_->ParallelFor(total, groups, 8);
  } else {
    groups(0, total);
  }
}

void MatVec::ApplyUnpacked(const WeightMatrix& w, const float* x, int batch, float* y) {
  const int64_t blocks = w.cols / kQK;
  if (kernels_.Row(w.type).dot_q8) {
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
  const TypeKernels& k = kernels_.Row(w.type);
  const bool multi = batch > 1 && k.dot_q8_multi != nullptr;
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
        k.dot_q8_multi(row, xs, scales, nv, w.cols, out);
        for (int v = 0; v < nv; ++v) y[(b0 + v) * w.rows + r] = out[v];
      }
      continue;
    }
    for (int b = 0; b < batch; ++b) {
      y[b * w.rows + r] = k.dot_q8 ? k.dot_q8(row, xq_.data() + b * blocks, w.cols)
                                   : k.dot_f32(row, x + b * w.cols, w.cols);
    }
  }
}

}  // namespace evald::kernels
