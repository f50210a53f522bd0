#include "kernels/gguf/ggml_types.h"

namespace evald::kernels {

std::optional<TypeTraits> Traits(uint32_t type) {
  switch (static_cast<GgmlType>(type)) {
    case GgmlType::kF32:
      return TypeTraits{"F32", 1, 4};
    case GgmlType::kF16:
      return TypeTraits{"F16", 1, 2};
    case GgmlType::kBF16:
      return TypeTraits{"BF16", 1, 2};
    case GgmlType::kQ4_0:
      return TypeTraits{"Q4_0", 32, 18};
    case GgmlType::kQ4_1:
      return TypeTraits{"Q4_1", 32, 20};
    case GgmlType::kQ5_0:
      return TypeTraits{"Q5_0", 32, 22};
    case GgmlType::kQ5_1:
      return TypeTraits{"Q5_1", 32, 24};
    case GgmlType::kQ8_0:
      return TypeTraits{"Q8_0", 32, 34};
    case GgmlType::kQ8_1:
      return TypeTraits{"Q8_1", 32, 36};
    case GgmlType::kQ2_K:
      return TypeTraits{"Q2_K", 256, 84};
    case GgmlType::kQ3_K:
      return TypeTraits{"Q3_K", 256, 110};
    case GgmlType::kQ4_K:
      return TypeTraits{"Q4_K", 256, 144};
    case GgmlType::kQ5_K:
      return TypeTraits{"Q5_K", 256, 176};
    case GgmlType::kQ6_K:
      return TypeTraits{"Q6_K", 256, 210};
    case GgmlType::kQ8_K:
      return TypeTraits{"Q8_K", 256, 292};
  }
  return std::nullopt;
}

std::optional<uint64_t> RowBytes(GgmlType type, uint64_t n) {
  auto t = Traits(static_cast<uint32_t>(type));
  if (!t || n % t->block_elements != 0) return std::nullopt;
  return n / t->block_elements * t->block_bytes;
}

}  // namespace evald::kernels
