// Writes GGUF v3 files: metadata and tensors, aligned. Used by `evald quantize` and by the tests
// that build small random-weight models.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "kernels/gguf/gguf_file.h"

namespace evald::kernels {

class GgufWriter {
 public:
  void SetMetadata(const std::string& key, const GgufValue& value);
  void AddTensor(const std::string& name, GgmlType type, std::vector<uint64_t> dims,
                 std::string bytes);
  // Writes atomically (temporary file + rename).
  Status Write(const std::string& path, uint64_t alignment = 32) const;

 private:
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  struct Tensor {
    std::string name;
    GgmlType type;
    std::vector<uint64_t> dims;
    std::string bytes;
  };
  std::vector<Tensor> tensors_;
};

// Copies `in` to `out` with every 2-D F32/F16/BF16 weight whose rows are a multiple of 32
// quantized to `type` (Q8_0 or Q4_0), the token embedding table included; other tensors are
// copied as they are. Returns the number of tensors quantized.
StatusOr<int> QuantizeModel(const std::string& in, const std::string& out, GgmlType type);

}  // namespace evald::kernels
