#include "kernels/ops/matvec.h"

namespace evald::kernels {

void MatVec::Apply(const WeightMatrix& w, const float* x, float* y) {
  switch (w.type) {
    case GgmlType::kQ8_0:
    case GgmlType::kQ4_0: {
      xq_.resize(static_cast<size_t>(w.cols / kQK));
      QuantizeRowQ8_0(x, xq_.data(), w.cols);
      for (int64_t r = 0; r < w.rows; ++r) {
        const uint8_t* row = w.data + r * w.row_bytes;
        y[r] = w.type == GgmlType::kQ8_0
                   ? DotQ8_0(reinterpret_cast<const BlockQ8_0*>(row), xq_.data(), w.cols, isa_)
                   : DotQ4_0(reinterpret_cast<const BlockQ4_0*>(row), xq_.data(), w.cols, isa_);
      }
      return;
    }
    case GgmlType::kF16:
      for (int64_t r = 0; r < w.rows; ++r)
        y[r] = DotF16(reinterpret_cast<const uint16_t*>(w.data + r * w.row_bytes), x, w.cols);
      return;
    case GgmlType::kBF16:
      for (int64_t r = 0; r < w.rows; ++r)
        y[r] = DotBF16(reinterpret_cast<const uint16_t*>(w.data + r * w.row_bytes), x, w.cols);
      return;
    default:  // F32 (the model loader admits no other type)
      for (int64_t r = 0; r < w.rows; ++r)
        y[r] = DotF32(reinterpret_cast<const float*>(w.data + r * w.row_bytes), x, w.cols);
      return;
  }
}

void MatVec::ApplyBatch(const WeightMatrix& w, const float* x, int batch, float* y) {
  if (batch == 1) return Apply(w, x, y);
  const int64_t blocks = w.cols / kQK;
  if (w.type == GgmlType::kQ8_0 || w.type == GgmlType::kQ4_0) {
    xq_.resize(static_cast<size_t>(blocks * batch));
    for (int b = 0; b < batch; ++b)
      QuantizeRowQ8_0(x + b * w.cols, xq_.data() + b * blocks, w.cols);
    for (int64_t r = 0; r < w.rows; ++r) {
      const uint8_t* row = w.data + r * w.row_bytes;
      for (int b = 0; b < batch; ++b) {
        const BlockQ8_0* xb = xq_.data() + b * blocks;
        y[b * w.rows + r] =
            w.type == GgmlType::kQ8_0
                ? DotQ8_0(reinterpret_cast<const BlockQ8_0*>(row), xb, w.cols, isa_)
                : DotQ4_0(reinterpret_cast<const BlockQ4_0*>(row), xb, w.cols, isa_);
      }
    }
    return;
  }
  for (int64_t r = 0; r < w.rows; ++r) {
    const uint8_t* row = w.data + r * w.row_bytes;
    for (int b = 0; b < batch; ++b) {
      const float* xb = x + b * w.cols;
      float v;
      switch (w.type) {
        case GgmlType::kF16:
          v = DotF16(reinterpret_cast<const uint16_t*>(row), xb, w.cols);
          break;
        case GgmlType::kBF16:
          v = DotBF16(reinterpret_cast<const uint16_t*>(row), xb, w.cols);
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
