// The content address of a verdict: a hash of everything that decides it - the simulator and
// its version, the command lines and limits it runs under, the testbench, the reference and the
// extracted code (and evald's grading rules version). Equal keys give equal verdicts, so a
// stored verdict can stand in for a simulation anywhere.
#pragma once

#include <string>

#include "datasets/dataset.h"
#include "harness/simulator.h"

namespace evald {

// Bump when grading rules change in a way that changes verdicts of unchanged inputs.
// 4: preprocessing under its own 512 MiB address space (a self-expanding macro is L, not T or C).
// 5: Icarus's ivlpp and ivl run without the driver, each under the step's limits itself (a
//    compiler ended by a limit's signal is read as that limit, not from its log).
// 6: the CPU-time limit is kept on the process's CPU clock (StepResult.CPU_LIMIT), never early
//    under load; a SIGPROF a design raises itself is a signal like any other, not the limit.
inline constexpr int kGradingRulesVersion = 6;

// `limits` are the run's base limits, not the per-problem limits derived from calibration
// timings (those vary a little from run to run and would make equal work miss the cache).
std::string VerdictKey(SimulatorKind simulator, const std::string& simulator_version,
                       const SimulatorLimits& limits, const Problem& problem,
                       const std::string& code);

// The address of a problem's calibration (its reference run).
std::string CalibrationKey(SimulatorKind simulator, const std::string& simulator_version,
                           const SimulatorLimits& limits, const Problem& problem);

}  // namespace evald
