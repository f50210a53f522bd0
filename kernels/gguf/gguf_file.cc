#include "kernels/gguf/gguf_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <type_traits>

namespace evald::kernels {

namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" little-endian
constexpr uint64_t kMaxKeyBytes = 1 << 16;
constexpr uint64_t kMaxDims = 4;
constexpr int kMaxArrayDepth = 2;

// A bounds-checked reader over the file's bytes.
class Cursor {
 public:
  Cursor(const uint8_t* data, uint64_t size) : data_(data), size_(size) {}
  uint64_t pos() const { return pos_; }
  uint64_t left() const { return size_ - pos_; }

  template <typename T>
  bool Read(T* out) {
    if (left() < sizeof(T)) return false;
    std::memcpy(out, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  bool ReadString(std::string* out, uint64_t max_len) {
    uint64_t len = 0;
    if (!Read(&len) || len > max_len || len > left()) return false;
    out->assign(reinterpret_cast<const char*>(data_ + pos_), len);
    pos_ += len;
    return true;
  }

 private:
  const uint8_t* data_;
  uint64_t size_;
  uint64_t pos_ = 0;
};

uint64_t ScalarBytes(GgufType t) {
  switch (t) {
    case GgufType::kUint8:
    case GgufType::kInt8:
    case GgufType::kBool:
      return 1;
    case GgufType::kUint16:
    case GgufType::kInt16:
      return 2;
    case GgufType::kUint32:
    case GgufType::kInt32:
    case GgufType::kFloat32:
      return 4;
    case GgufType::kUint64:
    case GgufType::kInt64:
    case GgufType::kFloat64:
      return 8;
    default:
      return 0;
  }
}

Status Bad(const std::string& what, uint64_t pos) {
  return Status::Corruption("GGUF: " + what + " (at byte " + std::to_string(pos) + ")");
}

// One scalar of type T into the value's field for its kind (unsigned ones into u and i).
template <typename T>
bool ReadScalar(Cursor& c, GgufValue* v) {
  T x;
  if (!c.Read(&x)) return false;
  if constexpr (std::is_floating_point_v<T>) {
    v->f = x;
  } else {
    if constexpr (std::is_unsigned_v<T>) v->u = x;
    v->i = static_cast<int64_t>(x);
  }
  return true;
}

Status ReadValue(Cursor& c, GgufType type, GgufValue* v, int depth);

Status ReadArray(Cursor& c, GgufValue* v, int depth) {
  if (depth >= kMaxArrayDepth) return Bad("arrays nested too deeply", c.pos());
  uint32_t et = 0;
  uint64_t n = 0;
  if (!c.Read(&et) || !c.Read(&n)) return Bad("value runs past the end of the file", c.pos());
  if (et > static_cast<uint32_t>(GgufType::kFloat64))
    return Bad("unknown array element type", c.pos());
  v->array_type = static_cast<GgufType>(et);
  // Every element takes at least one byte (strings: their 8-byte length): the count cannot
  // exceed what is left, which bounds the allocation below.
  uint64_t min_bytes = v->array_type == GgufType::kString  ? 8
                       : v->array_type == GgufType::kArray ? 12
                                                           : ScalarBytes(v->array_type);
  if (n > c.left() / min_bytes)
    return Bad("array of " + std::to_string(n) + " elements overruns the file", c.pos());
  v->array.resize(n);
  for (uint64_t k = 0; k < n; ++k)
    EVALD_RETURN_IF_ERROR(ReadValue(c, v->array_type, &v->array[k], depth + 1));
  return Status::Ok();
}

Status ReadValue(Cursor& c, GgufType type, GgufValue* v, int depth) {
  v->type = type;
  bool ok = false;
  switch (type) {
    case GgufType::kUint8:
      ok = ReadScalar<uint8_t>(c, v);
      break;
    case GgufType::kInt8:
      ok = ReadScalar<int8_t>(c, v);
      break;
    case GgufType::kUint16:
      ok = ReadScalar<uint16_t>(c, v);
      break;
    case GgufType::kInt16:
      ok = ReadScalar<int16_t>(c, v);
      break;
    case GgufType::kUint32:
      ok = ReadScalar<uint32_t>(c, v);
      break;
    case GgufType::kInt32:
      ok = ReadScalar<int32_t>(c, v);
      break;
    case GgufType::kUint64:
      ok = ReadScalar<uint64_t>(c, v);
      break;
    case GgufType::kInt64:
      ok = ReadScalar<int64_t>(c, v);
      break;
    case GgufType::kFloat32:
      ok = ReadScalar<float>(c, v);
      break;
    case GgufType::kFloat64:
      ok = ReadScalar<double>(c, v);
      break;
    case GgufType::kBool: {
      uint8_t x;
      if (!c.Read(&x)) break;
      if (x > 1) return Bad("boolean value is neither 0 nor 1", c.pos());
      v->u = x;
      return Status::Ok();
    }
    case GgufType::kString:
      ok = c.ReadString(&v->s, c.left());
      break;
    case GgufType::kArray:
      return ReadArray(c, v, depth);
    default:
      return Bad("unknown value type " + std::to_string(static_cast<uint32_t>(type)), c.pos());
  }
  return ok ? Status::Ok() : Bad("value runs past the end of the file", c.pos());
}

}  // namespace

std::optional<int64_t> GgufValue::AsInt() const {
  switch (type) {
    case GgufType::kUint8:
    case GgufType::kUint16:
    case GgufType::kUint32:
    case GgufType::kBool:
      return static_cast<int64_t>(u);
    case GgufType::kUint64:
      if (u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
      return static_cast<int64_t>(u);
    case GgufType::kInt8:
    case GgufType::kInt16:
    case GgufType::kInt32:
    case GgufType::kInt64:
      return i;
    default:
      return std::nullopt;
  }
}

std::optional<double> GgufValue::AsFloat() const {
  if (type == GgufType::kFloat32 || type == GgufType::kFloat64) return f;
  if (auto v = AsInt()) return static_cast<double>(*v);
  return std::nullopt;
}

uint64_t GgufTensor::elements() const {
  uint64_t n = 1;
  for (uint64_t d : dims) n *= d;
  return n;
}

StatusOr<std::unique_ptr<GgufFile>> GgufFile::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IoError("cannot open " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::IoError(path + " is not a regular file");
  }
  std::unique_ptr<GgufFile> f(new GgufFile());
  f->size_ = static_cast<uint64_t>(st.st_size);
  if (f->size_ > 0) {
    void* m = ::mmap(nullptr, f->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      ::close(fd);
      return Status::IoError("cannot map " + path + ": " + std::strerror(errno));
    }
    f->mapping_ = m;
    f->base_ = static_cast<const uint8_t*>(m);
  }
  ::close(fd);
  Status st2 = f->Parse();
  if (!st2.ok()) return st2.Annotate(path);
  return f;
}

StatusOr<std::unique_ptr<GgufFile>> GgufFile::FromBytes(std::string bytes) {
  std::unique_ptr<GgufFile> f(new GgufFile());
  f->owned_ = std::move(bytes);
  f->base_ = reinterpret_cast<const uint8_t*>(f->owned_.data());
  f->size_ = f->owned_.size();
  EVALD_RETURN_IF_ERROR(f->Parse());
  return f;
}

GgufFile::~GgufFile() {
  if (mapping_) ::munmap(mapping_, size_);
}

Status GgufFile::Parse() {
  Cursor c(base_, size_);
  uint32_t magic = 0;
  if (!c.Read(&magic) || magic != kMagic) return Status::Corruption("not a GGUF file (bad magic)");
  if (!c.Read(&version_)) return Bad("truncated header", c.pos());
  if (version_ != 2 && version_ != 3)
    return Status::Corruption("GGUF version " + std::to_string(version_) +
                              " is not supported (2 or 3)");
  uint64_t n_tensors = 0, n_kv = 0;
  if (!c.Read(&n_tensors) || !c.Read(&n_kv)) return Bad("truncated header", c.pos());
  // Each key-value takes at least 12 bytes and each tensor info at least 24.
  if (n_kv > c.left() / 12)
    return Bad("metadata count " + std::to_string(n_kv) + " exceeds the file", c.pos());
  if (n_tensors > c.left() / 24)
    return Bad("tensor count " + std::to_string(n_tensors) + " exceeds the file", c.pos());

  for (uint64_t k = 0; k < n_kv; ++k) {
    std::string key;
    if (!c.ReadString(&key, kMaxKeyBytes)) return Bad("bad metadata key", c.pos());
    uint32_t type = 0;
    if (!c.Read(&type)) return Bad("truncated metadata", c.pos());
    GgufValue v;
    EVALD_RETURN_IF_ERROR(ReadValue(c, static_cast<GgufType>(type), &v, 0).Annotate("key " + key));
    if (metadata_.count(key)) return Bad("duplicate metadata key " + key, c.pos());
    metadata_.emplace(std::move(key), std::move(v));
  }
  if (const GgufValue* a = Find("general.alignment")) {
    auto v = a->AsInt();
    if (!v || *v <= 0 || *v > (1 << 20) || (*v & (*v - 1)) != 0)
      return Status::Corruption("GGUF: general.alignment must be a power of two up to 1 MiB");
    alignment_ = static_cast<uint64_t>(*v);
  }

  tensors_.resize(n_tensors);
  for (uint64_t t = 0; t < n_tensors; ++t) {
    GgufTensor& info = tensors_[t];
    if (!c.ReadString(&info.name, kMaxKeyBytes)) return Bad("bad tensor name", c.pos());
    uint32_t n_dims = 0;
    if (!c.Read(&n_dims) || n_dims == 0 || n_dims > kMaxDims)
      return Bad("tensor " + info.name + " has " + std::to_string(n_dims) + " dimensions", c.pos());
    info.dims.resize(n_dims);
    uint64_t elements = 1;
    for (auto& d : info.dims) {
      if (!c.Read(&d)) return Bad("truncated tensor info", c.pos());
      if (d == 0 || d > (uint64_t{1} << 40) || elements > (uint64_t{1} << 50) / d)
        return Bad("tensor " + info.name + " has an invalid shape", c.pos());
      elements *= d;
    }
    uint32_t type = 0;
    if (!c.Read(&type) || !c.Read(&info.offset)) return Bad("truncated tensor info", c.pos());
    auto traits = Traits(type);
    if (!traits)
      return Bad("tensor " + info.name + " has unknown type " + std::to_string(type), c.pos());
    info.type = static_cast<GgmlType>(type);
    auto row = RowBytes(info.type, info.dims[0]);
    if (!row)
      return Bad("tensor " + info.name + ": row length is not a multiple of the block size",
                 c.pos());
    info.bytes = *row * (elements / info.dims[0]);
    if (info.offset % alignment_ != 0)
      return Bad("tensor " + info.name + " is not aligned", c.pos());
    if (tensor_index_.count(info.name)) return Bad("duplicate tensor " + info.name, c.pos());
    tensor_index_[info.name] = t;
  }
  uint64_t data_start = (c.pos() + alignment_ - 1) / alignment_ * alignment_;
  if (data_start > size_ && n_tensors > 0)
    return Bad("data section starts past the end of the file", c.pos());
  for (auto& info : tensors_) {
    if (info.offset > size_ - data_start || info.bytes > size_ - data_start - info.offset)
      return Status::Corruption("GGUF: tensor " + info.name + " (" + std::to_string(info.bytes) +
                                " bytes at offset " + std::to_string(info.offset) +
                                ") lies outside the file");
    info.data = base_ + data_start + info.offset;
  }
  return Status::Ok();
}

const GgufValue* GgufFile::Find(std::string_view key) const {
  auto it = metadata_.find(key);
  return it == metadata_.end() ? nullptr : &it->second;
}

std::optional<int64_t> GgufFile::GetInt(std::string_view key) const {
  const GgufValue* v = Find(key);
  return v ? v->AsInt() : std::nullopt;
}

std::optional<double> GgufFile::GetFloat(std::string_view key) const {
  const GgufValue* v = Find(key);
  return v ? v->AsFloat() : std::nullopt;
}

std::optional<std::string> GgufFile::GetString(std::string_view key) const {
  const GgufValue* v = Find(key);
  if (!v || v->type != GgufType::kString) return std::nullopt;
  return v->s;
}

const GgufTensor* GgufFile::FindTensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace evald::kernels
