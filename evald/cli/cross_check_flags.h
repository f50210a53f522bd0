// The cross-check flags shared by `evald eval` and `evald run`: --formal off|passes|all,
// --synth, --formal-bound, --check-seconds.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "base/status.h"
#include "harness/cross_check.h"

namespace evald {

struct CrossCheckFlags {
  std::string formal = "default";  // passes, where Yosys runs
  bool synthesis = false;
  int bound_cycles = FormalOptions{}.bound_cycles;
  uint32_t cpu_seconds = FormalOptions{}.cpu_seconds;
};

void AddCrossCheckFlags(CLI::App* cmd, CrossCheckFlags* flags);
StatusOr<CrossCheckOptions> CrossCheckOptionsOf(const CrossCheckFlags& flags);

}  // namespace evald
