// A problem's testbench and reference as its grading setup (datasets/grading_setup.h) says to
// use them: the one place that chooses between verilog-eval's hardening (testbench_hardening.h)
// and a self-checking testbench's (self_checking_bench.h).
#pragma once

#include <string>

#include "base/status.h"
#include "datasets/dataset.h"
#include "harness/testbench_hardening.h"

namespace evald {

// The reference as a design of the problem: its top module renamed to the module the testbench
// instantiates (verilog-eval: RefModule -> TopModule).
std::string ReferenceDesign(const Problem& problem);

// The testbench of a run, hardened for this problem's way of grading.
StatusOr<HardenedBench> HardenFor(const Problem& problem, const std::string& nonce,
                                  bool stop_at_first_mismatch);

}  // namespace evald
