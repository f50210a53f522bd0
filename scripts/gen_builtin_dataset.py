#!/usr/bin/env python3
"""Generates evald's own small problem set (datasets/builtin) in verilog-eval v2 layout.

Written for evald, not copied from the benchmark: the problems, references, testbenches and
sample completions below are ours. The testbench follows the benchmark's shape (stimulus_gen,
tb, RefModule good1 vs TopModule top_module1, a `Mismatches: N in M samples` line) so the same
grading path serves both. Run it again after editing; its output is committed.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "datasets", "builtin")

# name: (description, inputs [(name, width)], outputs [(name, width)], clocked, reset, body,
#        wrong_body)
PROBLEMS = [
    ("Bi01_and_gate", "The module should implement a 2-input AND gate: out is a AND b.",
     [("a", 1), ("b", 1)], [("out", 1)], False, None,
     "  assign out = a & b;\n", "  assign out = a | b;\n"),
    ("Bi02_mux2_byte", "The module should implement an 8-bit wide 2-to-1 multiplexer: when sel is 0, out\nis a; when sel is 1, out is b.",
     [("sel", 1), ("a", 8), ("b", 8)], [("out", 8)], False, None,
     "  assign out = sel ? b : a;\n", "  assign out = sel ? a : b;\n"),
    ("Bi03_adder4", "The module should add the two 4-bit unsigned numbers a and b and the carry-in cin,\nproducing the 4-bit sum and the carry-out cout.",
     [("a", 4), ("b", 4), ("cin", 1)], [("sum", 4), ("cout", 1)], False, None,
     "  assign {cout, sum} = a + b + cin;\n", "  assign {cout, sum} = a + b;\n"),
    ("Bi04_popcount8", "The module should output the number of bits of the 8-bit input in that are 1.",
     [("in_", 8)], [("out", 4)], False, None,
     "  always @(*) begin\n    out = 0;\n    for (int i = 0; i < 8; i++) out = out + in_[i];\n  end\n",
     "  always @(*) begin\n    out = 0;\n    for (int i = 0; i < 7; i++) out = out + in_[i];\n  end\n"),
    ("Bi05_priority_low", "The module should output in pos the index of the lowest-numbered bit of the 8-bit\ninput in_ that is 1, and set valid. If no bit is 1, pos is 0 and valid is 0.",
     [("in_", 8)], [("pos", 3), ("valid", 1)], False, None,
     "  always @(*) begin\n    pos = 0;\n    valid = 0;\n    for (int i = 7; i >= 0; i--) if (in_[i]) begin pos = i; valid = 1; end\n  end\n",
     "  always @(*) begin\n    pos = 0;\n    valid = 0;\n    for (int i = 0; i < 8; i++) if (in_[i]) begin pos = i; valid = 1; end\n  end\n"),
    ("Bi06_decoder3to8", "The module should implement a 3-to-8 decoder with enable: when en is 1, bit sel of\nout is 1 and every other bit is 0; when en is 0, out is 0.",
     [("en", 1), ("sel", 3)], [("out", 8)], False, None,
     "  assign out = en ? (8'd1 << sel) : 8'd0;\n", "  assign out = 8'd1 << sel;\n"),
    ("Bi07_dff8_sync_reset", "The module should implement 8 D flip-flops, triggered by the positive edge of clk,\nwith an active-high synchronous reset that sets q to 0.",
     [("reset", 1), ("d", 8)], [("q", 8)], True, "sync",
     "  always @(posedge clk)\n    if (reset) q <= 0;\n    else q <= d;\n",
     "  always @(posedge clk or posedge reset)\n    if (reset) q <= 0;\n    else q <= d;\n"),
    ("Bi08_counter_mod10", "The module should implement a decade counter that counts 0 through 9 and wraps to 0,\nadvancing on the positive edge of clk only when en is 1. reset is active-high and\nsynchronous and sets the count q to 0.",
     [("reset", 1), ("en", 1)], [("q", 4)], True, "sync",
     "  always @(posedge clk)\n    if (reset) q <= 0;\n    else if (en) q <= (q == 9) ? 0 : q + 1;\n",
     "  always @(posedge clk)\n    if (reset) q <= 0;\n    else if (en) q <= (q == 10) ? 0 : q + 1;\n"),
    ("Bi09_shift4", "The module should implement a 4-stage shift register: on each positive edge of clk,\nin_ enters the first stage and each stage takes the previous one; out is the last\nstage. reset is active-high and synchronous and clears every stage.",
     [("reset", 1), ("in_", 1)], [("out", 1)], True, "sync",
     "  logic [3:0] s;\n  always @(posedge clk)\n    if (reset) s <= 0;\n    else s <= {s[2:0], in_};\n  assign out = s[3];\n",
     "  logic [2:0] s;\n  always @(posedge clk)\n    if (reset) s <= 0;\n    else s <= {s[1:0], in_};\n  assign out = s[2];\n"),
    ("Bi10_rise_detect", "For each bit of the 8-bit input in_, the module should set the corresponding bit of\npedge in the clock cycle after that bit changes from 0 to 1 (positive edge of clk).",
     [("in_", 8)], [("pedge", 8)], True, None,
     "  logic [7:0] last;\n  always @(posedge clk) begin\n    last <= in_;\n    pedge <= in_ & ~last;\n  end\n",
     "  logic [7:0] last;\n  always @(posedge clk) begin\n    last <= in_;\n    pedge <= in_ ^ last;\n  end\n"),
    ("Bi11_fsm_detect101", "The module should implement a Moore state machine that sets z to 1 for one cycle\nafter the input x has shown the sequence 1, 0, 1 on three consecutive positive edges\nof clk (overlapping sequences count). reset is active-high and synchronous and returns\nthe machine to its initial state, in which nothing has been seen.",
     [("reset", 1), ("x", 1)], [("z", 1)], True, "sync",
     "  typedef enum logic [1:0] {S0, S1, S10, S101} state_t;\n  state_t state;\n  always @(posedge clk)\n    if (reset) state <= S0;\n    else case (state)\n      S0:   state <= x ? S1 : S0;\n      S1:   state <= x ? S1 : S10;\n      S10:  state <= x ? S101 : S0;\n      S101: state <= x ? S1 : S10;\n    endcase\n  assign z = (state == S101);\n",
     "  typedef enum logic [1:0] {S0, S1, S10, S101} state_t;\n  state_t state;\n  always @(posedge clk)\n    if (reset) state <= S0;\n    else case (state)\n      S0:   state <= x ? S1 : S0;\n      S1:   state <= x ? S1 : S10;\n      S10:  state <= x ? S101 : S0;\n      S101: state <= x ? S0 : S10;\n    endcase\n  assign z = (state == S101);\n"),
    ("Bi12_fsm_toggle_async", "The module should implement a two-state Moore machine with states OFF (out = 0) and\nON (out = 1). On each positive edge of clk it changes state when in_ is 1 and keeps it\nwhen in_ is 0. areset is an active-high asynchronous reset to OFF.",
     [("areset", 1), ("in_", 1)], [("out", 1)], True, "async",
     "  logic state;\n  always @(posedge clk or posedge areset)\n    if (areset) state <= 0;\n    else if (in_) state <= ~state;\n  assign out = state;\n",
     "  logic state;\n  always @(posedge clk)\n    if (areset) state <= 0;\n    else if (in_) state <= ~state;\n  assign out = state;\n"),
    ("Bi13_lfsr5", "The module should implement a 5-bit Galois LFSR with taps at bit positions 5 and 3:\non each positive edge of clk, q becomes {q[0], q[4], q[3] ^ q[0], q[2], q[1]}. reset is\nactive-high and synchronous and sets q to 1.",
     [("reset", 1)], [("q", 5)], True, "sync",
     "  always @(posedge clk)\n    if (reset) q <= 5'd1;\n    else q <= {q[0], q[4], q[3] ^ q[0], q[2], q[1]};\n",
     "  always @(posedge clk)\n    if (reset) q <= 5'd1;\n    else q <= {q[0], q[4], q[3], q[2], q[1]};\n"),
    ("Bi14_accumulator", "The module should accumulate: on each positive edge of clk, when valid is 1, the 8-bit\nunsigned input in_ is added to the 16-bit sum. reset is active-high and synchronous and\nsets sum to 0.",
     [("reset", 1), ("valid", 1), ("in_", 8)], [("sum", 16)], True, "sync",
     "  always @(posedge clk)\n    if (reset) sum <= 0;\n    else if (valid) sum <= sum + in_;\n",
     "  always @(posedge clk)\n    if (reset) sum <= 0;\n    else sum <= sum + in_;\n"),
]


def decl(name, width, kind):
    return f"{kind} [{width - 1}:0] {name}" if width > 1 else f"{kind} {name}"


def ports(inputs, outputs, clocked, logic=True):
    lines = []
    if clocked:
        lines.append("  input clk")
    for n, w in inputs:
        lines.append("  " + decl(n, w, "input"))
    for n, w in outputs:
        lines.append("  " + decl(n, w, "output logic" if logic else "output"))
    return ",\n".join(lines)


def spec_ports(inputs, outputs, clocked):
    rows = []
    if clocked:
        rows.append(" - input  clk")
    for n, w in inputs:
        rows.append(f" - input  {n}" + (f" ({w} bits)" if w > 1 else ""))
    for n, w in outputs:
        rows.append(f" - output {n}" + (f" ({w} bits)" if w > 1 else ""))
    return "\n".join(rows)


def module(name, inputs, outputs, clocked, body):
    return f"module {name} (\n{ports(inputs, outputs, clocked)}\n);\n\n{body}\nendmodule\n"


def testbench(inputs, outputs, clocked, reset):
    all_in = [n for n, _ in inputs]
    cat_in = "{" + ", ".join(all_in) + "}"
    total_w = sum(w for _, w in inputs)
    stim_ports = ",\n".join(
        ["\tinput clk"] + [f"\toutput reg [{w - 1}:0] {n}" if w > 1 else f"\toutput reg {n}" for n, w in inputs]
        + ["\toutput reg[511:0] wavedrom_title", "\toutput reg wavedrom_enable"])
    reset_name = reset and ("areset" if reset == "async" else "reset")
    lines = [f"`timescale 1 ps/1 ps", "`define OK 12", "`define INCORRECT 13", "",
             "module stimulus_gen (", stim_ports, ");", "",
             "\tinitial begin",
             f"\t\t{cat_in} <= {total_w}'d0;",
             "\t\twavedrom_enable <= 0;",
             "\t\twavedrom_title <= \"\";"]
    if reset_name:
        lines += [f"\t\t{reset_name} <= 1;", "\t\trepeat(3) @(negedge clk);"]
    lines += ["\t\trepeat(400) @(negedge clk) begin",
              f"\t\t\t{cat_in} <= {{$random, $random}};"]
    if reset_name:
        lines += [f"\t\t\t{reset_name} <= ($random & 31) == 0;"]
    if any(n == "valid" for n in all_in):
        lines += ["\t\t\tvalid <= $random;"]
    lines += ["\t\tend", "\t\t#1 $finish;", "\tend", "endmodule", "", "module tb();", "",
              "\ttypedef struct packed {", "\t\tint errors;", "\t\tint errortime;"]
    for n, _ in outputs:
        lines += [f"\t\tint errors_{n};", f"\t\tint errortime_{n};"]
    lines += ["", "\t\tint clocks;", "\t} stats;", "", "\tstats stats1;", "",
              "\twire[511:0] wavedrom_title;", "\twire wavedrom_enable;", "",
              "\treg clk=0;", "\tinitial forever", "\t\t#5 clk = ~clk;", ""]
    for n, w in inputs:
        lines.append(f"\tlogic [{w - 1}:0] {n};" if w > 1 else f"\tlogic {n};")
    for n, w in outputs:
        for suffix in ("ref", "dut"):
            lines.append(f"\tlogic [{w - 1}:0] {n}_{suffix};" if w > 1 else f"\tlogic {n}_{suffix};")
    dump = ", ".join(["stim1.clk", "tb_mismatch"] + all_in + [f"{n}_{s}" for n, _ in outputs for s in ("ref", "dut")])
    conn_in = ", ".join(([".clk"] if clocked else []) + [f".{n}" for n in all_in])
    refs = "{ " + ", ".join(f"{n}_ref" for n, _ in outputs) + " }"
    duts = "{ " + ", ".join(f"{n}_dut" for n, _ in outputs) + " }"
    lines += ["", "\tinitial begin", "\t\t$dumpfile(\"wave.vcd\");", f"\t\t$dumpvars(1, {dump});", "\tend", "",
              "\twire tb_match;", "\twire tb_mismatch = ~tb_match;", "",
              "\tstimulus_gen stim1 (", "\t\t.clk,", "\t\t.* );",
              "\tRefModule good1 (", f"\t\t{conn_in},",
              "\t\t" + ", ".join(f".{n}({n}_ref)" for n, _ in outputs) + " );",
              "\tTopModule top_module1 (", f"\t\t{conn_in},",
              "\t\t" + ", ".join(f".{n}({n}_dut)" for n, _ in outputs) + " );", "",
              "\tfinal begin"]
    for n, _ in outputs:
        lines += [f"\t\tif (stats1.errors_{n}) $display(\"Hint: Output '%s' has %0d mismatches. First mismatch occurred at time %0d.\", \"{n}\", stats1.errors_{n}, stats1.errortime_{n});",
                  f"\t\telse $display(\"Hint: Output '%s' has no mismatches.\", \"{n}\");"]
    lines += ["\t\t$display(\"Hint: Total mismatched samples is %1d out of %1d samples\\n\", stats1.errors, stats1.clocks);",
              "\t\t$display(\"Simulation finished at %0d ps\", $time);",
              "\t\t$display(\"Mismatches: %1d in %1d samples\", stats1.errors, stats1.clocks);",
              "\tend", "",
              f"\tassign tb_match = ( {refs} === ( {refs} ^ {duts} ^ {refs} ) );",
              "\talways @(posedge clk, negedge clk) begin", "\t\tstats1.clocks++;",
              "\t\tif (!tb_match) begin", "\t\t\tif (stats1.errors == 0) stats1.errortime = $time;",
              "\t\t\tstats1.errors++;", "\t\tend"]
    for n, _ in outputs:
        lines += [f"\t\tif ({n}_ref !== ( {n}_ref ^ {n}_dut ^ {n}_ref ))",
                  f"\t\tbegin if (stats1.errors_{n} == 0) stats1.errortime_{n} = $time;",
                  f"\t\t\tstats1.errors_{n} = stats1.errors_{n}+1'b1; end"]
    lines += ["\tend", "", "\tinitial begin", "\t\t#1000000", "\t\t$display(\"TIMEOUT\");", "\t\t$finish();",
              "\tend", "", "endmodule", ""]
    return "\n".join(lines)


def main():
    s2r = os.path.join(OUT, "dataset_spec-to-rtl")
    cc = os.path.join(OUT, "dataset_code-complete-iccad2023")
    for d in (s2r, cc):
        os.makedirs(d, exist_ok=True)
    names = []
    samples = {"spec-to-rtl": [], "code-complete-iccad2023": []}
    for name, desc, ins, outs, clocked, reset, body, wrong in PROBLEMS:
        names.append(name)
        spec = ("\nI would like you to implement a module named TopModule with the following\n"
                "interface. All input and output ports are one bit unless otherwise\nspecified.\n\n"
                f"{spec_ports(ins, outs, clocked)}\n\n{desc}\n\n")
        ref = module("RefModule", ins, outs, clocked, body)
        tb = testbench(ins, outs, clocked, reset)
        ifc = f"module TopModule (\n{ports(ins, outs, clocked)}\n);\n"
        for d in (s2r, cc):
            open(os.path.join(d, f"{name}_ref.sv"), "w").write(ref)
            open(os.path.join(d, f"{name}_test.sv"), "w").write(tb)
        open(os.path.join(s2r, f"{name}_prompt.txt"), "w").write(spec)
        open(os.path.join(cc, f"{name}_prompt.txt"), "w").write(desc + "\n\n" + ifc)
        open(os.path.join(cc, f"{name}_ifc.txt"), "w").write(ifc)
        good = module("TopModule", ins, outs, clocked, body)
        bad = module("TopModule", ins, outs, clocked, wrong)
        s = samples["spec-to-rtl"]
        s.append({"problem": name, "completion": f"[BEGIN]\n{good}[DONE]"})
        s.append({"problem": name, "completion": f"Here is the design:\n\n```verilog\n{good}```\n\nIt meets the spec."})
        s.append({"problem": name, "completion": f"[BEGIN]\n{bad}[DONE]"})
        s.append({"problem": name, "completion": "[BEGIN]\n" + good.replace(");\n\n", ")\n\n", 1) + "[DONE]"})
        s.append({"problem": name, "completion": f"{good}\nThis module implements the specification."})
        s.append({"problem": name, "completion": f"[BEGIN]\n{good}"})
        c = samples["code-complete-iccad2023"]
        c.append({"problem": name, "completion": body + "endmodule\n"})
        c.append({"problem": name, "completion": f"```verilog\n{good}```\n"})
        c.append({"problem": name, "completion": wrong + "endmodule\n"})
        c.append({"problem": name, "completion": body})
        c.append({"problem": name, "completion": "\n" + body + "endmodule\n\nThe design is complete.\n"})
    for d in (s2r, cc):
        open(os.path.join(d, "problems.txt"), "w").write("\n".join(names) + "\n")
    for task, rows in samples.items():
        with open(os.path.join(OUT, f"samples_{task}.jsonl"), "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    print(f"wrote {len(names)} problems to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
