#include "sandbox/init/cpu_limit.h"

#include <sched.h>
#include <time.h>

#include <algorithm>

namespace evald::sandbox {

CpuLimit::CpuLimit(pid_t pid, uint32_t limit_ms)
    : pid_(pid), limit_ns_(static_cast<int64_t>(limit_ms) * 1000000) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(pid, sizeof set, &set) == 0) cpus_ = std::max(1, CPU_COUNT(&set));
}

bool CpuLimit::Exceeded(int* wait_ms) {
  if (!enabled()) return false;
  clockid_t clock;
  timespec used{};
  if (::clock_getcpuclockid(pid_, &clock) != 0 || ::clock_gettime(clock, &used) != 0) {
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
