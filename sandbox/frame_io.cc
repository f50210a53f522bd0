#include "sandbox/frame_io.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

namespace evald::sandbox {

namespace {

Status WriteAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0)
      return Status::IoError(std::string("write to sandbox pipe: ") + std::strerror(errno));
    data += w;
    n -= static_cast<size_t>(w);
  }
  return Status::Ok();
}

// Reads exactly n bytes before the deadline. *got_any tells a clean EOF from a torn frame.
Status ReadAll(int fd, char* data, size_t n, std::chrono::steady_clock::time_point deadline,
               bool has_deadline, bool* got_any) {
  while (n > 0) {
    if (has_deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      deadline - std::chrono::steady_clock::now())
                      .count();
      if (left <= 0) return Status::Unavailable("timed out waiting for the sandbox");
      pollfd p{fd, POLLIN, 0};
      int rc = ::poll(&p, 1, static_cast<int>(left));
      if (rc < 0 && errno == EINTR) continue;
      if (rc == 0) return Status::Unavailable("timed out waiting for the sandbox");
    }
    ssize_t r = ::read(fd, data, n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0)
      return Status::IoError(std::string("read from sandbox pipe: ") + std::strerror(errno));
    if (r == 0) {
      return *got_any ? Status::Corruption("sandbox stream ended inside a frame")
                      : Status::Unavailable("sandbox closed its pipe");
    }
    *got_any = true;
    data += r;
    n -= static_cast<size_t>(r);
  }
  return Status::Ok();
}

}  // namespace

Status WriteFrame(int fd, const google::protobuf::MessageLite& message) {
  std::string body;
  if (!message.SerializeToString(&body)) return Status::Internal("cannot serialize frame");
  if (body.size() > kMaxFrameBytes) return Status::InvalidArgument("frame too large");
  unsigned char hdr[4];
  uint32_t len = static_cast<uint32_t>(body.size());
  for (int i = 0; i < 4; ++i) hdr[i] = static_cast<unsigned char>(len >> (8 * i));
  EVALD_RETURN_IF_ERROR(WriteAll(fd, reinterpret_cast<const char*>(hdr), 4));
  return WriteAll(fd, body.data(), body.size());
}

Status ReadFrame(int fd, google::protobuf::MessageLite* message, size_t max_bytes, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  bool has_deadline = timeout_ms >= 0;
  bool got_any = false;
  unsigned char hdr[4];
  EVALD_RETURN_IF_ERROR(
      ReadAll(fd, reinterpret_cast<char*>(hdr), 4, deadline, has_deadline, &got_any));
  uint32_t len = 0;
  for (int i = 0; i < 4; ++i) len |= static_cast<uint32_t>(hdr[i]) << (8 * i);
  if (len > max_bytes)
    return Status::Corruption("sandbox frame of " + std::to_string(len) + " bytes exceeds limit");
  std::string body(len, '\0');
  EVALD_RETURN_IF_ERROR(ReadAll(fd, body.data(), len, deadline, has_deadline, &got_any));
  if (!message->ParseFromString(body)) return Status::Corruption("malformed sandbox frame");
  return Status::Ok();
}

}  // namespace evald::sandbox
