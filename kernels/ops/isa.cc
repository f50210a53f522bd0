#include "kernels/ops/isa.h"

#include <cpuid.h>

#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>

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

constexpr Isa kAllIsas[] = {Isa::kScalar, Isa::kAvx2, Isa::kAvxVnni, Isa::kAvx512Vnni};

// The path the environment names, if it names one (EVALD_ISA, or EVALD_FORCE_SCALAR=1), and the
// name as given; an unknown name gives nullopt beside a non-empty name.
std::optional<Isa> IsaFromEnvironment(std::string* given) {
  const char* force = std::getenv("EVALD_FORCE_SCALAR");
  if (force && std::strcmp(force, "1") == 0) {
    *given = "scalar";
    return Isa::kScalar;
  }
  const char* name = std::getenv("EVALD_ISA");
  *given = name ? name : "";
  return IsaFromName(*given);
}

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
  std::string given;
  if (auto named = IsaFromEnvironment(&given); named && IsaSupported(*named)) return *named;
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

Status CheckIsaOverride() {
  std::string given;
  const std::optional<Isa> named = IsaFromEnvironment(&given);
  if (given.empty()) return Status::Ok();
  if (!named)
    return Status::InvalidArgument("EVALD_ISA=" + given +
                                   " names no kernel path (scalar, avx2, avx-vnni, avx512-vnni)");
  if (!IsaSupported(*named))
    return Status::InvalidArgument("EVALD_ISA=" + given + ": this CPU does not run that path");
  return Status::Ok();
}

std::optional<Isa> IsaFromName(std::string_view name) {
  for (Isa isa : kAllIsas)
    if (name == IsaName(isa)) return isa;
  return std::nullopt;
}

}  // namespace evald::kernels
