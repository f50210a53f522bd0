// expect: I
// Reads a file through Icarus's VHDL textio tasks, which a deny-list of $f... names misses.
module TopModule (
  input a,
  input b,
  output out
);
  assign out = 1'b0;
  integer fd;
  reg [8*200:1] line;
  initial begin
    $ivlh_file_open(fd, "@SECRET@", 0);
    $ivlh_readline(fd, line);
    $display("LEAK %0s", line);
  end
endmodule
