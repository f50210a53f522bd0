// expect: I
module TopModule (
  input a,
  input b,
  output out
);
  reg [7:0] m [0:3];
  initial $readmemh("/etc/hostname", m);
  assign out = m[0][0];
endmodule
