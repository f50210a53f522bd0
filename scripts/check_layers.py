#!/usr/bin/env python3
"""Fails on an include edge the layering forbids (docs/architecture.md, "Layers").

Layers point one way: base at the bottom; sandbox, datasets and kernels above it; harness over
sandbox and datasets; evald (the service) over everything. Nothing below evald includes it.
tests/ and bench/ may include anything. Every `#include "X/..."` of a project header in a
tracked .cc/.h file is checked against its folder's allowed set; a generated header
(`*.pb.h`) belongs to the folder of its .proto.
"""
import re
import subprocess
import sys

ALLOWED = {
    "base": set(),
    "sandbox": {"base"},
    "datasets": {"base"},
    "kernels": {"base"},
    "harness": {"base", "sandbox", "datasets"},
    "evald": {"base", "sandbox", "datasets", "kernels", "harness"},
}
TOP = set(ALLOWED) | {"tests", "bench"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main():
    files = subprocess.run(["git", "ls-files", "*.cc", "*.h"], capture_output=True, text=True,
                           check=True).stdout.split()
    bad = []
    edges = 0
    for path in files:
        layer = path.split("/", 1)[0]
        if layer not in ALLOWED:
            continue  # tests/, bench/: anything
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for target in INCLUDE.findall(text):
            to = target.split("/", 1)[0]
            if to not in TOP or to == layer:
                continue
            edges += 1
            if to not in ALLOWED[layer]:
                bad.append(f"{path}: includes {target} ({layer} may use only "
                           f"{', '.join(sorted(ALLOWED[layer])) or 'nothing of the project'})")
    for line in bad:
        print(line)
    print(f"layers: {edges} include edges between folders, {len(bad)} forbidden")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
