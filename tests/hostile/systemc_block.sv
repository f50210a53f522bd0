// expect: I
// simulators: verilator
`systemc_imp_header
#include <cstdlib>
static int evald_hostile = std::system("touch @MARKER@.sc");
`verilog
module TopModule (
  input a,
  input b,
  output out
);
  assign out = 1'b0;
endmodule
