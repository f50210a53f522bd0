// expect: I
// simulators: iverilog verilator
// Widens an input port: the interface differs from the reference's.
module TopModule (
  input [7:0] a,
  input b,
  output out
);
  assign out = a[0] & b;
endmodule
