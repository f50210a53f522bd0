#!/usr/bin/env bash
# Samples/s of `evald eval` (every sandbox layer on) against the plain sequential benchmark
# procedure (no sandbox), on the same samples, in the same run; and `evald eval --exact-counts`
# (every wrong design simulated to its end) against the default (stop at the first mismatch),
# with every sample's verdict letter and benchmark letter compared between the two.
#   bench/eval_throughput.sh [--benchmark DIR] [--problems N] [--n 20] [--jobs 2]
#                            [--sets "refs large real"]
# Sets: the 156 references; a large set (references + mutants, n per problem, duplicates); and
# a set shaped like real completions (make_sample_set.py --set real: distinct texts, compile
# failures, hangs, wrong designs on the TIMEOUT problems), measured with `--formal off` and with
# the default, and profiled: where evald's time goes, by problem and by verdict.
# Prints samples/s and ratios. Needs a build in build/ (scripts/setup.sh). EVALD_BASELINE=PATH
# (another build's evald, e.g. the commit before a change) runs the real set with --formal off too,
# in the same run: its time against this build's, and every sample's letters compared.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCHMARK=../shared/verilog-eval
PROBLEMS=0
N=20
JOBS=2
SETS="refs large real"
source bench/args.sh
parse_args "BENCHMARK PROBLEMS N JOBS SETS" "$@"
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

# The real-completion-shaped set: the plain procedure, evald --formal off and evald's default,
# in this order, then the profile of the formal-off run and formal's share of the default.
run_real() {
  python3 bench/make_sample_set.py --benchmark "$BENCH" --set real --n "$N" \
    --problems "$PROBLEMS" --out "$TMP/real.jsonl" --codes-dir "$TMP/real-codes"
  local count t0 t1 t2 t3 t4
  count=$(wc -l < "$TMP/real.jsonl")
  t0=$(now)
  bench/plain_procedure.sh "$FOLDER" "$TMP/real-codes"
  t1=$(now)
  "$EVALD" eval --dataset "$BENCH" --task spec-to-rtl --samples "$TMP/real.jsonl" --jobs "$JOBS" \
    --formal off --json "$TMP/real-off.json" > /dev/null 2> "$TMP/real-off-err.txt"
  t2=$(now)
  "$EVALD" eval --dataset "$BENCH" --task spec-to-rtl --samples "$TMP/real.jsonl" --jobs "$JOBS" \
    --json "$TMP/real-default.json" > /dev/null 2> "$TMP/real-default-err.txt"
  t3=$(now)
  echo "set=real samples=$count"
  if [ -n "${EVALD_BASELINE:-}" ]; then
    local b0 b1
    b0=$(now)
    "$EVALD_BASELINE" eval --dataset "$BENCH" --task spec-to-rtl --samples "$TMP/real.jsonl" \
      --jobs "$JOBS" --formal off --json "$TMP/real-baseline.json" > /dev/null \
      2> "$TMP/real-baseline-err.txt"
    b1=$(now)
    python3 - "$b0" "$b1" "$t1" "$t2" "$TMP/real-baseline.json" "$TMP/real-off.json" <<'PY'
import json, sys
b0, b1, t1, t2 = map(float, sys.argv[1:5])
base, new = (json.load(open(f))["samples"] for f in sys.argv[5:7])
print(f"  baseline evald --formal off:             {b1 - b0:.1f} s   this build {(b1 - b0) / (t2 - t1):.2f}x faster")
diff = [(x["problem"], x.get("index", 0), x["verdict"], y["verdict"]) for x, y in zip(base, new)
        if (x["verdict"], x.get("benchmark_verdict"), x["passed"]) !=
           (y["verdict"], y.get("benchmark_verdict"), y["passed"])]
print(f"  letters, baseline vs this build (--formal off): {len(base) - len(diff)}/{len(base)} equal"
      + (f"; differ: {diff[:8]}" if diff else ""))
PY
  fi
  python3 - "$t0" "$t1" "$t2" "$t3" "$TMP/real-off.json" "$TMP/real-default.json" <<'PY'
import collections, json, sys
t0, t1, t2, t3 = map(float, sys.argv[1:5])
off, default = (json.load(open(f)) for f in sys.argv[5:7])
plain, evald_off, evald_default = t1 - t0, t2 - t1, t3 - t2
print(f"  plain sequential procedure (no sandbox): {plain:.1f} s")
print(f"  evald eval --formal off:                 {evald_off:.1f} s   ratio {plain / evald_off:.2f}x")
print(f"  evald eval (default, formal on passes):  {evald_default:.1f} s   ratio {plain / evald_default:.2f}x")
a, b = off["samples"], default["samples"]
same = sum(1 for x, y in zip(a, b) if x["passed"] == y["passed"] and x["verdict"] == y["verdict"])
print(f"  letters, formal off vs default: {same}/{len(a)} equal")
# Time inside the sandbox, summed over the samples that ran (a repeated text runs once).
by_problem, by_verdict = collections.Counter(), collections.Counter()
for s in a:
    t = s.get("compile_seconds", 0) + s.get("simulate_seconds", 0)
    by_problem[s["problem"]] += t
    by_verdict[s["verdict"]] += t
total = sum(by_problem.values()) or 1
compile_total = sum(s.get("compile_seconds", 0) for s in a)
print(f"  profile (--formal off): {total:.1f} s of compile + simulate summed over samples, "
      f"compilation {100 * compile_total / total:.0f}%")
print("    by problem: " + ", ".join(f"{p} {100 * t / total:.0f}%" for p, t in by_problem.most_common(6)))
print("    by verdict: " + ", ".join(f"{v} {100 * t / total:.0f}% ({sum(1 for s in a if s['verdict'] == v)})"
                                     for v, t in by_verdict.most_common()))
formal = sum(s.get("formal", {}).get("seconds", 0) for s in b)
print(f"  formal (default run): {formal:.1f} s over {sum(1 for s in b if s.get('formal'))} samples, "
      f"outcomes {dict(collections.Counter(s['formal']['outcome'] for s in b if s.get('formal')))}")
PY
}

echo "evald eval throughput, $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ)"
grep "sandbox layers" -m1 <("$EVALD" dataset check --dataset datasets/builtin 2>&1) | sed 's/^.*info /  /'
for set in $SETS; do
  if [ "$set" = real ]; then run_real; else run_set "$set"; fi
done
