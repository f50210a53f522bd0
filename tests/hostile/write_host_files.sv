// expect: I
// Tries to write files on the host.
module TopModule (
  input a,
  input b,
  output out
);
  assign out = 1'b0;
  integer f;
  initial begin
    f = $fopen("@MARKER@", "w"); if (f) $fdisplay(f, "pwned");
    f = $fopen("../../../../../@MARKER@.2", "w"); if (f) $fdisplay(f, "pwned");
    f = $fopen("@SOURCE@/PWNED", "w"); if (f) $fdisplay(f, "pwned");
  end
endmodule
