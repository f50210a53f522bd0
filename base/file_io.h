// Bounded file access. Every file evald reads may come from a user or a model, so reads
// are capped and refuse anything that is not a regular file.
#pragma once

#include <cstddef>
#include <string>

#include "base/status.h"

namespace evald {

inline constexpr size_t kDefaultMaxFileBytes = 256u << 20;

// Whether a read may follow a symbolic link at the path's last component (kRefuse: a file that
// an untrusted step wrote, which could point anywhere).
enum class Links { kFollow, kRefuse };

// Reads a whole regular file: InvalidArgument if it is larger than max_bytes, IoError if it
// cannot be opened or is not a regular file.
StatusOr<std::string> ReadFileBounded(const std::string& path,
                                      size_t max_bytes = kDefaultMaxFileBytes,
                                      Links links = Links::kFollow);

// Writes a file atomically (temporary file + rename) so readers never see half of it.
Status WriteFileAtomic(const std::string& path, const std::string& contents);

bool IsDirectory(const std::string& path);
bool IsRegularFile(const std::string& path);

}  // namespace evald
