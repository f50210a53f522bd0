// expect: I
// simulators: iverilog verilator
// ran-under-verilator: HOSTILE-RAN
// Under Verilator the $system call really runs: it must stay inside the sandbox.
module TopModule (
  input a,
  input b,
  output out
);
  assign out = 1'b0;
  initial begin $system("touch @MARKER@ /work/../@MARKER@.sys; echo HOSTILE-RAN"); end
endmodule
