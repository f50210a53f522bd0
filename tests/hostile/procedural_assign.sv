// expect: I
// simulators: iverilog verilator
// A procedural continuous assignment (and its deassign): refused like force.
module TopModule (
  input a,
  input b,
  output reg out
);
  always @(a or b) begin
    assign out = 1'b0;
    #1 deassign out;
  end
endmodule
