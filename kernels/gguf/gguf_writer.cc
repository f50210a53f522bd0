#include "kernels/gguf/gguf_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "base/file_io.h"
#include "kernels/quant/blocks.h"

namespace evald::kernels {

namespace {

template <typename T>
void Put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof v);
}

void PutString(std::string* out, const std::string& s) {
  Put<uint64_t>(out, s.size());
  out->append(s);
}

void PutValue(std::string* out, const GgufValue& v) {
  switch (v.type) {
    case GgufType::kUint8:
      Put<uint8_t>(out, static_cast<uint8_t>(v.u));
      break;
    case GgufType::kInt8:
      Put<int8_t>(out, static_cast<int8_t>(v.i));
      break;
    case GgufType::kUint16:
      Put<uint16_t>(out, static_cast<uint16_t>(v.u));
      break;
    case GgufType::kInt16:
      Put<int16_t>(out, static_cast<int16_t>(v.i));
      break;
    case GgufType::kUint32:
      Put<uint32_t>(out, static_cast<uint32_t>(v.u));
      break;
    case GgufType::kInt32:
      Put<int32_t>(out, static_cast<int32_t>(v.i));
      break;
    case GgufType::kUint64:
      Put<uint64_t>(out, v.u);
      break;
    case GgufType::kInt64:
      Put<int64_t>(out, v.i);
      break;
    case GgufType::kFloat32:
      Put<float>(out, static_cast<float>(v.f));
      break;
    case GgufType::kFloat64:
      Put<double>(out, v.f);
      break;
    case GgufType::kBool:
      Put<uint8_t>(out, v.u ? 1 : 0);
      break;
    case GgufType::kString:
      PutString(out, v.s);
      break;
    case GgufType::kArray:
      Put<uint32_t>(out, static_cast<uint32_t>(v.array_type));
      Put<uint64_t>(out, v.array.size());
      for (const auto& e : v.array) PutValue(out, e);
      break;
  }
}

}  // namespace

void GgufWriter::SetMetadata(const std::string& key, const GgufValue& value) {
  for (auto& [k, v] : metadata_) {
    if (k == key) {
      v = value;
      return;
    }
  }
  metadata_.emplace_back(key, value);
}

void GgufWriter::AddTensor(const std::string& name, GgmlType type, std::vector<uint64_t> dims,
                           std::string bytes) {
  const uint64_t size = bytes.size();
  tensors_.push_back({name, type, std::move(dims), std::move(bytes), size, false});
}

void GgufWriter::AddTensorLayout(const std::string& name, GgmlType type,
                                 std::vector<uint64_t> dims) {
  uint64_t rows = 1;
  for (size_t i = 1; i < dims.size(); ++i) rows *= dims[i];
  const uint64_t size = dims.empty() ? 0 : RowBytes(type, dims[0]).value_or(0) * rows;
  tensors_.push_back({name, type, std::move(dims), std::string(), size, true});
}

std::string GgufWriter::Header(uint64_t alignment, std::vector<uint64_t>* offsets) const {
  std::string out;
  Put<uint32_t>(&out, 0x46554747);
  Put<uint32_t>(&out, 3);
  Put<uint64_t>(&out, tensors_.size());
  Put<uint64_t>(&out, metadata_.size());
  for (const auto& [k, v] : metadata_) {
    PutString(&out, k);
    Put<uint32_t>(&out, static_cast<uint32_t>(v.type));
    PutValue(&out, v);
  }
  uint64_t offset = 0;
  for (const auto& t : tensors_) {
    PutString(&out, t.name);
    Put<uint32_t>(&out, static_cast<uint32_t>(t.dims.size()));
    for (uint64_t d : t.dims) Put<uint64_t>(&out, d);
    Put<uint32_t>(&out, static_cast<uint32_t>(t.type));
    Put<uint64_t>(&out, offset);
    offsets->push_back(offset);
    offset += (t.size + alignment - 1) / alignment * alignment;
  }
  offsets->push_back(offset);  // the end of the data
  out.resize((out.size() + alignment - 1) / alignment * alignment, '\0');
  return out;
}

