// What a sandbox worker is allowed, and which isolation layers it actually got.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace evald {

struct SandboxOptions {
  // The evald-sandbox init executable. Empty: next to the running executable, then the build tree.
  std::string init_path;
  // Fail instead of degrading when a layer is unavailable.
  bool require_full_isolation = false;
  // false: do not even try namespaces (hosts that forbid them; tests of the degraded path).
  bool use_namespaces = true;
  uint64_t scratch_bytes = 256ull << 20;    // per-job tmpfs
  uint64_t memory_bytes = 4ull << 30;       // cgroup memory limit of one worker (processes + tmpfs)
  uint32_t max_pids = 256;                  // cgroup pids limit of one worker
  std::vector<std::string> readonly_binds;  // extra host paths the tools need (rarely)
  // Degraded mode only (no mount namespace): where per-job directories are made.
  std::string host_scratch_parent;
};

struct SandboxLayers {
  bool mount_ns = false, pid_ns = false, net_ns = false, ipc_ns = false, uts_ns = false;
  bool user_ns = false;  // namespaces owned by an unprivileged user namespace
  bool fs_view = false;  // read-only root with only the tools, pivoted into
  bool proc = false;
  bool uid_drop = false;
  bool seccomp = false;
  bool rlimits = true;  // always applied
  std::string cgroup;   // "v1", "v2" or "" (none)
  bool cgroup_memory = false, cgroup_pids = false;

  // One line for the start-up log and reports.
  std::string Describe() const;
  // Everything needed before code from a design may run natively (Verilator builds C++ from it).
  bool ContainsNativeCode() const { return fs_view && pid_ns && net_ns && seccomp && uid_drop; }
};

}  // namespace evald
