#include "kernels/ops/isa.h"

#include <cpuid.h>

#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace evald::kernels {

namespace {

// F16C (CPUID.1:ECX bit 29) and AVX-VNNI (CPUID.(7,1):EAX bit 4) read from CPUID itself: clang
// 14's __builtin_cpu_supports knows neither name. The OS's saving of the AVX state is what
// __builtin_cpu_supports("avx2") already checks.
bool CpuidBit(unsigned leaf, unsigned subleaf, int reg, int bit) {
  unsigned r[4] = {0, 0, 0, 0};
  if (!__get_cpuid_count(leaf, subleaf, &r[0], &r[1], &r[2], &r[3])) return false;
  return (r[reg] >> bit) & 1u;
}
constexpr int kEax = 0, kEcx = 2;

}  // namespace

bool IsaSupported(Isa isa) {
  __builtin_cpu_init();
  const bool avx2 =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && CpuidBit(1, 0, kEcx, 29);
  switch (isa) {
    case Isa::kScalar:
      return true;
    case Isa::kAvx2:
      return avx2;
    case Isa::kAvxVnni:
      return avx2 && CpuidBit(7, 1, kEax, 4);
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
