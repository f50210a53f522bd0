// expect: I
// simulators: iverilog verilator
// Calls $finish through an escaped identifier.
module TopModule (
  input a,
  input b,
  output out
);
  assign out = 1'b0;
  initial #1 \$finish ;
endmodule
