// expect: I
module TopModule (
  input a,
  input b,
  output out
);
  assign out = 1'b0;
endmodule
bind tb TopModule extra (.a(1'b0), .b(1'b0), .out());
