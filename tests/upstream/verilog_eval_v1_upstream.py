#!/usr/bin/env python3
"""VerilogEval v1's own harness over a samples file, for comparison with evald.

Runs upstream's check_correctness (verilog_eval/execution.py of the read-only checkout, its
execution call enabled as its README instructs: the two lines holding only the triple quotes
that comment it out are left out of a copy) on every sample and prints one JSON line per
sample: task_id, index (the sample's place among its problem's samples), passed, result.

Usage: verilog_eval_v1_upstream.py CHECKOUT PROBLEM_FILE SAMPLES_FILE
"""
import importlib.util
import json
import os
import shutil
import sys
import tempfile


def load_enabled_execution(checkout):
    source = open(os.path.join(checkout, "verilog_eval", "execution.py")).read()
    lines = source.split("\n")
    kept = [line for line in lines if line != '"""']
    if len(lines) - len(kept) != 2:
        sys.exit("execution.py: expected exactly two lines that comment out the execution call")
    folder = tempfile.mkdtemp(prefix="verilog-eval-v1-upstream-")
    path = os.path.join(folder, "execution_enabled.py")
    with open(path, "w") as f:
        f.write("\n".join(kept))
    spec = importlib.util.spec_from_file_location("execution_enabled", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    shutil.rmtree(folder)  # the module is loaded; its copy is no longer needed
    return module


def main():
    checkout, problem_file, samples_file = sys.argv[1:4]
    execution = load_enabled_execution(checkout)
    problems = {}
    with open(problem_file) as f:
        for line in f:
            if line.strip():
                problem = json.loads(line)
                problems[problem["task_id"]] = problem
    seen = {}
    with open(samples_file) as f:
        for line in f:
            if not line.strip():
                continue
            sample = json.loads(line)
            task_id = sample["task_id"]
            index = seen.get(task_id, 0)
            seen[task_id] = index + 1
            result = execution.check_correctness(problems[task_id], sample["completion"], 30.0)
            print(json.dumps({"task_id": task_id, "index": index, "passed": result["passed"],
                              "result": result["result"]}), flush=True)


if __name__ == "__main__":
    main()
