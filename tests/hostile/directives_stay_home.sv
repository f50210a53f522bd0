// expect: .
// simulators: iverilog verilator
// A right design whose directives would change a testbench compiled after it if they carried.
`timescale 1s/1s
`default_nettype none
module TopModule (
  input wire a,
  input wire b,
  output wire out
);
  assign out = a & b;
endmodule
