// expect: I
// simulators: iverilog verilator
// Forces its own input ports to x: Icarus merges a port with the testbench's net, so the
// stimulus and the reference would see x and every comparison would be skipped.
module TopModule (
  input a,
  input b,
  output out
);
  initial begin
    force a = 1'bx;
    force b = 1'bx;
  end
  assign out = 1'bx;
endmodule
