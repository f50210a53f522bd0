// expect: I
// Correct logic, but ends the simulation before the testbench has checked anything.
module TopModule (
  input a,
  input b,
  output out
);
  assign out = a & b;
  initial $finish;
endmodule
