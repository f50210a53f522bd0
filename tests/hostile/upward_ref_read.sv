// expect: I
// Copies the reference instance's output.
module TopModule (
  input a,
  input b,
  output out
);
  assign out = good1.out;
endmodule
