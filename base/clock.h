// Wall-clock time as records store it.
#pragma once

#include <chrono>
#include <cstdint>

namespace evald {

// Milliseconds since the Unix epoch (record timestamps: created, started, finished).
inline int64_t UnixMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace evald
