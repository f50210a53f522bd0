#!/usr/bin/env python3
"""Pass/fail agreement of `evald eval` with verilog-eval's own procedure on the same samples.

The plain procedure is the benchmark's: per sample, in a fresh directory, `iverilog -Wall
-Winfloop -Wno-timescale -g2012 -s tb` of sample + testbench + reference and `vvp` under a 30 s
timeout; a sample passes when its log holds a line "Mismatches: 0 in N samples" (the analysis
script's test). Every disagreement is listed with evald's letter and detail, grouped by why:

  refused  evald's integrity check refused it (I): by design, the plain procedure cannot refuse
  other    passes under one procedure only, for another reason (listed one by one)

  scripts/benchmark_agreement.py [--benchmark DIR] [--samples FILE.jsonl | --n 20 --problems 0]
      [--task spec-to-rtl] [--evald build/bin/evald] [--jobs 2]

(--samples: lines with "problem" and extracted "code".)

Without --samples it builds references + mutants with bench/make_sample_set.py (large set).
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

RESULT = re.compile(r"^Mismatches: 0 in \d+ samples$")


def plain_pass(folder, problem, code, work):
    d = tempfile.mkdtemp(dir=work)
    with open(os.path.join(d, "sample.sv"), "w") as f:
        f.write(code)
    cmd = ["iverilog", "-Wall", "-Winfloop", "-Wno-timescale", "-g2012", "-s", "tb", "-o", "bin",
           "sample.sv", f"{folder}/{problem}_test.sv", f"{folder}/{problem}_ref.sv"]
    log = ""
    try:
        c = subprocess.run(cmd, cwd=d, capture_output=True, text=True, errors="replace", timeout=60)
        log = c.stdout + c.stderr
        if c.returncode == 0:
            r = subprocess.run(["vvp", "-n", "bin"], cwd=d, capture_output=True, text=True,
                               errors="replace", timeout=30)
            log += r.stdout + r.stderr
    except subprocess.TimeoutExpired:
        log += "\nTIMEOUT (plain procedure)"
    subprocess.run(["rm", "-rf", d])
    return any(RESULT.match(line.strip()) for line in log.splitlines())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--benchmark", default="../shared/verilog-eval")
    ap.add_argument("--task", default="spec-to-rtl")
    ap.add_argument("--samples")
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--problems", type=int, default=0)
    ap.add_argument("--evald", default="build/bin/evald")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    folder = os.path.abspath(f"{a.benchmark}/dataset_{a.task}")
    work = tempfile.mkdtemp(prefix="evald-agreement-")
    samples = a.samples
    codes = None
    if not samples:
        samples = os.path.join(work, "samples.jsonl")
        codes_dir = os.path.join(work, "codes")
        subprocess.run([sys.executable, "bench/make_sample_set.py", "--benchmark", a.benchmark,
                        "--task", a.task, "--set", "large", "--n", str(a.n), "--problems",
                        str(a.problems), "--out", samples, "--codes-dir", codes_dir], check=True)
        count = len(open(os.path.join(codes_dir, "list.txt")).read().splitlines())
        codes = [open(os.path.join(codes_dir, f"{n}.sv")).read() for n in range(count)]
    lines = [json.loads(l) for l in open(samples) if l.strip()]
    report = os.path.join(work, "report.json")
    subprocess.run([a.evald, "eval", "--dataset", a.benchmark, "--task", a.task, "--samples",
                    samples, "--jobs", str(a.jobs), "--formal", "off", "--json", report],
                   check=False, stdout=subprocess.DEVNULL)
    graded = {(s["problem"], s.get("index", 0)): s for s in json.load(open(report))["samples"]}
    next_index = {}
    keyed = []
    for n, l in enumerate(lines):
        p = l.get("problem") or l.get("task_id")
        i = l.get("index", next_index.get(p, 0))
        next_index[p] = max(next_index.get(p, 0), i + 1)
        if codes is None and "code" not in l:
            sys.exit("--samples must give extracted code (\"code\") for the plain procedure")
        keyed.append((p, i, codes[n] if codes is not None else l["code"]))
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        plain = list(pool.map(lambda k: plain_pass(folder, k[0], k[2], work), keyed))
    agree, refused, other = 0, [], []
    for (p, i, _), ok in zip(keyed, plain):
        s = graded.get((p, i))
        if s is None:
            continue
        if bool(s.get("passed")) == ok:
            agree += 1
        elif s.get("verdict") == "I":
            refused.append((p, i, ok, s))
        else:
            other.append((p, i, ok, s))
    total = agree + len(refused) + len(other)
    print(f"samples {total}: agree {agree} ({100.0 * agree / max(1, total):.2f}%), "
          f"refused by evald's checks {len(refused)}, other differences {len(other)}")
    print(f"agreement excluding refusals: {100.0 * agree / max(1, total - len(refused)):.2f}%")
    for title, rows in (("refused", refused), ("other", other)):
        for p, i, ok, s in rows[:40]:
            print(f"  {title}: {p}#{i} plain={'pass' if ok else 'fail'} evald={s['verdict']} "
                  f"{s.get('detail', '')[:120]}")
    subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
