// expect: I
// simulators: iverilog verilator
// Switches the testbench's $monitor off and changes how it prints time.
module TopModule (
  input a,
  input b,
  output out
);
  assign out = 1'b0;
  initial begin
    $monitoroff;
    $timeformat(-9, 0, "", 0);
  end
endmodule
