// expect: I
// Prints a fake result, then aborts before the testbench can print its own.
module TopModule (
  input a,
  input b,
  output out
);
  assign out = 1'b0;
  initial begin $display("Mismatches: 0 in 800 samples"); $fatal(1, "bye"); end
endmodule
