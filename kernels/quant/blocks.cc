#include "kernels/quant/blocks.h"

#include <algorithm>
#include <cmath>

#include "kernels/quant/fp16.h"
#include "kernels/quant/kquants.h"

namespace evald::kernels {

void QuantizeRowQ8_0(const float* x, BlockQ8_0* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float* xb = x + b * kQK;
    float amax = 0;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(xb[j]));
    const float d = amax / 127.0f;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    y[b].d = Fp32ToFp16(d);
    for (int j = 0; j < kQK; ++j) y[b].qs[j] = static_cast<int8_t>(std::roundf(xb[j] * id));
  }
}

void QuantizeRowQ4_0(const float* x, BlockQ4_0* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float* xb = x + b * kQK;
    float amax = 0, max = 0;  // max keeps the sign of the largest-magnitude value
    for (int j = 0; j < kQK; ++j) {
      if (std::fabs(xb[j]) > amax) {
        amax = std::fabs(xb[j]);
        max = xb[j];
      }
    }
    const float d = max / -8.0f;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    y[b].d = Fp32ToFp16(d);
    for (int j = 0; j < kQK / 2; ++j) {
      const uint8_t lo = static_cast<uint8_t>(
          std::min(15, static_cast<int>(static_cast<int8_t>(xb[j] * id + 8.5f))));
      const uint8_t hi = static_cast<uint8_t>(
          std::min(15, static_cast<int>(static_cast<int8_t>(xb[kQK / 2 + j] * id + 8.5f))));
      y[b].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

Status DequantizeRow(GgmlType type, const void* src, float* dst, int64_t n) {
  switch (type) {
    case GgmlType::kF32:
      std::copy_n(static_cast<const float*>(src), n, dst);
      return Status::Ok();
    case GgmlType::kF16: {
      auto* h = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = Fp16ToFp32(h[i]);
      return Status::Ok();
    }
    case GgmlType::kBF16: {
      auto* h = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = Bf16ToFp32(h[i]);
      return Status::Ok();
    }
    case GgmlType::kQ8_0: {
      auto* blocks = static_cast<const BlockQ8_0*>(src);
      for (int64_t b = 0; b < n / kQK; ++b) {
        const float d = Fp16ToFp32(blocks[b].d);
        for (int j = 0; j < kQK; ++j) dst[b * kQK + j] = blocks[b].qs[j] * d;
      }
      return Status::Ok();
    }
    case GgmlType::kQ4_0: {
      auto* blocks = static_cast<const BlockQ4_0*>(src);
      for (int64_t b = 0; b < n / kQK; ++b) {
        const float d = Fp16ToFp32(blocks[b].d);
        for (int j = 0; j < kQK / 2; ++j) {
          dst[b * kQK + j] = ((blocks[b].qs[j] & 0x0F) - 8) * d;
          dst[b * kQK + j + kQK / 2] = ((blocks[b].qs[j] >> 4) - 8) * d;
        }
      }
      return Status::Ok();
    }
    case GgmlType::kQ4_K:
      DequantizeRowQ4_K(static_cast<const BlockQ4_K*>(src), dst, n);
      return Status::Ok();
    case GgmlType::kQ6_K:
      DequantizeRowQ6_K(static_cast<const BlockQ6_K*>(src), dst, n);
      return Status::Ok();
    default: {
      auto t = Traits(static_cast<uint32_t>(type));
      return Status::InvalidArgument(std::string("tensor type ") +
                                     (t ? std::string(t->name) : "?") +
                                     " cannot be dequantized yet");
    }
  }
}

}  // namespace evald::kernels
