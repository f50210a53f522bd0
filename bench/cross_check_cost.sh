#!/usr/bin/env bash
# What formal and synthesis cross-checks cost on top of simulation, measured in one run: the same
# samples graded with `--formal off` (simulation only, the baseline), with the default
# (`--formal passes`: formal on every distinct passing design) and with `--formal all --synth`.
#   bench/cross_check_cost.sh [--benchmark DIR] [--problems N] [--n 20] [--jobs 2]
# Sets: the built-in problem set with its samples, and verilog-eval's references + mutants (n per
# problem, with duplicates, bench/make_sample_set.py). Prints wall seconds, the ratio to the
# baseline, the extra seconds per sample and per distinct formal check, and the formal outcomes.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCHMARK=../shared/verilog-eval
PROBLEMS=0
N=20
JOBS=2
source bench/args.sh
parse_args "BENCHMARK PROBLEMS N JOBS" "$@"
EVALD=${EVALD:-$(find_evald)}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

now() { date +%s.%N; }

# grade NAME DATASET TASK SAMPLES FLAGS...: prints "seconds" and leaves NAME.json
grade() {
  local name="$1" dataset="$2" task="$3" samples="$4"
  shift 4
  local t0 t1
  t0=$(now)
  "$EVALD" eval --dataset "$dataset" --task "$task" --samples "$samples" --jobs "$JOBS" "$@" \
    --json "$TMP/$name.json" > "$TMP/$name.txt" 2> "$TMP/$name.err" || true
  t1=$(now)
  python3 -c "print(f'{$t1 - $t0:.2f}')"
}

run_set() {
  local set="$1" dataset="$2" task="$3" samples="$4"
  local base def full
  base=$(grade "$set-off" "$dataset" "$task" "$samples" --formal off)
  def=$(grade "$set-default" "$dataset" "$task" "$samples")
  full=$(grade "$set-all" "$dataset" "$task" "$samples" --formal all --synth)
  python3 - "$set" "$base" "$def" "$full" "$TMP" <<'PY'
import collections, json, sys
name, base, default, full, tmp = sys.argv[1], *map(float, sys.argv[2:5]), sys.argv[5]
def load(which):
    return json.load(open(f"{tmp}/{name}-{which}.json"))
off, d, a = load("off"), load("default"), load("all")
n = len(off["samples"])
def checks(report):
    return sum(1 for s in report["samples"] if "formal" in s and not s.get("deduplicated"))
def outcomes(report):
    c = collections.Counter(s["formal"]["outcome"] for s in report["samples"] if "formal" in s)
    return " ".join(f"{k}:{v}" for k, v in sorted(c.items()))
same = all(x["verdict"] == y["verdict"] == z["verdict"]
           for x, y, z in zip(off["samples"], d["samples"], a["samples"]))
print(f"set={name} samples={n} simulations={off['summary']['simulations']}")
print(f"  simulation only (--formal off):   {base:8.1f} s   1.00x")
for label, secs, rep in (("default (--formal passes):       ", default, d),
                         ("--formal all --synth:            ", full, a)):
    k = checks(rep)
    per_check = (secs - base) / k if k else 0
    print(f"  {label}{secs:8.1f} s   {secs / base:.2f}x   +{(secs - base) / n * 1000:.1f} ms/sample, "
          f"{k} distinct checks (+{per_check * 1000:.0f} ms each)")
    print(f"      formal: {outcomes(rep)}; refuted passes {rep['summary'].get('formal_refuted', 0)}, "
          f"proven failures {rep['summary'].get('formal_proven_failures', 0)}")
print(f"  simulation letters identical in all three: {same}")
PY
}

echo "cross-check cost, $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ), jobs=$JOBS"
run_set builtin datasets/builtin spec-to-rtl datasets/builtin/samples_spec-to-rtl.jsonl
if [ -d "$BENCHMARK/dataset_spec-to-rtl" ]; then
  python3 bench/make_sample_set.py --benchmark "$BENCHMARK" --set large --n "$N" \
    --problems "$PROBLEMS" --out "$TMP/large.jsonl"
  run_set references+mutants "$BENCHMARK" spec-to-rtl "$TMP/large.jsonl"
else
  echo "no verilog-eval checkout at $BENCHMARK: references + mutants skipped"
fi
