#include "base/memory_info.h"

#include <cstdlib>
#include <string>

#include "base/file_io.h"

namespace evald {

int64_t AvailableMemoryBytes() {
  auto text = ReadFileBounded("/proc/meminfo", 1 << 16);
  if (!text.ok()) return 0;
  const std::string key = "MemAvailable:";
  const size_t at = text->find(key);
  if (at == std::string::npos) return 0;
  const long long kib = std::strtoll(text->c_str() + at + key.size(), nullptr, 10);
  return kib > 0 ? static_cast<int64_t>(kib) * 1024 : 0;
}

}  // namespace evald
