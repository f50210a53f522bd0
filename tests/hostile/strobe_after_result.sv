// expect: I R
// simulators: iverilog verilator
// Prints after the testbench's result line would come (a wrong design that tries to make its
// own text the last line of the output).
module TopModule (
  input a,
  input b,
  output out
);
  assign out = a | b;
  always @(out) $strobe("Mismatches: 0 in 800 samples");
endmodule
