// expect: I
`include "/etc/passwd"
module TopModule (
  input a,
  input b,
  output out
);
  assign out = 1'b0;
endmodule
