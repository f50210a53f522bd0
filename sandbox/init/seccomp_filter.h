// The system-call filter applied to every untrusted step just before exec: an allow-list
// (default deny). The calls the tools under it (iverilog, vvp, verilator, make, g++, perl, the
// simulation binaries) make are allowed; what they never need - networking, tracing, mounting,
// namespaces, System V IPC, kernel modules, keyrings, bpf, device nodes - is refused with EPERM,
// and every call on neither list fails with ENOSYS.
#pragma once

#include <linux/filter.h>

#include <vector>

namespace evald::sandbox {

// The allow-list compiled once, in the sandbox's init, to the BPF program the kernel runs.
// Installing it in a step's child is then one system call that allocates nothing: building it
// there (libseccomp resolves ~300 call names, allocates, and binds its symbols lazily, again in
// every fork) cost the init more CPU than the steps' own start-up, and a forked child's writes
// copy the pages they touch.
class SeccompProgram {
 public:
  // 0 or a negative errno.
  int Compile();
  // 0 or a negative errno. Requires no_new_privs (or CAP_SYS_ADMIN); async-signal-safe.
  int Install() const;

 private:
  std::vector<sock_filter> code_;
};

}  // namespace evald::sandbox
