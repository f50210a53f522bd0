module RefModule (
  input a,
  input b,
  output logic out
);

  assign out = a & b;

endmodule
