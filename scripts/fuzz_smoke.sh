#!/usr/bin/env bash
# Builds the grader's libFuzzer targets with clang (coverage, ASan, UBSan) and runs each for a
# short while, seeded with the hostile corpus: the integrity check, the Verilog lexer, the
# simulator-output classifier, the Yosys-output parsers and the preprocessor differential (the
# check's token view against the real iverilog -E and verilator -E, run on each input). A crash,
# a leak, a timeout or UB fails the run; the finding is left in build-fuzz/findings/. Usage: scripts/fuzz_smoke.sh [SECONDS_PER_TARGET] (default 30)
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET="${1:-30}"
TARGETS=(check_integrity lex_verilog classify_output parse_yosys_output preprocessor_differential)

if ! command -v clang++ >/dev/null; then
  echo "fuzz_smoke: clang++ not found; skipped (scripts/install-deps.sh installs it)"
  exit 0
fi
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEVALD_DEBUG_INFO=-g1 -DEVALD_FUZZ=ON \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DEVALD_BUILD_TESTS=ON >/dev/null
cmake --build build-fuzz -j "${JOBS:-2}" --target "${TARGETS[@]/#/fuzz_}"

seeds=build-fuzz/seeds
rm -rf "$seeds" build-fuzz/findings
mkdir -p "$seeds" build-fuzz/findings
cp tests/hostile/*.sv "$seeds"/
cp datasets/builtin/dataset_spec-to-rtl/*_ref.sv "$seeds"/
printf 'Hint: x\nMismatches: 0 in 20 samples\n' >"$seeds/result.txt"
printf '[evald-1] Mismatches: 3 in 7 samples\nTIMEOUT\nsyntax error\n' >"$seeds/tagged.txt"
printf '     1 \\in_a   1   1   0001\n     1 \\gold_out  --  --  x1x0\n     1 \\gate_out 3 3 0011\n   Number of cells:   5\n     $_AND_  2\n(length=7)\n' >"$seeds/yosys.txt"

passed=0 failed=0
for t in "${TARGETS[@]}"; do
  work="build-fuzz/corpus-$t"
  rm -rf "$work" && mkdir -p "$work"
  echo "== fuzz $t (${SECONDS_PER_TARGET}s) =="
  if ./build-fuzz/tests/fuzz_$t "$work" "$seeds" -max_total_time="$SECONDS_PER_TARGET" \
      -rss_limit_mb=2048 -timeout=10 -max_len=65536 -print_final_stats=1 \
      -artifact_prefix=build-fuzz/findings/$t- 2>build-fuzz/fuzz-$t.log; then
    passed=$((passed + 1))
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" build-fuzz/fuzz-$t.log || true
  else
    failed=$((failed + 1))
    tail -40 build-fuzz/fuzz-$t.log
  fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
