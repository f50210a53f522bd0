module RefModule (
  input [3:0] a,
  input [3:0] b,
  input cin,
  output logic [3:0] sum,
  output logic cout
);

  assign {cout, sum} = a + b + cin;

endmodule
