// expect: I
// simulators: iverilog verilator
// Two readings of one text: Verilator drops a byte of the byte order mark where it stands in
// code, so '/', the byte and '*' open a comment for Verilator alone, and what follows is comment
// to Verilator and code to Icarus (and to a check that keeps the byte), the other way round
// after the second comment's end.
module TopModule (
  input a,
  input b,
  output out
);
  assign out = a & b;
  /ï* / initial #1 \$finish ; // */ initial #1 \$finish ;
endmodule
