// The host side of one sandbox: an evald-sandbox init process living in its own namespaces,
// which runs jobs sent to it one at a time. Setting up namespaces and the filesystem view costs
// milliseconds, so a worker is started once and serves many jobs; every job still gets a fresh
// scratch directory and no process survives from one job to the next.
//
// Threading: a worker is used by one thread at a time. The init is tied to the thread that
// started it (PR_SET_PDEATHSIG fires when that thread ends), so start and use it on a thread that
// outlives it - the evaluation pool's worker threads do.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>

#include "base/cancel_token.h"
#include "base/status.h"
#include "sandbox/cgroup_limits.h"
#include "sandbox/sandbox_options.h"
#include "sandbox/sandbox_protocol.pb.h"

namespace evald {

class SandboxWorker {
 public:
  SandboxWorker(SandboxOptions options, int index);
  ~SandboxWorker();
  SandboxWorker(const SandboxWorker&) = delete;
  SandboxWorker& operator=(const SandboxWorker&) = delete;

  // Starts (or restarts) the init process. Called by Run when needed.
  Status Start();

  // Runs one job. If the init dies or overruns `deadline` it is killed (which kills every
  // process of the job with it) and restarted for the next job; the error says which.
  StatusOr<sandbox::JobResponse> Run(const sandbox::JobRequest& request,
                                     std::chrono::milliseconds deadline);
  // The same with the deadline the job's own steps allow: their wall-time ceilings one after
  // another (sandbox/step_wall.h) plus the time to write its files and clean up after it.
  StatusOr<sandbox::JobResponse> Run(const sandbox::JobRequest& request);

  // Once `cancel` stops, a job still running ends within a tenth of a second: the sandbox is
  // killed (its processes with it) and Run returns Cancelled, so that a cancelled run never waits
  // for a hanging design. Optional; set before the first Run.
  void set_cancel(const CancelToken* cancel) { cancel_ = cancel; }

  // Valid after Start().
  const SandboxLayers& layers() const { return layers_; }
  // OOM kills observed by the worker's cgroup during the last Run.
  bool last_job_oom_killed() const { return last_oom_; }

 private:
  void Stop();
  Status Spawn(unsigned long clone_flags);
  Status SpawnInit();
  StatusOr<sandbox::SandboxConfig> InitConfig();
  Status Handshake(const sandbox::SandboxConfig& config);

  SandboxOptions options_;
  int index_;
  // Waits until the init has something to say, the deadline passes, or cancel_ stops
  // (Cancelled); `deadline` is left with what remains of it.
  Status AwaitResponse(std::chrono::milliseconds* deadline) const;

  const CancelToken* cancel_ = nullptr;
  pid_t pid_ = -1;
  int to_init_ = -1;
  int from_init_ = -1;
  std::unique_ptr<CgroupLimits> cgroup_;
  std::string scratch_parent_;  // degraded mode
  SandboxLayers layers_;
  bool last_oom_ = false;
};

// Resolves the init executable: the option, else beside /proc/self/exe, else the build tree.
std::string FindSandboxInit(const std::string& configured);

}  // namespace evald
