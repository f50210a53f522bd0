// The grading settings (v1::GradingSettings in eval.proto): one message for `evald eval`'s and
// `evald run`'s flags, a daemon run's spec, a cluster worker's shard and the report. Every entry
// point normalises them here and nowhere else; the command line's spelling of them is the table
// below, which the CLI registers for every command that grades.
//
// Adding a setting takes three edits: its field in GradingSettings (evald/proto/eval.proto), its
// flag and default in this file's .cc (GradingFlags, NormalizeGradingSettings), and the code that
// acts on it (the grading session or the harness). Runs, shards and reports carry it unchanged.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "evald/proto/eval.pb.h"
#include "evald/proto/records.pb.h"
#include "harness/cross_check.h"
#include "harness/simulator.h"

namespace evald {

// Fills the defaults (simulator iverilog; the default cross-checks when none are stated) and
// checks every value against its range: what a request or a flag may ask for.
Status NormalizeGradingSettings(v1::GradingSettings* settings);

// Values a daemon run leaves at their zero value take the daemon's (evald serve's flags).
void ApplyGradingDefaults(const v1::GradingSettings& defaults, v1::GradingSettings* settings);

// RunSpec's legacy spellings (simulator, exact_mismatch_counts, cross_checks) moved into
// spec.grading, where grading does not state them already.
void MoveLegacyGradingFields(v1::RunSpec* spec);

// One command-line flag of the settings.
struct GradingFlag {
  std::string name;  // "--simulator"
  std::string help;
  bool is_switch = false;  // takes no value
  // Applies the flag's value ("true" for a switch) to the settings.
  std::function<Status(const std::string& value, v1::GradingSettings* settings)> apply;
};
const std::vector<GradingFlag>& GradingFlags();

// What the grading session runs with.
struct SimulatorChoice {
  SimulatorKind primary = SimulatorKind::kIcarus;
  // auto: each problem graded with the primary (Icarus) where its reference passes there, else
  // with the other where it passes there.
  bool automatic = false;
};
StatusOr<SimulatorChoice> SimulatorChoiceFromProto(const v1::GradingSettings& settings);
std::optional<uint32_t> FixedSimulateTimeout(const v1::GradingSettings& settings);

CrossCheckOptions CrossCheckOptionsFromProto(const v1::CrossCheckSettings& settings);
v1::CrossCheckSettings CrossCheckOptionsToProto(const CrossCheckOptions& options);

// The default cross-checks: formal on the designs that pass simulation (what strict pass@k
// needs), no synthesis, optional (skipped where Yosys cannot run).
v1::CrossCheckSettings DefaultCrossCheckSettings();

}  // namespace evald
