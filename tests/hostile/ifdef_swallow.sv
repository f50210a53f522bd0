// expect: I
// An unclosed ifdef would swallow the testbench compiled after the design.
module TopModule (
  input a,
  input b,
  output out
);
  assign out = a & b;
endmodule
`ifdef EVALD_NEVER_DEFINED
