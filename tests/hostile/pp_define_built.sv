// expect: I
// simulators: iverilog verilator
// Builds a `define with the preprocessor (a backtick passed through a macro argument, $finish
// pasted from pieces): the preprocessed text holds "`define FIN $finish", which compiling would
// expand again after the check.
`define E(x) x
`define CAT(a, b) a``b
`E(`)define FIN `CAT($, finish)
module TopModule (
  input a,
  input b,
  output out
);
  assign out = 1'b0;
  initial #1 `E(`)FIN;
endmodule
