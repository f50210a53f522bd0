#include "sandbox/init/cpu_limit.h"

#include <sched.h>
#include <time.h>

#include <algorithm>

namespace evald::sandbox {

CpuLimit::CpuLimit(pid_t pid, uint32_t limit_ms)
    : limit_ns_(static_cast<int64_t>(limit_ms) * 1000000) {
  // glibc checks the clock with a system call: once here, not at every look.
  clock_ok_ = limit_ns_ > 0 && ::clock_getcpuclockid(pid, &clock_) == 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (clock_ok_ && ::sched_getaffinity(pid, sizeof set, &set) == 0)
    cpus_ = std::max(1, CPU_COUNT(&set));
}

bool CpuLimit::Exceeded(int* wait_ms) {
  if (!enabled()) return false;
  timespec used{};
  if (!clock_ok_ || ::clock_gettime(clock_, &used) != 0) {
    *wait_ms = std::min(*wait_ms, 1);
    return false;
  }
  const int64_t left = limit_ns_ - (int64_t{used.tv_sec} * 1000000000 + used.tv_nsec);
  if (left <= 0) return true;
  // The step cannot use more CPU time than `cpus_` times the time that passes.
  const int64_t sleep_ms = std::max<int64_t>(1, left / cpus_ / 1000000);
  *wait_ms = static_cast<int>(std::min<int64_t>(*wait_ms, sleep_ms));
  return false;
}

}  // namespace evald::sandbox
