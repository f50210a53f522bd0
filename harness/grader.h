// Grades one design against one problem: integrity check, hardened testbench, compile and
// simulate in the sandbox, and a verdict from the testbench's tagged result line.
//
// A sample passes when: its interface is the reference's; it compiles; the simulator exits
// normally with status 0; its standard error has exactly one tagged "Mismatches: N in M samples"
// line and neither stream an untagged one; N is 0; M equals what the reference reaches against
// the same testbench (a design that ends the simulation early checks fewer samples); and the
// testbench's TIMEOUT did not fire unless it fires for the reference too (a known testbench
// defect, see docs/verdicts.md).
#pragma once

#include <string>
#include <vector>

#include "datasets/dataset.h"
#include "harness/cross_check.h"
#include "harness/integrity_check.h"
#include "harness/problem_bench.h"
#include "harness/simulator.h"
#include "sandbox/sandbox_worker.h"

namespace evald {

// What calibrating a problem found: its reference passes (the problem can be graded), fails
// (every sample is X), or could not be run at all (a sandbox fault: nothing is known).
enum class CalibrationOutcome { kGradable, kUngradable, kFault };

// What the reference reaches against its own testbench (see calibration.h).
struct Calibration {
  CalibrationOutcome outcome = CalibrationOutcome::kFault;
  bool gradable = false;
  int samples_checked = -1;
  bool testbench_timeout = false;
  double simulate_seconds = 0;
  double simulate_cpu_seconds = 0;  // what the per-problem CPU-time limit is derived from
  double compile_seconds = 0;
  std::string note;
};

struct Verdict {
  char category = '!';
  bool passed = false;
  int mismatches = -1;
  int samples_checked = -1;
  bool mismatches_lower_bound = false;  // stopped at the first mismatch: "at least N"
  bool testbench_timeout = false;       // the tagged TIMEOUT line was printed
  char benchmark = '?';                 // sv-iv-analyze's letter for the same log
  std::string detail;
  double compile_seconds = 0;
  double simulate_seconds = 0;
  double simulate_cpu_seconds = 0;
  std::string log;  // compile + simulation output, tags removed, bounded
  // False when the verdict may depend on something other than the design: a sandbox fault, a
  // memory-limit kill (the cgroup is the worker's), the wall-clock backstop, state found left
  // behind. Such verdicts are reported but never cached.
  bool cacheable = true;
  // The wall-clock backstop ended a step: the machine's load, not the design (every wait in a
  // simulation is simulated time, and the CPU-time limit ends a design that spins).
  bool wall_clock_backstop = false;
  // The second and third opinions (formal, synthesis) when they were asked for; cached
  // separately from the simulation verdict (CrossCheckKey).
  bool cross_checked = false;
  CrossCheck cross;
};

// The raw outcome of compiling and simulating one design: what the sandbox returned.
struct DesignRun {
  Status status;            // not ok: the sandbox could not run the job
  bool oom_killed = false;  // the worker's cgroup recorded an OOM kill during the job
  SimulatorLimits limits;   // what the job ran under
  std::string nonce;        // names of scopes and files (the design may see it)
  std::string tag;          // the result-line tag, from a secret given at run time (it may not)
  bool stopped_at_first_mismatch = false;  // the testbench ends at its first mismatch
  Status bench_status;         // not ok: the testbench cannot be hardened (no result line)
  IntegrityFinding integrity;  // the design as written, then as compiled, then its interface
  // Why the design's interface could not be compared with the reference's (its port list could
  // not be read, or it defines no TopModule): such a design may fail but never pass.
  std::string interface_unverified;
  bool preprocessed = false;  // the preprocessor ran (its step is `preprocess`)
  bool preprocessed_oversized = false;
  sandbox::StepResult preprocess;  // the simulator's preprocessor over the design alone
  sandbox::JobResponse response;   // compile and simulate, when the checks let it run
  int ipc_objects_left = 0;        // System V IPC objects the jobs left behind
  // A self-checking testbench (self_checking_bench.h): the verdict is its tagged pass and
  // failure lines, and a line carrying one of `pass_texts` untagged is a forgery.
  bool pass_lines = false;
  std::vector<std::string> pass_texts;
  std::string compiled;  // the checked, preprocessed text that was compiled
};

// The text that is compiled: the simulator's preprocessor output with every line end made "\n"
// and its comments removed (StripComments), checked by CheckCompiledDesign.
std::string CompiledText(const std::string& preprocessed);

DesignRun RunDesign(SandboxWorker& worker, SimulatorKind simulator, const SimulatorLimits& limits,
                    const Problem& problem, const std::string& design);

// The verdict for a run. calibration == nullptr grades the reference itself (any M accepted,
// TIMEOUT recorded). The same run can be classified again against a calibration: a sample whose
// code is the reference's needs no second simulation.
Verdict ClassifyRun(const DesignRun& run, SimulatorKind simulator, const std::string& design,
                    const Calibration* calibration);

// RunDesign + ClassifyRun, run again where the wall-clock backstop ended a step (up to
// kWallClockAttempts in all). When every attempt ended so, the verdict is '!' (the machine could
// not grade it; never cached, simulated again next time), never a 'T' that load produced.
inline constexpr int kWallClockAttempts = 3;
struct GradedRun {
  DesignRun run;
  Verdict verdict;
  int wall_clock_retries = 0;  // attempts the backstop ended before this one (for the log)
};
GradedRun RunAndClassify(SandboxWorker& worker, SimulatorKind simulator,
                         const SimulatorLimits& limits, const Problem& problem,
                         const std::string& design, const Calibration* calibration);

// RunAndClassify's verdict.
Verdict GradeDesign(SandboxWorker& worker, SimulatorKind simulator, const SimulatorLimits& limits,
                    const Problem& problem, const std::string& design,
                    const Calibration* calibration);

// The design as it is compiled for grading: checked as written, preprocessed in the sandbox,
// comments removed, checked again. What formal checks and synthesis read, so that they see
// exactly what simulation compiled (no comment, so no pragma, is left for Yosys to honour).
StatusOr<std::string> CheckedDesignText(SandboxWorker& worker, SimulatorKind simulator,
                                        const SimulatorLimits& limits, const std::string& design);

}  // namespace evald
