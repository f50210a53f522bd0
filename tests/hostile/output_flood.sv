// expect: L
module TopModule (
  input a,
  input b,
  output out
);
  assign out = a & b;
  initial forever $display("flood flood flood flood flood flood flood flood flood flood");
endmodule
