// expect: I
// simulators: verilator
// ran-under-verilator: RAN
import "DPI-C" function int system(input string cmd);
module TopModule (
  input a,
  input b,
  output out
);
  assign out = 1'b0;
  initial begin int r; r = system("touch @MARKER@.dpi; echo DPI-RAN"); end
endmodule
