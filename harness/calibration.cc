#include "harness/calibration.h"

#include <algorithm>
#include <cmath>

#include "harness/failure_category.h"
#include "harness/grader.h"
#include "harness/testbench_hardening.h"

namespace evald {

namespace {

// The margin over the reference's CPU time (bench/hang_limit_margin.sh measures what it leaves).
constexpr double kLimitFactor = 20, kLimitSlackMs = 500, kLimitFloorMs = 1000;

}  // namespace

Calibration CalibrateProblem(SandboxWorker& worker, SimulatorKind simulator,
                             const SimulatorLimits& limits, const Problem& problem,
                             DesignRun* run_out) {
  Calibration cal;
  const std::string design = ReferenceDesign(problem);
  GradedRun graded = RunAndClassify(worker, simulator, limits, problem, design, nullptr);
  const Verdict& v = graded.verdict;
  if (run_out) *run_out = std::move(graded.run);
  cal.compile_seconds = v.compile_seconds;
  cal.simulate_seconds = v.simulate_seconds;
  cal.simulate_cpu_seconds = v.simulate_cpu_seconds;
  cal.samples_checked = v.samples_checked;
  cal.testbench_timeout = v.testbench_timeout;
  cal.gradable = v.passed;
  cal.outcome = v.passed                                 ? CalibrationOutcome::kGradable
                : v.category == category::kInternalError ? CalibrationOutcome::kFault
                                                         : CalibrationOutcome::kUngradable;
  if (cal.outcome == CalibrationOutcome::kFault) {
    cal.note = "calibration could not run: " + v.detail;
  } else if (!v.passed) {
    cal.note = "the reference fails against its own testbench: " + v.detail;
  } else if (v.testbench_timeout) {
    cal.note = "the testbench prints TIMEOUT for the reference too; graded on its result line";
  }
  return cal;
}

SimulatorLimits LimitsForProblem(const SimulatorLimits& base, const Calibration& calibration,
                                 std::optional<uint32_t> fixed_simulate_timeout_ms) {
  SimulatorLimits l = base;
  if (fixed_simulate_timeout_ms) {
    l.simulate_timeout_ms = *fixed_simulate_timeout_ms;
  } else if (calibration.gradable) {
    // 20x the reference's CPU time + 0.5 s, at least 1 s, in steps of 100 ms: CPU time hardly
    // moves with the machine's load, so neither does the limit (nor the verdict cache key built
    // from it); the sandbox holds it to the millisecond (StepSpec.cpu_limit_ms).
    double derived_ms = calibration.simulate_cpu_seconds * 1000.0 * kLimitFactor + kLimitSlackMs;
    derived_ms = std::ceil(derived_ms / 100.0) * 100.0;
    l.simulate_timeout_ms = static_cast<uint32_t>(
        std::clamp(derived_ms, kLimitFloorMs,
                   std::max(kLimitFloorMs, static_cast<double>(base.simulate_timeout_ms))));
  }
  // Where the reference itself runs into the testbench's TIMEOUT, a wrong design stops at its
  // first mismatch too: pass/fail is the same, and the benchmark's letter of the full run is
  // known without it (ClassifySimulation: 'T').
  return l;
}

}  // namespace evald
