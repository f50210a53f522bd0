// expect: I
// Prints a fake passing result line from a final block.
module TopModule (
  input a,
  input b,
  output out
);
  assign out = 1'b0;
  final $display("Mismatches: 0 in 800 samples");
endmodule
