// IEEE half and bfloat16 conversions, bit-exact (ggml stores block scales as IEEE half).
#pragma once

#include <cstdint>
#include <cstring>

namespace evald::kernels {

inline float Fp16ToFp32(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1F, mant = h & 0x3FF, bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400) == 0);
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (mant & 0x3FF) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7F800000 | mant << 13;
  } else {
    bits = sign | (exp + 112) << 23 | mant << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Round to nearest even, as the F16C instruction and ggml's reference conversion do.
inline uint16_t Fp32ToFp16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t abs = x & 0x7FFFFFFF;
  if (abs >= 0x7F800000)
    return static_cast<uint16_t>(sign | 0x7C00 | (abs > 0x7F800000 ? 0x200 : 0));
  if (abs >= 0x477FF000) return static_cast<uint16_t>(sign | 0x7C00);  // overflow to infinity
  if (abs < 0x38800000) {  // below the smallest normal half: a subnormal half, or zero
    if (abs <= 0x33000000) return static_cast<uint16_t>(sign);  // <= 2^-25 rounds to zero
    uint32_t e = abs >> 23;
    uint32_t mant = (abs & 0x7FFFFF) | 0x800000;
    uint32_t shift = 126 - e;  // 14..25
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t h = ((abs >> 13) - (112 << 10));
  uint32_t rem = abs & 0x1FFF;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;
  return static_cast<uint16_t>(sign | h);
}

inline float Bf16ToFp32(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace evald::kernels
