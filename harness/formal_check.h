// A second opinion on a design beside its simulation: are its outputs those of the reference
// for every input sequence, not only the testbench's? Yosys builds a miter of the reference and
// the design over the problem's ports and its SAT solver proves it, bounds it, or finds an input
// sequence on which they differ - in the sandbox, like every other tool run.
//
// The state the testbench starts them in is the simulator's: every register undefined (x) unless
// it has an initial value, both designs driven with the same defined inputs from the first clock.
// Yosys models x (-enable_undef) and the miter ignores output bits the reference leaves x, which
// is the testbench's own rule (`ref === (ref ^ dut ^ ref)`): before a reset the reference's
// outputs are x and nothing is compared, so no knowledge of the problem's reset is needed.
//
// Two models of time. "cycle": every flip-flop of both designs is clocked by the rising edge of
// the port `clk` and `clk` feeds nothing else; one SAT step is one clock cycle. Anything else
// (falling edges, both edges, asynchronous resets, latches, clk used as data) is modelled by
// clk2fflogic, one step per clock phase, `clk` toggling every step as the testbench's does.
//
// What this never does: call a difference real. A counterexample found here is a candidate; it
// counts only once counterexample_replay.h shows it in simulation.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "datasets/dataset.h"
#include "sandbox/sandbox_protocol.pb.h"

namespace evald {

struct FormalOptions {
  // Clock cycles checked from the start (K). verilog-eval's sequential testbenches apply their
  // reset within their first 1-5 cycles and drive directed sequences of 10-20 cycles before
  // random stimulus; 24 cycles covers the reset and a full directed sequence after it, and the
  // induction that runs alongside closes most proofs well before (docs/verdicts.md).
  int bound_cycles = 24;
  // CPU seconds for one check (the solver's own timeout and the step's CPU limit). A
  // check that runs out is `unknown`, never a pass. Measured on verilog-eval references and
  // mutants (378 distinct passing designs): 340 concluded within 2 s and 333 within 1 s, and
  // those that did not (wide state such as Prob124 rule110 and Prob144 conwaylife, latch-based
  // FSMs under the clock-phase model) mostly did not in 10 s either. 1 s keeps the default
  // evaluation under 2x its simulation-only time here (bench/cross_check_cost.sh).
  uint32_t cpu_seconds = 1;
  uint64_t address_space = 4ull << 30;
};

enum class FormalOutcome {
  kNotRun,          // no formal check was asked for or possible (e.g. the design did not compile)
  kProven,          // equivalent for every input sequence (induction closed, or combinational)
  kBounded,         // no difference within `bound` cycles; induction did not close
  kCounterexample,  // a difference, confirmed by simulation (see counterexample_replay.h)
  kUnknown,         // a tool limit, timeout, unsupported construct, or an unconfirmed candidate
};
std::string_view FormalOutcomeName(FormalOutcome outcome);

// One step of a candidate counterexample: each signal's value as Yosys printed it (MSB first,
// 0/1/x), by port name; inputs, and the reference's and the design's outputs.
struct TraceStep {
  std::vector<std::pair<std::string, std::string>> inputs;
  std::vector<std::pair<std::string, std::string>> gold, gate;
};

struct FormalRun {
  FormalOutcome outcome = FormalOutcome::kUnknown;
  std::string mode;    // "cycle" | "clk2fflogic"
  int bound = 0;       // cycles: proven (induction length), bounded (K), counterexample (length)
  std::string reason;  // unknown: why
  std::vector<TraceStep> trace;  // kCounterexample candidates only
  bool cacheable = true;         // false: the wall-clock backstop or a sandbox fault
  bool out_of_budget = false;    // unknown because the CPU-time budget ran out
  double seconds = 0;
};

// The names the job uses: the reference module is renamed with the nonce, the miter too, so that
// nothing a design declares can collide with them.
struct FormalNames {
  std::string reference_module, miter, reference_file, design_file;
};
FormalNames FormalFileNames(const std::string& nonce);

// The text as Yosys reads it: without attributes, which the simulators ignore and Yosys honours
// (StripAttributes). And Yosys 0.23 stops at an `always_comb` that infers a latch (an
// incomplete case), where simulators hold the value; `always @*` has the same synthesis
// meaning and Yosys infers the latch the simulation shows (six verilog-eval references need it).
std::string ForYosys(const std::string& text);

// The limits every Yosys step of a cross-check runs under beside its CPU time, wall clock and
// address space: 256 KiB of output, 64 MiB files, 16 processes, 256 open files.
// The CPU-time limit ended Yosys: the step itself (its cpu_limit_ms or RLIMIT_CPU), or the
// first Yosys under the shell (which then exits 128 + SIGXCPU).
bool YosysOutOfCpu(const sandbox::StepResult& step);
// The line of Yosys's output that says why it stopped ("yosys produced no result" if none).
std::string YosysError(const std::string& output);

void SetYosysStepLimits(uint32_t cpu_seconds, uint32_t timeout_ms, uint64_t address_space,
                        sandbox::StepSpec* step);

// True when `reference` declares a port `clk` (the testbench's clock).
bool HasClockPort(const std::string& reference);

// The sandbox job: Yosys tries the cycle model (its script stops at once where the design does
// not fit it), then the clock-phase model.
// `design` is the text that was compiled (the preprocessed design).
sandbox::JobRequest BuildFormalJob(const Problem& problem, const std::string& design,
                                   const std::string& nonce, const FormalOptions& options);

// Reads the job's answer. Only files Yosys wrote with `tee -o` for its SAT command are read for
// the outcome, never the log a design can print into at elaboration.
FormalRun ParseFormalResponse(const sandbox::JobResponse& response, const FormalOptions& options);

// The table `sat -show-inputs -show-outputs` prints, read into steps (1-based, in order).
// Linear in the text; rows that do not parse are skipped.
std::vector<TraceStep> ParseSatTable(std::string_view text);

}  // namespace evald
