// expect: R C
// simulators: iverilog verilator
// Overdrives its input ports with supply strength and pulls: the stronger driver would win on
// a net shared with the testbench.
module TopModule (
  input a,
  input b,
  output out
);
  assign (supply0, supply1) a = 1'b0;
  pulldown (b);
  assign (supply0, supply1) b = 1'b0;
  assign out = a & b;
endmodule
