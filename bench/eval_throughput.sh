#!/usr/bin/env bash
# Samples/s of `evald eval` (every sandbox layer on) against the plain sequential benchmark
# procedure (no sandbox), on the same samples, in the same run; and `evald eval --exact-counts`
# (every wrong design simulated to its end) against the default (stop at the first mismatch),
# with every sample's verdict letter and benchmark letter compared between the two.
#   bench/eval_throughput.sh [--benchmark DIR] [--problems N] [--n 20] [--jobs 2]
# Sets: the 156 references, and a large set (references + mutants, n per problem, duplicates).
# Prints samples/s for both and their ratio. Needs a build in build/ (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
BENCHMARK=../shared/verilog-eval
PROBLEMS=0
N=20
JOBS=2
source bench/args.sh
parse_args "BENCHMARK PROBLEMS N JOBS" "$@"
BENCH="$BENCHMARK"
EVALD=${EVALD:-$(find_evald)}
FOLDER="$(cd "$BENCH/dataset_spec-to-rtl" && pwd)"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

now() { date +%s.%N; }
rate() { python3 -c "print(f'{$1 / ($3 - $2):.2f}')"; }

run_set() {
  local set="$1"
  python3 bench/make_sample_set.py --benchmark "$BENCH" --set "$set" --n "$N" \
    --problems "$PROBLEMS" --out "$TMP/$set.jsonl" --codes-dir "$TMP/$set-codes"
  local count
  count=$(wc -l < "$TMP/$set.jsonl")

  local t0 t1 t2 t3
  t0=$(now)
  bench/plain_procedure.sh "$FOLDER" "$TMP/$set-codes"
  t1=$(now)
  t2=$(now)
  "$EVALD" eval --dataset "$BENCH" --task spec-to-rtl --samples "$TMP/$set.jsonl" --jobs "$JOBS" \
    --json "$TMP/$set-report.json" > "$TMP/$set-out.txt" 2> "$TMP/$set-err.txt"
  t3=$(now)
  local t4 t5
  t4=$(now)
  "$EVALD" eval --dataset "$BENCH" --task spec-to-rtl --samples "$TMP/$set.jsonl" --jobs "$JOBS" \
    --exact-counts --json "$TMP/$set-exact.json" > /dev/null 2> "$TMP/$set-exact-err.txt"
  t5=$(now)
  local plain evald sims exact
  plain=$(rate "$count" "$t0" "$t1")
  evald=$(rate "$count" "$t2" "$t3")
  exact=$(rate "$count" "$t4" "$t5")
  sims=$(python3 -c "import json; print(json.load(open('$TMP/$set-report.json'))['summary']['simulations'])")
  echo "set=$set samples=$count distinct_simulations=$sims"
  echo "  plain sequential procedure (no sandbox): $plain samples/s  ($(python3 -c "print(f'{$t1-$t0:.1f}')") s)"
  echo "  evald eval --jobs $JOBS (sandboxed):        $evald samples/s  ($(python3 -c "print(f'{$t3-$t2:.1f}')") s)"
  echo "  evald eval --exact-counts:               $exact samples/s  ($(python3 -c "print(f'{$t5-$t4:.1f}')") s)"
  echo "  ratio evald/plain: $(python3 -c "print(f'{$evald/$plain:.2f}x')")   first-mismatch/exact: $(python3 -c "print(f'{$evald/$exact:.2f}x')")"
  python3 - "$TMP/$set-report.json" "$TMP/$set-exact.json" <<'PY'
import json, sys
a, b = (json.load(open(f))["samples"] for f in sys.argv[1:3])
diff = [(x["problem"], x.get("index", 0), x["verdict"], y["verdict"])
        for x, y in zip(a, b) if (x["verdict"], x.get("benchmark_verdict")) != (y["verdict"], y.get("benchmark_verdict"))]
stopped = sum(1 for x in a if x.get("mismatches_lower_bound"))
print(f"  letters, first-mismatch vs exact: {len(a) - len(diff)}/{len(a)} equal "
      f"({stopped} simulations stopped at a first mismatch)" + (f"; differ: {diff[:8]}" if diff else ""))
PY
  grep -E "^(pass@|benchmark pass_rate|categories)" "$TMP/$set-out.txt" | sed 's/^/  /'
}

echo "evald eval throughput, $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ)"
grep "sandbox layers" -m1 <("$EVALD" dataset check --dataset datasets/builtin 2>&1) | sed 's/^.*info /  /'
run_set refs
run_set large
