module RefModule (
  input clk,
  input reset,
  input en,
  output logic [3:0] q
);

  always @(posedge clk)
    if (reset) q <= 0;
    else if (en) q <= (q == 9) ? 0 : q + 1;

endmodule
