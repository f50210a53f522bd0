// The system-call deny-list applied to every untrusted step just before exec. A deny-list (not
// an allow-list) because the tools under it (iverilog, vvp, verilator, make, g++, perl) use a wide
// and version-dependent set of calls; what they never need - networking, tracing, mounting,
// namespaces, kernel modules, keyrings, bpf, device nodes - is refused with EPERM.
#pragma once

namespace evald::sandbox {

// Returns 0 or a negative errno. Requires no_new_privs (or CAP_SYS_ADMIN).
int InstallSeccompDenyList();

}  // namespace evald::sandbox
