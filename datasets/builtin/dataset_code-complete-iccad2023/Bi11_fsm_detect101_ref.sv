module RefModule (
  input clk,
  input reset,
  input x,
  output logic z
);

  typedef enum logic [1:0] {S0, S1, S10, S101} state_t;
  state_t state;
  always @(posedge clk)
    if (reset) state <= S0;
    else case (state)
      S0:   state <= x ? S1 : S0;
      S1:   state <= x ? S1 : S10;
      S10:  state <= x ? S101 : S0;
      S101: state <= x ? S1 : S10;
    endcase
  assign z = (state == S101);

endmodule
