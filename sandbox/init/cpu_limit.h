// A step's CPU-time limit (StepSpec.cpu_limit_ms), kept by the init from outside the step: it
// reads the process's own CPU clock (clock_getcpuclockid: the scheduler's runtime of all its
// threads, in nanoseconds) and ends the step once the limit is used up.
//
// Why not an interval timer inside the step (ITIMER_PROF, as before): the kernel charges that
// timer by sampling at each timer tick whichever process is running, so a spinning step that
// shares its CPU with many short processes is charged ticks it did not use (300 ms at 225 ms of
// real runtime, measured beside a loop of /bin/true): the limit moved with the machine's load.
// The scheduler's clock does not, and a step cannot ignore or block what ends it.
#pragma once

#include <sys/types.h>
#include <time.h>

#include <cstdint>

namespace evald::sandbox {

class CpuLimit {
 public:
  // No limit when limit_ms is 0.
  CpuLimit(pid_t pid, uint32_t limit_ms);

  bool enabled() const { return limit_ns_ > 0; }

  // Whether the step has used its limit. Otherwise `*wait_ms` is lowered to the longest the init
  // may sleep before the step could have used it (what is left spread over the CPUs the step may
  // run on), at least 1 ms. A clock that cannot be read (the step is exiting) is looked at again
  // in 1 ms; RLIMIT_CPU and the wall clock stay behind it as backstops.
  bool Exceeded(int* wait_ms);

 private:
  int64_t limit_ns_;
  clockid_t clock_{};
  bool clock_ok_ = false;
  int cpus_ = 1;
};

}  // namespace evald::sandbox
