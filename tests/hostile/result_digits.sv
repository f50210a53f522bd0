// expect: . I
// simulators: iverilog verilator
// A right AND gate that prints "Mismatches: " and 200,000 digits, then as many blanks: the
// grader's scan of the output must stay linear (a backtracking regex overflowed the stack).
module TopModule (
  input a,
  input b,
  output out
);
  assign out = a & b;
  integer i;
  initial begin
    $write("Mismatches: ");
    for (i = 0; i < 200000; i = i + 1) $write("7");
    $write("\n");
    $write("Mismatches: 0");
    for (i = 0; i < 200000; i = i + 1) $write(" ");
    $write("\n");
  end
endmodule
