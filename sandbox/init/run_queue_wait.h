// How long a step's process has waited for a CPU: runnable, but not running because other
// processes had the CPUs (the scheduler's run_delay, /proc/PID/schedstat's second field).
//
// Why: the step's wall-clock deadline is a backstop for a step that waits without computing (its
// CPU time is limited apart, CpuLimit). Measured in plain wall time it moved with the machine's
// load: a long simulation beside busy loops waited for a CPU longer than it ran and was ended by
// the backstop. Wall time less this wait is what the step would have taken alone, up to its own
// sleeping, which is what the backstop is for.
//
// Only the step's own process's main thread is read, as the simulators run (vvp, a Verilator
// model, ivl, ivlpp: one process, one thread): the waits of processes it starts are not seen (they
// take their figure with them when they exit), so a step that waits for its children (a shell,
// Verilator's make) is held to plain wall time as before.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace evald::sandbox {

class RunQueueWait {
 public:
  // Reads nothing (Waited() stays 0) when /proc is not of our pid namespace or the kernel keeps no
  // scheduler statistics: the deadline is then plain wall time, as it was.
  explicit RunQueueWait(pid_t pid);
  ~RunQueueWait();
  RunQueueWait(const RunQueueWait&) = delete;
  RunQueueWait& operator=(const RunQueueWait&) = delete;

  // Nanoseconds the step's main thread has waited on a run queue since it started; the last
  // value read once it can no longer be read (the step is exiting). Never decreases.
  int64_t WaitedNs();

 private:
  int fd_ = -1;
  int64_t waited_ns_ = 0;
};

// The second of schedstat's three decimal fields ("runtime run_delay timeslices\n"), or -1 when
// `text` is not that.
int64_t ParseRunDelay(const char* text, size_t size);

}  // namespace evald::sandbox
