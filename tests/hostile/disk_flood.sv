// expect: I L T
module TopModule (
  input a,
  input b,
  output out
);
  assign out = a & b;
  integer f;
  initial begin f = $fopen("flood.txt", "w"); forever $fdisplay(f, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"); end
endmodule
