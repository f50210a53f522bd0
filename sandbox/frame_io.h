// Length-prefixed protobuf frames over pipes: a 4-byte little-endian length, then the bytes.
// Both ends bound the length before allocating, so neither a confused init nor a corrupted
// stream can make the other side allocate without limit.
#pragma once

#include <google/protobuf/message_lite.h>

#include <cstddef>

#include "base/status.h"

namespace evald::sandbox {

inline constexpr size_t kMaxFrameBytes = 512u << 20;

Status WriteFrame(int fd, const google::protobuf::MessageLite& message);

// timeout_ms < 0 waits forever. A clean end of stream before any byte is Unavailable.
Status ReadFrame(int fd, google::protobuf::MessageLite* message, size_t max_bytes = kMaxFrameBytes,
                 int timeout_ms = -1);

}  // namespace evald::sandbox
