// expect: R
// simulators: iverilog verilator
// Declares names of the testbench's at compilation-unit scope, hoping to capture the
// testbench's references to them: the testbench's names carry the run's nonce.
logic stats1;
logic tb_match = 1'b1;
logic clk;
typedef int stats;
module TopModule (
  input a,
  input b,
  output out
);
  assign out = a | b;
endmodule
