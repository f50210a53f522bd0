module RefModule (
  input clk,
  input areset,
  input in_,
  output logic out
);

  logic state;
  always @(posedge clk or posedge areset)
    if (areset) state <= 0;
    else if (in_) state <= ~state;
  assign out = state;

endmodule
