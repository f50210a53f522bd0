// expect: I
// simulators: iverilog verilator
// A DPI import whose string literal comes from a macro, and $system spelled by pasting.
`define KIND "DPI-C"
`define SYS $sys``tem
module TopModule (
  input a,
  input b,
  output out
);
  import `KIND function int getpid();
  assign out = ~(a & b);
  initial `SYS("touch @MARKER@.dpi");
endmodule
