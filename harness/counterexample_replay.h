// Every counterexample the formal check finds is replayed before it counts: its input sequence
// becomes a directed testbench that drives the reference and the design side by side in Icarus,
// in the sandbox, and compares their outputs with the verilog-eval testbenches' own rule (a bit
// the reference leaves x matches anything; any other difference, x in the design included, is a
// mismatch). Only a difference the simulation shows makes `counterexample`.
//
// The replay is built like the grader's testbench: every name carries the run's nonce, the
// reference and the design are driven through their isolation wrappers (design_isolation.h),
// and the verdict comes from lines on standard error tagged with a secret the replay reads from
// its command line; the design text is the one that was compiled for grading, after its
// integrity checks (no $finish, no scope tricks, no file I/O).
#pragma once

#include <string>
#include <vector>

#include "datasets/dataset.h"
#include "harness/formal_check.h"
#include "harness/simulator.h"
#include "sandbox/sandbox_worker.h"

namespace evald {

struct ReplayResult {
  bool ran = false;  // the replay compiled and ended with its tagged line
  int differing_steps = 0;
  std::string first_difference;  // "step 3 (cycle 3): out reference=0101 design=0111"
  std::string problem;           // why it did not run (compile error, limits, sandbox)
  bool fault = false;            // a sandbox fault rather than an answer about the design
};

// The directed testbench for `trace` (mode "cycle" or "clk2fflogic"), instantiating the
// wrappers `evald_ref_<nonce>` and `evald_dut_<nonce>`, or InvalidArgument when the trace names a
// signal that is no plain identifier (it came from Yosys's output).
StatusOr<std::string> BuildReplayBench(const std::vector<TraceStep>& trace, const std::string& mode,
                                       const std::string& nonce);

// Compiles and runs the replay of `trace` for the reference and `design` with Icarus.
ReplayResult ReplayCounterexample(SandboxWorker& worker, const Problem& problem,
                                  const std::string& design, const FormalRun& formal,
                                  const SimulatorLimits& limits);

}  // namespace evald
