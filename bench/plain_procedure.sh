#!/usr/bin/env bash
# The benchmark's own procedure, sequentially and without a sandbox: per sample, in a fresh
# directory (the testbench writes wave.vcd), `iverilog -Wall -Winfloop -Wno-timescale -g2012
# -s tb` and then `vvp` under a 30 s timeout. The baseline evald is measured against.
#   plain_procedure.sh DATASET_FOLDER CODES_DIR   (CODES_DIR from make_sample_set.py --codes-dir)
set -euo pipefail
folder="$1"
codes="$2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
while read -r n problem; do
  dir="$work/$n"
  mkdir "$dir"
  cp "$codes/$n.sv" "$dir/sample.sv"
  (cd "$dir" && iverilog -Wall -Winfloop -Wno-timescale -g2012 -s tb -o bin sample.sv \
      "$folder/${problem}_test.sv" "$folder/${problem}_ref.sv" > log.txt 2>&1 &&
    timeout 30 vvp -n bin >> log.txt 2>&1) || true
  rm -rf "$dir"
done < "$codes/list.txt"
