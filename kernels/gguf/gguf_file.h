// A GGUF v2/v3 model file, memory-mapped and validated before anything is used: every count,
// length, dimension, type, offset and the alignment is checked against the file's size, so a
// truncated, corrupt or hostile file gets a clear error and never an out-of-bounds read.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "kernels/gguf/ggml_types.h"

namespace evald::kernels {

enum class GgufType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

struct GgufValue {
  GgufType type = GgufType::kUint8;
  uint64_t u = 0;  // unsigned integers and bool
  int64_t i = 0;   // signed integers
  double f = 0;    // floats
  std::string s;   // strings
  GgufType array_type = GgufType::kUint8;
  std::vector<GgufValue> array;

  std::optional<int64_t> AsInt() const;
  std::optional<double> AsFloat() const;
};

struct GgufTensor {
  std::string name;
  std::vector<uint64_t> dims;  // dims[0] is the row length (ggml's ne[0])
  GgmlType type = GgmlType::kF32;
  uint64_t offset = 0;  // from the start of the data section
  uint64_t bytes = 0;
  const uint8_t* data = nullptr;

  uint64_t elements() const;
  uint64_t rows() const { return dims.empty() || dims[0] == 0 ? 0 : elements() / dims[0]; }
};

class GgufFile {
 public:
  static StatusOr<std::unique_ptr<GgufFile>> Open(const std::string& path);
  // Parses an in-memory copy (tests, fuzzing).
  static StatusOr<std::unique_ptr<GgufFile>> FromBytes(std::string bytes);
  ~GgufFile();
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  const std::map<std::string, GgufValue, std::less<>>& metadata() const { return metadata_; }
  const GgufValue* Find(std::string_view key) const;
  std::optional<int64_t> GetInt(std::string_view key) const;
  std::optional<double> GetFloat(std::string_view key) const;
  std::optional<std::string> GetString(std::string_view key) const;
  const std::vector<GgufTensor>& tensors() const { return tensors_; }
  const GgufTensor* FindTensor(std::string_view name) const;

 private:
  GgufFile() = default;
  Status Parse();

  const uint8_t* base_ = nullptr;
  uint64_t size_ = 0;
  void* mapping_ = nullptr;  // mmap'ed file, or nullptr when owned_ holds the bytes
  std::string owned_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  std::map<std::string, GgufValue, std::less<>> metadata_;
  std::vector<GgufTensor> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;
};

}  // namespace evald::kernels
