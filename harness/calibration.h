// Calibration: the reference run as the design under test, through exactly the path samples
// take. It yields what a passing sample must reproduce (the sample count M, whether the
// testbench's TIMEOUT fires anyway), how long the simulation takes (for per-problem time
// limits), and whether the problem can be graded at all with this simulator.
#pragma once

#include <optional>

#include "harness/grader.h"

namespace evald {

// run_out (optional) receives the raw run, so that samples identical to the reference can be
// graded from it without simulating again.
Calibration CalibrateProblem(SandboxWorker& worker, SimulatorKind simulator,
                             const SimulatorLimits& limits, const Problem& problem,
                             DesignRun* run_out = nullptr);

// Limits for grading samples of a calibrated problem: the simulation limit is derived from the
// reference's own CPU time (20x plus 0.5 s, at least 1 s, at most the base limit) unless the user
// fixed it. A correct design is never that much slower than the reference on these testbenches,
// while an infinite loop no longer costs the benchmark's full 30 s. A problem whose reference
// runs into the testbench's TIMEOUT is never stopped at its first mismatch.
SimulatorLimits LimitsForProblem(const SimulatorLimits& base, const Calibration& calibration,
                                 std::optional<uint32_t> fixed_simulate_timeout_ms);

}  // namespace evald
