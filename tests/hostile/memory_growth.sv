// expect: L T
// Grows a queue without end inside one time step (real completions have grown vvp to 8.7 GB).
module TopModule (
  input a,
  input b,
  output out
);
  assign out = a & b;
  initial begin : grow
    int q[$];
    forever q.push_back(1);
  end
endmodule
