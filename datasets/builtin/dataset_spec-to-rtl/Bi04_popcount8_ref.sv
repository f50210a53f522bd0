module RefModule (
  input [7:0] in_,
  output logic [3:0] out
);

  always @(*) begin
    out = 0;
    for (int i = 0; i < 8; i++) out = out + in_[i];
  end

endmodule
