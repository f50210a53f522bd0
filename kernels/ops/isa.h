// The instruction sets the kernels have versions for, and which of them this CPU runs. A session
// picks its kernels once from the table for one of them (kernel_table.h); nothing below
// switches on it per call.
#pragma once

namespace evald::kernels {

enum class Isa { kScalar, kAvx2, kAvxVnni, kAvx512Vnni };

// The best path this CPU supports (EVALD_FORCE_SCALAR=1 in the environment forces the oracle).
Isa DetectIsa();
// Whether this CPU can run `isa`.
bool IsaSupported(Isa isa);
const char* IsaName(Isa isa);

}  // namespace evald::kernels
