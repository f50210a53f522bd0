// ggml's K-quant super-blocks (256 elements): Q4_K and Q6_K, the types most community GGUF files
// mix into their weights (llama.cpp's Q4_0 files keep the output matrix in Q6_K). The layouts are
// ggml's; dequantization here, integer dot products in ops/dot_scalar and ops/dot_avx2.
#pragma once

#include <cstdint>

namespace evald::kernels {

inline constexpr int kQK_K = 256;

#pragma pack(push, 1)
struct BlockQ4_K {
  uint16_t d;             // super-block scale for the 6-bit scales
  uint16_t dmin;          // super-block scale for the 6-bit minimums
  uint8_t scales[12];     // 8 scales and 8 minimums, 6 bits each
  uint8_t qs[kQK_K / 2];  // 4-bit values
};
struct BlockQ6_K {
  uint8_t ql[kQK_K / 2];      // low 4 bits
  uint8_t qh[kQK_K / 4];      // high 2 bits
  int8_t scales[kQK_K / 16];  // 8-bit scales of 16-element groups
  uint16_t d;
};
#pragma pack(pop)
static_assert(sizeof(BlockQ4_K) == 144 && sizeof(BlockQ6_K) == 210, "ggml K-quant layouts");

// Scale and minimum j (0..7) of a Q4_K block, 6 bits each, packed into 12 bytes.
void Q4_KScaleMin(int j, const uint8_t* q, uint8_t* scale, uint8_t* min);

void DequantizeRowQ4_K(const BlockQ4_K* x, float* y, int64_t n);
void DequantizeRowQ6_K(const BlockQ6_K* x, float* y, int64_t n);

}  // namespace evald::kernels
