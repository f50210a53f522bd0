#!/usr/bin/env bash
# What grading through Slurm costs over grading locally, measured in one run on the same samples:
# `evald eval` with the local executor (the baseline), then with --executor slurm on a cluster
# (SLURM_CONF's, else a single-node one this script starts: scripts/slurm_local.sh, root only)
# at several array sizes. Prints wall seconds, the ratio to the baseline, the dispatch overhead
# per grading job and per array task, and the per-sample costs docs/scale-out.md's model uses.
#   bench/slurm_dispatch.sh [--benchmark DIR] [--problems N] [--n 20] [--tasks "1 4 16"]
#                           [--formal off|passes]
set -euo pipefail
cd "$(dirname "$0")/.."
BENCHMARK=../shared/verilog-eval
PROBLEMS=40
N=5
TASKS="1 4 16"
FORMAL=off
source bench/args.sh
parse_args "BENCHMARK PROBLEMS N TASKS FORMAL" "$@"
EVALD=${EVALD:-$(find_evald)}
EVALD=$(realpath "$EVALD")
TMP=$(mktemp -d)
CLUSTER=""
cleanup() {
  [ -n "$CLUSTER" ] && scripts/slurm_local.sh stop "$CLUSTER" >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap cleanup EXIT
if [ -z "${SLURM_CONF:-}" ]; then
  CLUSTER="$TMP/cluster"
  eval "$(scripts/slurm_local.sh start "$CLUSTER")"
  export SLURM_CONF
fi

if [ -d "$BENCHMARK/dataset_spec-to-rtl" ]; then
  DATASET="$BENCHMARK"
  python3 bench/make_sample_set.py --benchmark "$BENCHMARK" --set large --n "$N" \
    --problems "$PROBLEMS" --out "$TMP/samples.jsonl"
else
  echo "no verilog-eval checkout at $BENCHMARK: the built-in set"
  DATASET=datasets/builtin
  cp datasets/builtin/samples_spec-to-rtl.jsonl "$TMP/samples.jsonl"
fi

now() { date +%s.%N; }
# grade NAME FLAGS...: prints the wall seconds; leaves NAME.json and NAME.err
grade() {
  local name="$1" t0 t1
  shift
  t0=$(now)
  "$EVALD" eval --dataset "$DATASET" --samples "$TMP/samples.jsonl" --formal "$FORMAL" "$@" \
    --json "$TMP/$name.json" > /dev/null 2> "$TMP/$name.err" || { cat "$TMP/$name.err" >&2; exit 1; }
  t1=$(now)
  python3 -c "print(f'{$t1 - $t0:.2f}')"
}

echo "slurm dispatch, $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ), $(sinfo -h -o '%D node(s) %c CPUs')"
base=$(grade local --jobs "$(nproc)")
results="local:$base"
for t in $TASKS; do
  s=$(grade "slurm$t" --executor slurm --spool "$TMP/spool" --slurm-tasks "$t" \
      --slurm-jobs-per-task 1 --slurm-poll-ms 200)
  results="$results slurm$t:$s"
done
python3 - "$TMP" "$results" <<'PY'
import json, re, sys
tmp, results = sys.argv[1], dict(x.split(":") for x in sys.argv[2].split())
local = json.load(open(f"{tmp}/local.json"))
n = len(local["samples"])
base = float(results.pop("local"))
sims = local["summary"]["simulations"]
print(f"samples={n} simulations(local, incl. calibration)={sims}")
print(f"  local executor:            {base:8.2f} s   1.00x   {base / max(1, sims) * 1000:.0f} ms/simulation")
for name, secs in results.items():
    secs = float(secs)
    rep = json.load(open(f"{tmp}/{name}.json"))
    same = [s["verdict"] for s in rep["samples"]] == [s["verdict"] for s in local["samples"]]
    log = open(f"{tmp}/{name}.err").read()
    m = re.search(r"(\d+) grading job\(s\) sent in (\d+) array\(s\) of (\d+) task\(s\)", log)
    jobs, arrays, tasks = map(int, m.groups()) if m else (0, 0, 0)
    extra = secs - base
    print(f"  slurm, {tasks:3d} task(s):      {secs:8.2f} s   {secs / base:.2f}x   "
          f"+{extra / max(1, jobs) * 1000:.0f} ms/job, +{extra / max(1, tasks):.2f} s/task "
          f"({jobs} jobs, {arrays} array(s)); verdicts identical: {same}")
PY
