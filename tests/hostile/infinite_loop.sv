// expect: T
// Never leaves time step 0.
module TopModule (
  input a,
  input b,
  output out
);
  assign out = a & b;
  integer i;
  initial begin i = 0; while (1) i = i + 1; end
endmodule
