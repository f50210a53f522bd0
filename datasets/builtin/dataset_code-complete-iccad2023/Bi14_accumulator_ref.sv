module RefModule (
  input clk,
  input reset,
  input valid,
  input [7:0] in_,
  output logic [15:0] sum
);

  always @(posedge clk)
    if (reset) sum <= 0;
    else if (valid) sum <= sum + in_;

endmodule
