module RefModule (
  input [7:0] in_,
  output logic [2:0] pos,
  output logic valid
);

  always @(*) begin
    pos = 0;
    valid = 0;
    for (int i = 7; i >= 0; i--) if (in_[i]) begin pos = i; valid = 1; end
  end

endmodule
