// ggml tensor types as stored in GGUF files: ids, block sizes and bytes per block (facts of the
// format, so that files written by llama.cpp's tools load here bit for bit).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace evald::kernels {

enum class GgmlType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kBF16 = 30,
};

struct TypeTraits {
  std::string_view name;
  uint32_t block_elements;  // elements per block
  uint32_t block_bytes;     // bytes per block
};

// nullopt for type ids this reader does not know.
std::optional<TypeTraits> Traits(uint32_t type);

// Bytes of a row of n elements; nullopt when n is not a multiple of the block size.
std::optional<uint64_t> RowBytes(GgmlType type, uint64_t n);

}  // namespace evald::kernels
