// The instruction sets the kernels have versions for, and which of them this CPU runs. A session
// picks its kernels once from the table for one of them (kernel_table.h); nothing below
// switches on it per call.
#pragma once

#include <optional>
#include <string_view>

#include "base/status.h"

namespace evald::kernels {

enum class Isa { kScalar, kAvx2, kAvxVnni, kAvx512Vnni };

// The path the kernels take: the one EVALD_ISA names (scalar, avx2, avx-vnni, avx512-vnni) where
// this CPU runs it, otherwise the best this CPU supports (EVALD_FORCE_SCALAR=1 is
// EVALD_ISA=scalar). An operator's setting, so that one host can measure every path it can run (the
// AVX2 kernels on an AVX-512 machine); nothing a request says reaches it.
Isa DetectIsa();
// Why EVALD_ISA cannot be honoured (an unknown name, or a path this CPU does not run): checked
// once at start-up, so that a bad setting is refused rather than silently replaced.
Status CheckIsaOverride();
// Whether this CPU can run `isa`.
bool IsaSupported(Isa isa);
const char* IsaName(Isa isa);
// The Isa IsaName calls `name`, if any.
std::optional<Isa> IsaFromName(std::string_view name);

}  // namespace evald::kernels
