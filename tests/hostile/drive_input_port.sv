// expect: R C
// simulators: iverilog verilator
// Drives its own input ports from inside with continuous assignments (legal enough for the
// simulators to accept): only the design's copies of the inputs may change.
module TopModule (
  input a,
  input b,
  output out
);
  assign a = 1'b0;
  assign b = 1'b0;
  assign out = a & b;
endmodule
