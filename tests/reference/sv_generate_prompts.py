#!/usr/bin/env python3
"""An independent implementation of verilog-eval's prompt building (scripts/sv-generate at
c498220), written from its documented procedure, to check `evald dataset prompts` against.

It shares nothing with evald: the strings below are the script's own (copied from the script's
text, not from evald or prompts.json), and the text handling is Python's own (files read in text
mode, str.splitlines/strip/rstrip), which is what the script runs on.

Usage: sv_generate_prompts.py EVALD_BINARY VERILOG_EVAL_DIR
Compares every problem of both tasks for shots 0-4, rules on/off, explanations on/off and the
system message in front of the prompt on/off; prints one line per difference and a summary,
exits 1 on any difference.
"""
import json
import os
import subprocess
import sys

SYSTEM = {
    "code-complete-iccad2023": (
        "\nYou only complete chats with syntax correct Verilog code. End the Verilog module code "
        "completion with 'endmodule'. Do not include module, input and output definitions.\n"),
    "spec-to-rtl": "\nYou are a Verilog RTL designer that only writes code using correct Verilog syntax.\n",
}
PREFIX = {
    "code-complete-iccad2023": (
        "\n// Implement the Verilog module based on the following description. Assume that signals "
        "are positive clock/clk triggered unless otherwise stated.\n"),
    "spec-to-rtl": "",
}
RULES = """
Here are some additional rules and coding conventions.

 - Declare all ports and signals as logic; do not to use wire or reg.

 - For combinational logic with an always block do not explicitly specify
   the sensitivity list; instead use always @(*).

 - All sized numeric constants must have a size greater than zero
   (e.g, 0'b0 is not a valid expression).

 - An always block must read at least one signal otherwise it will never
   be executed; use an assign statement instead of an always block in
   situations where there is no need to read any signals.

 - if the module uses a synchronous reset signal, this means the reset
   signal is sampled with respect to the clock. When implementing a
   synchronous reset signal, do not include posedge reset in the
   sensitivity list of any sequential always block.
"""
NO_EXPLAIN = """
Enclose your code with [BEGIN] and [DONE]. Only output the code snippet
and do NOT output anything else.
"""


def read_text(path):
    with open(path, encoding="utf-8") as f:  # text mode: universal newlines, as the script
        return f.read()


def build(root, task, name, shots, rules, explain, system_in_prompt):
    spec = read_text(os.path.join(root, "dataset_" + task, name + "_prompt.txt"))
    out = SYSTEM[task] + "\n" if system_in_prompt else ""
    if shots:
        out += read_text(os.path.join(root, "icl", f"verilog-example-prefix_{task}_{shots}-shot.txt"))
    if task == "code-complete-iccad2023":
        lines, commenting = [], True
        for line in spec.splitlines():
            if "module TopModule" in line:
                lines.append("")
                commenting = False
            lines.append("// " + line if commenting else line)
        out += PREFIX[task] + "\n".join(lines)
    else:
        out += "\nQuestion:\n" + spec.strip() + "\n"
        if rules:
            out += RULES
        if not explain:
            out = out.rstrip() + "\n" + NO_EXPLAIN
        out += "\nAnswer:\n"
    return SYSTEM[task], out


def main():
    evald, root = sys.argv[1], sys.argv[2]
    if not os.path.isdir(os.path.join(root, "dataset_spec-to-rtl")):
        print(f"skipped: no verilog-eval data at {root}")
        return 77
    checked = failed = 0
    for task in ("spec-to-rtl", "code-complete-iccad2023"):
        for shots in range(5):
            for rules in (False, True):
                for explain in (False, True):
                    for sip in (False, True):
                        args = [evald, "dataset", "prompts", "--dataset", root, "--task", task,
                                "--shots", str(shots)]
                        args += ["--rules"] if rules else []
                        args += ["--explain"] if explain else []
                        args += ["--system-in-prompt"] if sip else []
                        res = subprocess.run(args, capture_output=True, check=True)
                        for line in res.stdout.decode("utf-8").splitlines():
                            got = json.loads(line)
                            system, prompt = build(root, task, got["problem"], shots, rules,
                                                   explain, sip)
                            checked += 1
                            if got["system"] != system or got["prompt"] != prompt:
                                failed += 1
                                if failed <= 10:
                                    print(f"DIFF {task} {got['problem']} shots={shots} "
                                          f"rules={rules} explain={explain} system_in_prompt={sip}")
    print(f"sv-generate prompts: {checked - failed} passed, {failed} failed")
    return 1 if failed or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
