// Whether Yosys's model of a design is the design the simulator runs. Yosys reads a delay
// (`#5`, `assign #2`), a `wait`, an event control inside a statement, or a level-sensitive
// event list (`always @(a)`) as if it were not there: the block becomes combinational logic of
// everything it reads. The simulator runs each as written. A design built on them can simulate
// one way (and pass the testbench) while Yosys proves another design equivalent, so formal
// judges only designs made of constructs both read alike, an allow-list:
//   - an always block starts with `@*`, `@(*)`, a list of edges only (posedge/negedge), or a
//     list of plain names that holds every signal the block reads; always_comb, always_latch
//     and always_ff as SystemVerilog defines them;
//   - no variable assigned with `=` in one clocked block and read in another (a race the
//     simulator's order decides; Yosys reads a flip-flop);
//   - no delay anywhere (`#` only for parameter values: `module m #(`, `sub #(...) u`), no
//     event control but an always block's head, no wait, fork, disable, named events or
//     event triggers, no specify block, no drive strengths, no switch-level primitives, no
//     resolved net types (tri*, wand, wor, trireg).
// A design outside it gets the formal outcome `unknown` with the reason (it stays `unverified`,
// never strict); formal never makes a pass of it.
#pragma once

#include <string>
#include <string_view>

namespace evald {

struct FidelityFinding {
  bool faithful = true;
  std::string reason;  // the first construct outside the allow-list, with its line
};

// `compiled`: the design's compiled text (preprocessed, comments gone).
FidelityFinding CheckFormalFidelity(std::string_view compiled);

}  // namespace evald
