// expect: L C
// simulators: iverilog verilator
// A macro that expands to itself: Icarus's preprocessor grows until its address-space limit
// (L, on any machine: the limit is small enough to come long before the CPU-time limit or the
// machine's memory); Verilator's refuses the recursion (C).
`define A `A
module TopModule (
  input a,
  input b,
  output out
);
  assign out = `A;
endmodule
