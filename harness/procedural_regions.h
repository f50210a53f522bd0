// Which tokens of a design lie in procedural code: the statement of an initial, always*, or
// final block, and the bodies of tasks and functions. The integrity check needs it to tell a
// procedural `assign` (a procedural continuous assignment, refused) from a continuous one.
//
// The walk follows statement structure (begin/end, fork/join, case/endcase, if/else, loops,
// event and delay controls) in one forward pass; nesting deeper than kMaxStatementNesting is
// reported instead of followed, so a hostile design cannot exhaust the stack.
#pragma once

#include <vector>

#include "harness/verilog_lexer.h"

namespace evald {

inline constexpr int kMaxStatementNesting = 1000;

struct ProceduralRegions {
  std::vector<bool> procedural;  // one entry per token
  bool too_deep = false;
  int too_deep_line = 0;
};

ProceduralRegions FindProceduralRegions(const std::vector<VerilogToken>& tokens);

}  // namespace evald
