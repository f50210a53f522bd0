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
  // A tensor declared by shape only, its data all zeros and never held in memory: a full-size
  // model's layout (metadata and tensor table as the real file has them) for memory planning.
  void AddTensorLayout(const std::string& name, GgmlType type, std::vector<uint64_t> dims);
  // Writes atomically (temporary file + rename). Refuses layout-only tensors.
  Status Write(const std::string& path, uint64_t alignment = 32) const;
  // Writes the header and the tensors that have data; the rest of the file is a hole (a sparse
  // file of the full size, taking only the header's blocks on disk).
  Status WriteLayout(const std::string& path, uint64_t alignment = 32) const;

 private:
  struct Tensor {
    std::string name;
    GgmlType type;
    std::vector<uint64_t> dims;
    std::string bytes;
    uint64_t size = 0;  // bytes.size(), or the declared size of a layout-only tensor
    bool layout_only = false;
  };
  // Header, metadata and tensor table, padded to `alignment`; each tensor's data offset.
  std::string Header(uint64_t alignment, std::vector<uint64_t>* offsets) const;

  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::vector<Tensor> tensors_;
};

// Copies `in` to `out` with every 2-D F32/F16/BF16 weight whose rows are a multiple of 32
// quantized to `type` (Q8_0 or Q4_0), the token embedding table included; other tensors are
// copied as they are. Returns the number of tensors quantized.
StatusOr<int> QuantizeModel(const std::string& in, const std::string& out, GgmlType type);

}  // namespace evald::kernels
