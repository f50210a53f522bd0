#include "kernels/ops/isa.h"

#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace evald::kernels {

bool IsaSupported(Isa isa) {
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                    __builtin_cpu_supports("f16c");
  switch (isa) {
    case Isa::kScalar:
      return true;
    case Isa::kAvx2:
      return avx2;
    case Isa::kAvxVnni:
      return avx2 && __builtin_cpu_supports("avxvnni");
    case Isa::kAvx512Vnni:
      return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx512vnni");
  }
  return false;
}

Isa DetectIsa() {
  const char* force = std::getenv("EVALD_FORCE_SCALAR");
  if (force && std::strcmp(force, "1") == 0) return Isa::kScalar;
  for (Isa isa : {Isa::kAvx512Vnni, Isa::kAvxVnni, Isa::kAvx2})
    if (IsaSupported(isa)) return isa;
  return Isa::kScalar;
}

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvxVnni:
      return "avx-vnni";
    case Isa::kAvx512Vnni:
      return "avx512-vnni";
    default:
      return "scalar";
  }
}

}  // namespace evald::kernels
