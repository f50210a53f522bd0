// expect: I
// A configuration that would make the testbench's reference instance use the design's module.
config cfg;
  design tb;
  instance tb.good1 use TopModule;
endconfig
module TopModule (
  input a,
  input b,
  output out
);
  assign out = 1'b0;
endmodule
