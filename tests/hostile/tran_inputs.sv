// expect: R C
// Joins its two input ports with a bidirectional switch and drives one of them: on shared nets
// the stimulus itself would be rewired.
module TopModule (
  input a,
  input b,
  output out
);
  tran t (a, b);
  assign (strong0, strong1) a = 1'b0;
  assign out = 1'b0;
endmodule
