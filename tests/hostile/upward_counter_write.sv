// expect: I
// Same, by an upward reference without the top's name.
module TopModule (
  input a,
  input b,
  output out
);
  assign out = 1'b0;
  always @(a, b) stats1.errors = 0;
endmodule
