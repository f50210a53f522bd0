// Runs one untrusted step (a compiler or simulator invocation) inside the sandbox: its own
// process group, stdout+stderr into a capped pipe, rlimits, the unprivileged identity,
// no_new_privs and the seccomp allow-list, a wall-clock deadline. Whatever the step leaves
// behind is killed before the next one starts.
#pragma once

#include <cstdint>
#include <string>

#include "sandbox/sandbox_protocol.pb.h"

namespace evald::sandbox {

struct StepContext {
  std::string workdir;
  uint32_t uid = 0;  // 0: keep the init's identity
  uint32_t gid = 0;
  bool seccomp = false;
  bool pid_namespace = false;  // kill(-1) then reaches exactly the sandbox's processes
};

StepResult RunStep(const StepSpec& spec, const StepContext& ctx);

// Kills every process the steps left (daemons, setsid escapes) and reaps them.
void KillLeftovers(const StepContext& ctx, pid_t step_group);

}  // namespace evald::sandbox
