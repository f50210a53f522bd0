#!/usr/bin/env python3
"""Fails on an include edge the layering forbids (docs/architecture.md, "Layers").

Layers point one way: base at the bottom; sandbox, datasets and kernels above it; harness over
sandbox and datasets; evald (the service) over everything. Nothing below evald includes it.
tests/ and bench/ may include anything. Every `#include "X/..."` of a project header in a
tracked .cc/.h file is checked against its folder's allowed set; a generated header
(`*.pb.h`) belongs to the folder of its .proto.

Inside evald/ the folders are ordered too (EVALD_ORDER, bottom first): a folder includes only
folders of lower rows - the messages, then the pieces that know nothing of runs (metrics, the
store, samples files, the text printer), the backends, what reads reports (gate, leaderboard,
report), the run pipeline (runs), the cluster executor, the daemon (server), and the command
line on top. A folder of evald/ that is not in the table fails the check: it has to be placed.
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
EVALD_ORDER = [
    ["proto"],
    ["metrics", "store", "samples", "text"],
    ["backends"],
    ["gate", "leaderboard", "report"],
    ["runs"],
    ["cluster"],
    ["server"],
    ["cli"],
]
EVALD_RANK = {folder: rank for rank, row in enumerate(EVALD_ORDER) for folder in row}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def evald_folder(path):
    parts = path.split("/")
    return parts[1] if len(parts) > 2 else None  # evald/CMakeLists.txt and the like: none


def check_evald_order(path, text, bad):
    """Appends to `bad` every include of a same-or-higher evald/ folder; returns the edges."""
    here = evald_folder(path)
    if here is None:
        return 0
    if here not in EVALD_RANK:
        bad.append(f"{path}: evald/{here} has no place in EVALD_ORDER (scripts/check_layers.py)")
        return 0
    edges = 0
    for target in INCLUDE.findall(text):
        there = evald_folder(target) if target.startswith("evald/") else None
        if there is None or there == here:
            continue
        edges += 1
        if EVALD_RANK.get(there, len(EVALD_ORDER)) >= EVALD_RANK[here]:
            below = [f for row in EVALD_ORDER[:EVALD_RANK[here]] for f in row]
            bad.append(f"{path}: includes {target} (evald/{here} may use only evald/ "
                       f"{', '.join(below) or 'nothing'})")
    return edges


def main():
    files = subprocess.run(["git", "ls-files", "*.cc", "*.h"], capture_output=True, text=True,
                           check=True).stdout.split()
    bad = []
    edges = 0
    inner = 0
    for path in files:
        layer = path.split("/", 1)[0]
        if layer not in ALLOWED:
            continue  # tests/, bench/: anything
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        if layer == "evald":
            inner += check_evald_order(path, text, bad)
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
    print(f"layers: {edges} include edges between folders, {inner} between evald/ folders, "
          f"{len(bad)} forbidden")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
