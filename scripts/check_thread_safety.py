#!/usr/bin/env python3
"""Clang's thread-safety analysis over every source that holds an annotated mutex.

The classes that hold mutexes say what each one guards (GUARDED_BY) and what their methods need
held (REQUIRES, EXCLUDES) with base/thread_annotations.h; gcc ignores the annotations, so this
compiles those sources again with clang++ -fsyntax-only -Wthread-safety -Werror, using the
flags CMake recorded for them (BUILD/compile_commands.json). Usage:
    scripts/check_thread_safety.py [BUILD_DIR]   (default build-test)
A source is checked when it, or its own header, uses the annotations or base's Mutex.
"""
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys

ANNOTATED = re.compile(r"\b(GUARDED_BY|PT_GUARDED_BY|REQUIRES|EXCLUDES|MutexLock|WaitableLock)\b")
LAYERS = ("base/", "sandbox/", "datasets/", "kernels/", "harness/", "evald/")
# gcc's flags clang does not take.
DROP = {"-fno-gnu-unique"}


def annotated(root, source):
    for path in (source, os.path.splitext(source)[0] + ".h"):
        full = os.path.join(root, path)
        if os.path.exists(full):
            with open(full, encoding="utf-8", errors="replace") as f:
                if ANNOTATED.search(f.read()):
                    return True
    return False


def clang_command(entry):
    args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    out, skip = ["clang++"], False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD") or a in DROP or a.endswith("ccache") or a.endswith("c++"):
            continue
        out.append(a)
    return out + ["-fsyntax-only", "-Wthread-safety", "-Wthread-safety-beta", "-Werror"]


def check(entry):
    r = subprocess.run(clang_command(entry), cwd=entry["directory"], capture_output=True,
                       text=True)
    return entry["file"], r.returncode, r.stderr


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build-test"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, build, "compile_commands.json")) as f:
        entries = json.load(f)
    chosen = {}
    for e in entries:
        rel = os.path.relpath(e["file"], root)
        if rel.startswith(LAYERS) and rel.endswith(".cc") and annotated(root, rel):
            chosen[rel] = e
    jobs = int(os.environ.get("JOBS", "2"))
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for path, code, err in pool.map(check, chosen.values()):
            if code != 0:
                failed += 1
                print(f"== {os.path.relpath(path, root)}\n{err}")
    print(f"thread safety: {len(chosen)} sources checked with clang -Wthread-safety, "
          f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
