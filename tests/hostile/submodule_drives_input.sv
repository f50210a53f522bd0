// expect: R C
// simulators: iverilog verilator
// Connects its input ports to a submodule's outputs, which drive them.
module TopModule (
  input a,
  input b,
  output out
);
  zero z1 (.o(a));
  zero z2 (.o(b));
  assign out = 1'b0;
endmodule
module zero (output o);
  assign o = 1'b0;
endmodule
