// Per-run hardening of a self-checking testbench (RTLLM's: it instantiates the design alone,
// checks it against values of its own and prints "Your Design Passed" or failure lines), by the
// same means as for verilog-eval (testbench_hardening.h), so that what decides the verdict is
// out of the design's reach:
//  - Names: every name of the testbench gets the run's nonce (judge_renaming.h); the design's
//    module keeps its name, its instance becomes an isolation wrapper (design_isolation.h) with
//    the reference's ports, so nothing the design does to its ports reaches the stimulus.
//  - The verdict: every $display of the testbench that says the design passed (its text holds
//    "Passed") or failed (it holds "fail", "Fail", "Error" or "error") prints, tagged with the
//    run's secret, "PASS <text>" or "FAIL <text>" to standard error instead; the design prints
//    only to standard output and never sees the secret. Upstream's rule ("pass" anywhere in the
//    output) is computed beside it, for comparison only (RtllmUpstreamLetter).
//  - Directives: the testbench starts from `resetall under `default_nettype none.
// The reference is not compiled at all: the testbench never instantiates it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "datasets/dataset.h"
#include "harness/testbench_hardening.h"

namespace evald {

// Fails (Corruption) when the reference's interface cannot be read or isolated, the testbench
// declares other than one module, instantiates the design other than once, or prints no pass
// line.
StatusOr<HardenedBench> HardenSelfCheckingBench(const Problem& problem, const std::string& nonce);

// What the tagged lines of one simulation say.
struct PassLines {
  int pass = 0;            // tagged PASS lines
  int fail = 0;            // tagged FAIL lines
  int forged = 0;          // other lines carrying the tag or a pass line's text
  std::string first_fail;  // the first FAIL line's text
};
PassLines ScanPassLines(std::string_view out, std::string_view err, const std::string& tag,
                        const std::vector<std::string>& pass_texts);

// Upstream RTLLM's letter for the same run: '.' when the simulation's output holds "pass" or
// "Pass" (auto_run.py), 'S' when compiling failed (its "syntax" count), else 'R'.
char RtllmUpstreamLetter(bool compiled, std::string_view simulation_output);

}  // namespace evald
