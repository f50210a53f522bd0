#!/usr/bin/python3
"""RTLLM 2.0's own pass rule, run with Icarus instead of VCS: the plain procedure evald is
compared with.

Upstream (auto_run.py + each design's makefile) compiles `vcs -sverilog -timescale=1ns/1ns
<design>.v testbench.v` in the design's folder, runs the simulation for at most 8 s, and counts
the design as functionally correct when the simulation's output contains "Pass" or "pass".
Here: `iverilog -g2012` with a command file's `+timescale+1ns/1ns` (Icarus's equivalent of
VCS's default timescale), `vvp -n` in a copy of the design's folder, the same 8 s and the same
substring test.

usage: rtllm_upstream_rule.py CHECKOUT SAMPLES.jsonl [JOBS]
SAMPLES: one JSON object a line with "problem" (the design folder's name) and "code".
Prints one JSON object a line: problem, index (per problem, in file order), compiled, passed.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

SIM_SECONDS = 8  # auto_run.py's exec_shell timeout
COMPILE_SECONDS = 60


def design_folders(root):
    folders = {}
    for category in sorted(os.listdir(root)):
        cpath = os.path.join(root, category)
        if not os.path.isdir(cpath):
            continue
        for sub in sorted(os.listdir(cpath)):
            spath = os.path.join(cpath, sub)
            if not os.path.isdir(spath):
                continue
            for design in sorted(os.listdir(spath)):
                dpath = os.path.join(spath, design)
                if os.path.isfile(os.path.join(dpath, "testbench.v")):
                    folders[design] = dpath
    return folders


def run(argv, cwd, timeout):
    """argv in its own process group, all of it killed at the timeout (iverilog's elaborator
    runs in a child the driver does not stop): (returncode, stdout) or None on timeout."""
    p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return None


def grade(folder, problem, code):
    work = tempfile.mkdtemp(prefix="rtllm-plain-")
    try:
        for name in os.listdir(folder):
            if not name.startswith("verified_") and name != "makefile":
                shutil.copy(os.path.join(folder, name), work)
        with open(os.path.join(work, problem + ".v"), "w") as f:
            f.write(code)
        with open(os.path.join(work, "timescale.f"), "w") as f:
            f.write("+timescale+1ns/1ns\n")
        c = run(["iverilog", "-g2012", "-c", "timescale.f", "-o", "simv", problem + ".v",
                 "testbench.v"], work, COMPILE_SECONDS)
        if c is None or c[0] != 0 or not os.path.exists(os.path.join(work, "simv")):
            return False, False
        s = run(["vvp", "-n", "simv"], work, SIM_SECONDS)
        if s is None:
            return True, False
        out = s[1].decode("utf-8", "replace")
        return True, ("Pass" in out or "pass" in out)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    root, samples_path = sys.argv[1], sys.argv[2]
    jobs = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    folders = design_folders(root)
    samples, counts = [], {}
    with open(samples_path) as f:
        for line in f:
            if not line.strip():
                continue
            s = json.loads(line)
            index = counts.get(s["problem"], 0)
            counts[s["problem"]] = index + 1
            samples.append((s["problem"], index, s["code"]))

    def one(sample):
        problem, index, code = sample
        if problem not in folders:
            return {"problem": problem, "index": index, "error": "no such design"}
        compiled, passed = grade(folders[problem], problem, code)
        return {"problem": problem, "index": index, "compiled": compiled, "passed": passed}

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for r in pool.map(one, samples):
            print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
