// ggml's block quantization formats, bit-exact: Q8_0 (32 int8 + half scale) and Q4_0
// (32 4-bit values + half scale), their reference quantizers, and row dequantization for the
// types a model may hold (F32, F16, BF16, Q8_0, Q4_0).
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/status.h"
#include "kernels/gguf/ggml_types.h"

namespace evald::kernels {

inline constexpr int kQK = 32;  // elements per Q8_0 / Q4_0 block

#pragma pack(push, 1)
struct BlockQ8_0 {
  uint16_t d;  // IEEE half scale
  int8_t qs[kQK];
};
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQK / 2];  // element j in the low nibble of qs[j], element j+16 in the high one
};
#pragma pack(pop)
static_assert(sizeof(BlockQ8_0) == 34 && sizeof(BlockQ4_0) == 18, "ggml block layouts");

// n must be a multiple of 32.
void QuantizeRowQ8_0(const float* x, BlockQ8_0* y, int64_t n);
void QuantizeRowQ4_0(const float* x, BlockQ4_0* y, int64_t n);

// Dequantizes n elements of a row stored as `type` (also Q4_K and Q6_K).
Status DequantizeRow(GgmlType type, const void* src, float* dst, int64_t n);

}  // namespace evald::kernels
