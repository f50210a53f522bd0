// expect: T C L
// simulators: iverilog verilator
// A macro that expands to itself: the preprocessor spins until its CPU-time limit.
`define A `A
module TopModule (
  input a,
  input b,
  output out
);
  assign out = `A;
endmodule
