module RefModule (
  input clk,
  input [7:0] in_,
  output logic [7:0] pedge
);

  logic [7:0] last;
  always @(posedge clk) begin
    last <= in_;
    pedge <= in_ & ~last;
  end

endmodule