Status GgufWriter::Write(const std::string& path, uint64_t alignment) const {
  std::vector<uint64_t> offsets;
  std::string out = Header(alignment, &offsets);
  for (const auto& t : tensors_) {
    if (t.layout_only)
      return Status::InvalidArgument("tensor " + t.name + " has no data (use WriteLayout)");
    out += t.bytes;
    out.resize((out.size() + alignment - 1) / alignment * alignment, '\0');
  }
  return WriteFileAtomic(path, out);
}

Status GgufWriter::WriteLayout(const std::string& path, uint64_t alignment) const {
  std::vector<uint64_t> offsets;
  const std::string header = Header(alignment, &offsets);
  EVALD_RETURN_IF_ERROR(WriteFileAtomic(path, header));
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Status::IoError("cannot open " + path + ": " + std::strerror(errno));
  bool ok = ::ftruncate(fd, static_cast<off_t>(header.size() + offsets.back())) == 0;
  for (size_t i = 0; ok && i < tensors_.size(); ++i) {
    const std::string& bytes = tensors_[i].bytes;
    const off_t at = static_cast<off_t>(header.size() + offsets[i]);
    ok = bytes.empty() ||
         ::pwrite(fd, bytes.data(), bytes.size(), at) == static_cast<ssize_t>(bytes.size());
  }
  const int err = errno;
  ::close(fd);
  if (!ok) return Status::IoError("writing the layout " + path + ": " + std::strerror(err));
  return Status::Ok();
}

StatusOr<int> QuantizeModel(const std::string& in, const std::string& out_path, GgmlType type) {
  if (type != GgmlType::kQ8_0 && type != GgmlType::kQ4_0)
    return Status::InvalidArgument("quantize supports q8_0 and q4_0");
  auto file = GgufFile::Open(in);
  if (!file.ok()) return file.status();
  GgufWriter w;
  for (const auto& [k, v] : (*file)->metadata()) w.SetMetadata(k, v);
  // general.file_type as llama.cpp numbers it: 7 = mostly Q8_0, 2 = mostly Q4_0.
  GgufValue ft;
  ft.type = GgufType::kUint32;
  ft.u = type == GgmlType::kQ8_0 ? 7 : 2;
  w.SetMetadata("general.file_type", ft);
  int quantized = 0;
  for (const auto& t : (*file)->tensors()) {
    const bool float_src =
        t.type == GgmlType::kF32 || t.type == GgmlType::kF16 || t.type == GgmlType::kBF16;
    const uint64_t cols = t.dims[0];
    if (!float_src || t.dims.size() != 2 || cols % kQK != 0) {
      w.AddTensor(t.name, t.type, t.dims,
                  std::string(reinterpret_cast<const char*>(t.data), t.bytes));
      continue;
    }
    const uint64_t rows = t.rows();
    const uint64_t in_row = *RowBytes(t.type, cols), out_row = *RowBytes(type, cols);
    std::string bytes(rows * out_row, '\0');
    std::vector<float> row(cols);
    for (uint64_t r = 0; r < rows; ++r) {
      EVALD_RETURN_IF_ERROR(
          DequantizeRow(t.type, t.data + r * in_row, row.data(), static_cast<int64_t>(cols)));
      void* dst = bytes.data() + r * out_row;
      if (type == GgmlType::kQ8_0) {
        QuantizeRowQ8_0(row.data(), static_cast<BlockQ8_0*>(dst), static_cast<int64_t>(cols));
      } else {
        QuantizeRowQ4_0(row.data(), static_cast<BlockQ4_0*>(dst), static_cast<int64_t>(cols));
      }
    }
    w.AddTensor(t.name, type, t.dims, std::move(bytes));
    ++quantized;
  }
  EVALD_RETURN_IF_ERROR(w.Write(out_path, (*file)->alignment()));
  return quantized;
}

}  // namespace evald::kernels
