// The grading settings' flags (evald/runs/grading_settings.h's table), registered the same way
// on every command that grades: `eval`, `dataset check|audit`, `run`, `serve` (the defaults of
// runs that state none) and nothing else; `worker` takes its settings from the shard it grades.
#pragma once

#include <CLI/CLI.hpp>

#include <map>
#include <string>

#include "base/status.h"
#include "evald/proto/eval.pb.h"

namespace evald {

// The values given on the command line, by flag name, until the command runs.
struct GradingFlagValues {
  std::map<std::string, std::string> given;
};

void AddGradingFlags(CLI::App* cmd, GradingFlagValues* values);
// The settings the flags state, normalised: what was not given takes its default.
StatusOr<v1::GradingSettings> GradingSettingsOf(const GradingFlagValues& values);

}  // namespace evald
