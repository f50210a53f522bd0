#include "sandbox/init/run_queue_wait.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <string>

namespace evald::sandbox {

namespace {

// Whether /proc shows our own pid namespace: without it /proc/PID would name another process.
bool ProcIsOurs() {
  char link[32];
  const ssize_t n = ::readlink("/proc/self", link, sizeof link - 1);
  if (n <= 0) return false;
  return std::string(link, static_cast<size_t>(n)) == std::to_string(::getpid());
}

// Parses one decimal field at `*pos`, then the separator `sep`; -1 on anything else. Values
// past 2^62 ns (146 years) are refused, not wrapped.
int64_t ParseField(const char* text, size_t size, size_t* pos, char sep) {
  int64_t value = 0;
  const size_t begin = *pos;
  while (*pos < size && text[*pos] >= '0' && text[*pos] <= '9') {
    if (value > (int64_t{1} << 62) / 10) return -1;
    value = value * 10 + (text[*pos] - '0');
    ++*pos;
  }
  if (*pos == begin || *pos >= size || text[*pos] != sep) return -1;
  ++*pos;
  return value;
}

}  // namespace

int64_t ParseRunDelay(const char* text, size_t size) {
  size_t pos = 0;
  if (ParseField(text, size, &pos, ' ') < 0) return -1;
  const int64_t run_delay = ParseField(text, size, &pos, ' ');
  if (run_delay < 0 || ParseField(text, size, &pos, '\n') < 0 || pos != size) return -1;
  return run_delay;
}

RunQueueWait::RunQueueWait(pid_t pid) {
  static const bool proc_is_ours = ProcIsOurs();  // the same for every step of this process
  if (pid <= 0 || !proc_is_ours) return;
  // The step is our unreaped child: its pid names it until we wait for it.
  const std::string path = "/proc/" + std::to_string(pid) + "/schedstat";
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
}

RunQueueWait::~RunQueueWait() {
  if (fd_ >= 0) ::close(fd_);
}

int64_t RunQueueWait::WaitedNs() {
  if (fd_ < 0) return waited_ns_;
  char buf[96];
  const ssize_t n = ::pread(fd_, buf, sizeof buf, 0);
  const int64_t delay = n > 0 ? ParseRunDelay(buf, static_cast<size_t>(n)) : -1;
  if (delay >= 0) waited_ns_ = std::max(waited_ns_, delay);
  return waited_ns_;
}

}  // namespace evald::sandbox
