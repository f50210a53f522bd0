module RefModule (
  input clk,
  input reset,
  output logic [4:0] q
);

  always @(posedge clk)
    if (reset) q <= 5'd1;
    else q <= {q[0], q[4], q[3] ^ q[0], q[2], q[1]};

endmodule
