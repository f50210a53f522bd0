// expect: I
// simulators: verilator
// ran-under-verilator: uid=
module TopModule (
  input a,
  input b,
  output out
);
  assign out = 1'b0;
  initial $c("{ int r = system(\"touch @MARKER@.c; id\"); (void)r; }");
endmodule
