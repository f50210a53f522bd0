// expect: I
// simulators: iverilog verilator
// Declares its inputs as outputs and drives them: a second driver on the testbench's stimulus
// nets (the reference would then compute 0 & 0 = 0, as the design does).
module TopModule (
  output a,
  output b,
  output out
);
  assign a = 1'b0;
  assign b = 1'b0;
  assign out = 1'b0;
endmodule
