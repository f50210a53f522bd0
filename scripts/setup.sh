#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and runs the main job on the built-in problem set:
# dependencies, a release build in build/, then `evald eval` on datasets/builtin.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DEVALD_BUILD_TESTS=OFF
cmake --build build --target evald evald-sandbox

echo
echo "== evald eval on the built-in problem set (spec-to-rtl, 14 problems x 6 samples) =="
build/bin/evald eval --dataset datasets/builtin --task spec-to-rtl \
  --samples datasets/builtin/samples_spec-to-rtl.jsonl --k 1,5 --json build/builtin-report.json
echo "report: build/builtin-report.json"
