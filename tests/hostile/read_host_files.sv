// expect: I
// Tries to read host files and print them into the log.
module TopModule (
  input a,
  input b,
  output out
);
  assign out = 1'b0;
  integer f, c;
  reg [8*200:1] line;
  initial begin
    f = $fopen("@SECRET@", "r");
    if (f) begin c = $fgets(line, f); $display("LEAK %0s", line); end
    f = $fopen("/etc/passwd", "r");
    if (f) begin c = $fgets(line, f); $display("LEAK %0s", line); end
  end
endmodule
