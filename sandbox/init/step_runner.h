// Runs one untrusted step (a compiler or simulator invocation) inside the sandbox: its own
// process group, stdout and stderr into capped pipes (one, or one each), rlimits, the unprivileged
// identity, no_new_privs and the seccomp allow-list, a CPU-time limit and a wall-clock deadline
// that does not count waits for a CPU. Whatever the step leaves behind is killed before the next
// one starts.
#pragma once

#include <cstdint>
#include <string>

#include "sandbox/init/seccomp_filter.h"
#include "sandbox/sandbox_protocol.pb.h"

namespace evald::sandbox {

struct StepContext {
  std::string workdir;
  uint32_t uid = 0;  // 0: keep the init's identity
  uint32_t gid = 0;
  const SeccompProgram* seccomp = nullptr;  // installed in every step when set
  bool pid_namespace = false;               // kill(-1) then reaches exactly the sandbox's processes
  // /proc is the sandbox's own mount (of its pid namespace), which a step asking for hide_proc
  // detaches in a mount namespace of its own. Without it (no filesystem view) there is nothing
  // of ours to hide and the step runs as it is.
  bool own_proc = false;
};

StepResult RunStep(const StepSpec& spec, const StepContext& ctx);

// Kills every process the steps left (daemons, setsid escapes) and reaps them.
void KillLeftovers(const StepContext& ctx, pid_t step_group);

}  // namespace evald::sandbox
