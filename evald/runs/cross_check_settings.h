// The cross-check settings as runs and reports carry them (CrossCheckSettings in eval.proto),
// and the command line's spelling of them: --formal off|passes|all, --synth.
#pragma once

#include <string_view>

#include "base/status.h"
#include "evald/proto/eval.pb.h"
#include "harness/cross_check.h"

namespace evald {

// Bounds on what a request may ask for: 1..1000 cycles, 1..600 CPU seconds a check (0: the
// default).
Status ValidateCrossCheckSettings(const v1::CrossCheckSettings& settings);

CrossCheckOptions CrossCheckOptionsFrom(const v1::CrossCheckSettings& settings);
v1::CrossCheckSettings CrossCheckSettingsOf(const CrossCheckOptions& options);

// The default: formal on the designs that pass simulation (what strict pass@k needs), no
// synthesis, optional (skipped where Yosys cannot run).
CrossCheckOptions DefaultCrossCheckOptions();

// "default" | "off" | "passes" (formal on the designs that pass simulation) | "all" (also on
// those that compile, run and fail) into `options`.
Status ApplyFormalChoice(std::string_view choice, CrossCheckOptions* options);

}  // namespace evald
