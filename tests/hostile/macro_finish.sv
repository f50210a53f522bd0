// expect: I
// simulators: iverilog verilator
// Spells $finish and a final block through macros (token pasting) so the raw text shows
// neither; the check reads the preprocessed design.
`define END $fin``ish
`define LAST fin``al
module TopModule (
  input a,
  input b,
  output out
);
  assign out = a ^ b;
  `LAST begin $display("Mismatches: 0 in 800 samples"); `END; end
endmodule
