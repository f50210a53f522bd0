// How a benchmark's testbench grades a design, per problem: the part of the one dataset
// interface that the harness reads (datasets say what their testbenches expect; the harness
// decides how to run them untouchable by the design). Defaults are verilog-eval's.
#pragma once

#include <map>
#include <string>

namespace evald {

// How the testbench says that a design passed.
enum class PassSignal {
  // verilog-eval (v1 and v2): the testbench instantiates the reference `RefModule` beside the
  // design and prints "Mismatches: N in M samples"; a pass is N = 0 over the reference's M.
  kMismatchCount,
  // A self-checking testbench (RTLLM): it instantiates only the design, compares it with values
  // of its own, and prints a line saying the design passed ("Your Design Passed") or lines
  // saying it failed. A pass is the pass line, as often as for the reference, and no failure
  // line.
  kPassLine,
};

struct GradingSetup {
  PassSignal pass_signal = PassSignal::kMismatchCount;
  // The module the testbench instantiates: what a design must define.
  std::string design_module = "TopModule";
  // The reference file's top module (renamed to design_module when the reference is graded
  // as a design).
  std::string reference_module = "RefModule";
  // Files the testbench reads by relative path (name -> content), placed beside the simulation.
  std::map<std::string, std::string> data_files;
  // The time unit of files without a `timescale (empty: each simulator's own default). Upstream
  // RTLLM compiles with `vcs -timescale=1ns/1ns`.
  std::string default_timescale;

  bool IsVerilogEval() const { return pass_signal == PassSignal::kMismatchCount; }
};

// A digest of everything here that differs from verilog-eval's defaults ("" for those), so that
// cache keys of verilog-eval problems stay what they were.
std::string GradingSetupSignature(const GradingSetup& setup);

}  // namespace evald
