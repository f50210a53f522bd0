module RefModule (
  input clk,
  input reset,
  input in_,
  output logic out
);

  logic [3:0] s;
  always @(posedge clk)
    if (reset) s <= 0;
    else s <= {s[2:0], in_};
  assign out = s[3];

endmodule
