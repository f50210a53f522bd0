// A problem's design category, for per-category accuracy in reports: "fsm", "sequential",
// "arithmetic" or "combinational". Assigned by fixed rules from the problem's name and its
// reference design (so every dataset in the benchmark's layout gets one, the built-in set too);
// docs/statistics.md lists the rules and the resulting split of verilog-eval's 156 problems.
//   1. fsm:           the name says fsm or lemmings, or the reference is clocked and has a
//                     `case (state)` (or cs / current_state / present_state)
//   2. sequential:    the reference is clocked (posedge / negedge)
//   3. arithmetic:    `+`, `-` or `*` outside bit selects, for-loop headers and `@(*)`
//   4. combinational: everything else
#pragma once

#include <string_view>

#include "datasets/dataset.h"

namespace evald {

std::string_view ProblemCategory(const Problem& problem);

}  // namespace evald
