// expect: L T R C
module TopModule (
  input a,
  input b,
  output out
);
  reg [32'h3fffffff:0] huge;
  initial huge = ~0;
  assign out = huge[5];
endmodule
