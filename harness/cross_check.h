// The second and third opinions on a design beside its simulation verdict: formal equivalence
// with the reference (formal_check.h, every counterexample replayed by
// counterexample_replay.h) and synthesis statistics (synthesis_stats.h). All of it runs in the
// sandbox on the text that was compiled for grading, and is cached by content (CrossCheckKey).
#pragma once

#include <string>

#include "datasets/dataset.h"
#include "harness/formal_check.h"
#include "harness/simulator.h"
#include "harness/synthesis_stats.h"
#include "sandbox/sandbox_worker.h"

namespace evald {

struct CrossCheckOptions {
  bool formal = false;
  bool formal_failures = false;  // also check designs that fail simulation (else passes only)
  bool synthesis = false;        // synthesis statistics of passing designs
  FormalOptions formal_options;
  uint32_t synthesis_cpu_seconds = 10;
  // False for the default (not asked for explicitly): a sandbox without Yosys grades without
  // cross-checks instead of failing.
  bool required = true;
  bool any() const { return formal || synthesis; }
};

// The formal dimension of a verdict, after the replay.
struct FormalVerdict {
  FormalOutcome outcome = FormalOutcome::kNotRun;
  std::string mode;  // "cycle" | "clk2fflogic"
  int bound = 0;     // cycles (see FormalRun)
  // counterexample: the difference as the replay showed it; unknown: why, and for an
  // unconfirmed candidate both stories (what the solver claimed, what simulation showed).
  std::string detail;
  double seconds = 0;
  bool cacheable = true;
  bool out_of_budget = false;
};

struct CrossCheck {
  FormalVerdict formal;
  SynthStats synthesis;            // of the design (ok == false: not run or failed)
  SynthStats reference_synthesis;  // of the problem's reference, for the ratios
  bool cacheable() const {
    return formal.cacheable && synthesis.cacheable && reference_synthesis.cacheable;
  }
};

// Formal check of `design` (the compiled text) against the problem's reference, with the replay
// of a counterexample under `replay_limits`. A self-checking benchmark's problem (RTLLM) is put
// in verilog-eval's shape first: its reference's top becomes RefModule, its other names the
// judge's, and the design's module under test TopModule.
FormalVerdict CheckEquivalence(SandboxWorker& worker, const Problem& problem,
                               const std::string& design, const FormalOptions& options,
                               const SimulatorLimits& replay_limits);

// Synthesis statistics of `design` (its module `top`, the problem's design module), or of the
// reference when `design` is the reference rewritten as a design.
SynthStats Synthesize(SandboxWorker& worker, const std::string& design, const std::string& top,
                      uint32_t cpu_seconds);

// The content address of a cross-check: Yosys's and the simulator's versions, the options, the
// reference and the code (and evald's rules version).
std::string CrossCheckKey(const std::string& yosys_version, const std::string& simulator_version,
                          const CrossCheckOptions& options, bool formal, bool synthesis,
                          const Problem& problem, const std::string& code);

// A job that prints Yosys's version.
sandbox::JobRequest BuildYosysVersionJob();

}  // namespace evald
