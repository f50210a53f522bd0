// The system-call filter applied to every untrusted step just before exec: an allow-list
// (default deny). The calls the tools under it (iverilog, vvp, verilator, make, g++, perl, the
// simulation binaries) make are allowed; what they never need - networking, tracing, mounting,
// namespaces, System V IPC, kernel modules, keyrings, bpf, device nodes - is refused with EPERM,
// and every call on neither list fails with ENOSYS.
#pragma once

namespace evald::sandbox {

// Returns 0 or a negative errno. Requires no_new_privs (or CAP_SYS_ADMIN).
int InstallSeccompFilter();

}  // namespace evald::sandbox
