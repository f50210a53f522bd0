#!/usr/bin/env python3
"""Builds benchmark sample sets from a verilog-eval checkout.

  refs   one sample per problem: the reference itself (as TopModule)
  large  n samples per problem drawn from the reference and text mutants of it, with the
         repetition real sampling produces (a model at temperature 0.85 often repeats itself)
  real   n samples per problem shaped like real completions (measured on ~4,000 of them from
         ~30 models): mostly distinct texts (comments and layout differ between draws),
         passes, runtime mismatches and compile failures (a quarter of the samples), a design
         that hangs the simulator now and then, and mostly wrong designs on the two problems
         whose reference runs into the testbench's TIMEOUT (Prob082, Prob141), where a wrong
         design used to cost the testbench's whole 200,000 samples

Mutants are plain text edits of the reference (operators swapped, a constant flipped, the clock
edge inverted, the simulation ended early, a statement broken) so that the set holds passes,
runtime mismatches and compile errors in realistic proportions. Deterministic for a seed.
"""
import argparse
import json
import os
import random
import re

MUTATIONS = [
    ("and-to-or", lambda s: s.replace(" & ", " | ", 1)),
    ("plus-to-minus", lambda s: s.replace(" + ", " - ", 1)),
    ("flip-constant", lambda s: re.sub(r"1'b([01])", lambda m: "1'b" + ("0" if m.group(1) == "1" else "1"), s, 1)),
    ("negedge", lambda s: s.replace("posedge clk", "negedge clk", 1)),
    ("blocking", lambda s: s.replace("<=", "=", 1) if "always @(posedge" in s else s),
    ("drop-not", lambda s: s.replace("~", "", 1)),
    ("early-finish", lambda s: s[: s.rfind("endmodule")] + "  initial #20 $finish;\n" + s[s.rfind("endmodule"):]),
    ("syntax", lambda s: s[: s.rfind(";")] + s[s.rfind(";") + 1:]),
]


# Compile failures the way models write them: a missing semicolon, an undeclared name, a
# truncated module, a SystemVerilog construct Icarus does not take.
COMPILE_FAILURES = [
    lambda s: s[: s.rfind(";")] + s[s.rfind(";") + 1:],
    lambda s: s[: s.rfind("endmodule")] + "  assign undeclared_result = undeclared_input;\n" + s[s.rfind("endmodule"):],
    lambda s: s[: s.rfind("endmodule")],
    lambda s: s[: s.rfind("endmodule")] + "  always_ff @(posedge clk) unique case (1'b0) endcase\n  "
              "typedef struct packed { logic a; } t;\n  t v = t'(2);\n" + s[s.rfind("endmodule"):],
]

# A design that never lets simulated time advance (a loop with no delay in it, as models write
# them while waiting for a signal): the simulator spins until its limit.
def hang(s):
    return s[: s.rfind("endmodule")] + ("  reg spin_q;\n  initial begin : spin\n    spin_q = 1'b0;\n"
                                        "    while (1'b1) spin_q = ~spin_q;\n  end\n") + s[s.rfind("endmodule"):]


TIMEOUT_PROBLEMS = {"Prob082_lfsr32", "Prob141_count_clock"}


def real_draw(rng, name, design, mutants, k):
    """One completion: (kind, code), the text varied the way two draws of a model differ."""
    if rng.random() < 0.002:
        kind, code = "hang", hang(design)
    else:
        wrong = 0.75 if name in TIMEOUT_PROBLEMS else 0.35
        r = rng.random()
        if r < 0.2:
            kind, code = "compile", rng.choice(COMPILE_FAILURES)(design)
        elif r < 0.2 + wrong and mutants:
            kind, code = "mismatch", rng.choice(mutants)
        else:
            kind, code = "pass", design
    if rng.random() < 0.6:  # most draws are distinct texts
        code = f"// draw {k}: generated\n" + code.replace("\n\n", "\n", rng.randint(0, 2))
    return kind, code


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--benchmark", required=True, help="verilog-eval checkout (holds dataset_<task>)")
    ap.add_argument("--task", default="spec-to-rtl")
    ap.add_argument("--set", choices=["refs", "large", "real"], required=True)
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--problems", type=int, default=0, help="only the first N problems (0: all)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--codes-dir", help="also write each sample's code as N.sv plus list.txt "
                    "(N problem per line) for the plain-procedure baseline")
    args = ap.parse_args()

    folder = os.path.join(args.benchmark, f"dataset_{args.task}")
    names = open(os.path.join(folder, "problems.txt")).read().split()
    if args.problems:
        names = names[: args.problems]
    rng = random.Random(args.seed)
    listing = None
    if args.codes_dir:
        os.makedirs(args.codes_dir, exist_ok=True)
        listing = open(os.path.join(args.codes_dir, "list.txt"), "w")
    count = 0

    def emit_code(name, code):
        nonlocal count
        if listing:
            open(os.path.join(args.codes_dir, f"{count}.sv"), "w").write(code)
            listing.write(f"{count} {name}\n")
        count += 1

    with open(args.out, "w") as out:
        for name in names:
            ref = open(os.path.join(folder, f"{name}_ref.sv")).read()
            design = re.sub(r"\bRefModule\b", "TopModule", ref)
            if args.set == "refs":
                out.write(json.dumps({"problem": name, "code": design}) + "\n")
                emit_code(name, design)
                continue
            if args.set == "real":
                mutants = []
                for label, mutate in MUTATIONS:
                    m = mutate(design)
                    if label not in ("early-finish", "syntax") and m != design and m not in mutants:
                        mutants.append(m)
                for i in range(args.n):
                    _, code = real_draw(rng, name, design, mutants, i)
                    completion = f"```verilog\n{code}```\n" if rng.random() < 0.8 else f"[BEGIN]\n{code}[DONE]"
                    out.write(json.dumps({"problem": name, "index": i, "completion": completion}) + "\n")
                    emit_code(name, code)
                continue
            variants = [design]
            for _, mutate in MUTATIONS:
                m = mutate(design)
                if m != design and m not in variants:
                    variants.append(m)
            # Half the draws are the reference, the rest spread over the mutants.
            weights = [0.5] + [0.5 / max(1, len(variants) - 1)] * (len(variants) - 1)
            for i in range(args.n):
                code = rng.choices(variants, weights)[0]
                completion = f"[BEGIN]\n{code}[DONE]" if rng.random() < 0.7 else f"```verilog\n{code}```\n"
                out.write(json.dumps({"problem": name, "index": i, "completion": completion}) + "\n")
                emit_code(name, code)


if __name__ == "__main__":
    main()
