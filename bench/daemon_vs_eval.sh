#!/usr/bin/env bash
# The daemon against `evald eval` on the same samples, in the same run: wall time of each (fresh
# stores, so both calibrate and simulate everything) and whether every verdict is equal.
# Goal: the daemon within 1.15x of `evald eval` (both go through the one run pipeline; the
# daemon also writes every graded sample to its store).
#   bench/daemon_vs_eval.sh [--samples FILE.jsonl] [--benchmark DIR] [--n 25] [--problems N]
#                           [--jobs 2]
# Without --samples: references + mutants of every problem, n per problem (bench/make_sample_set.py).
set -euo pipefail
cd "$(dirname "$0")/.."
SAMPLES=""
BENCHMARK=../shared/verilog-eval
N=25
PROBLEMS=0
JOBS=2
source bench/args.sh
parse_args "SAMPLES BENCHMARK N PROBLEMS JOBS" "$@"
EVALD=${EVALD:-$(find_evald)}
TMP=$(mktemp -d)
if [ -z "$SAMPLES" ]; then
  SAMPLES="$TMP/samples.jsonl"
  python3 bench/make_sample_set.py --benchmark "$BENCHMARK" --set large --n "$N" \
    --problems "$PROBLEMS" --out "$SAMPLES"
fi
source bench/daemon.sh
bench_token
trap 'stop_daemon; rm -rf "$TMP"' EXIT
now() { date +%s.%N; }

echo "daemon vs evald eval, $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ), $(wc -l < "$SAMPLES") samples, --jobs $JOBS"
t0=$(now)
"$EVALD" eval --dataset "$BENCHMARK" --task spec-to-rtl --samples "$SAMPLES" --jobs "$JOBS" \
  --json "$TMP/eval.json" > /dev/null 2> "$TMP/eval.log"
t1=$(now)

start_daemon daemon --jobs "$JOBS" --dataset "verilog-eval=$BENCHMARK"
python3 -c "
import json, sys
print(json.dumps({'spec': {'dataset': 'verilog-eval'}, 'samples_jsonl': open(sys.argv[1]).read()}))
" "$SAMPLES" > "$TMP/req.json"
t2=$(now)
RUN=$(api -X POST "$BASE/v1/runs" --data @"$TMP/req.json" |
  python3 -c "import json,sys; print(json.load(sys.stdin)['id'])")
while ! api "$BASE/v1/runs/$RUN" |
    grep -qE '"state":"(SUCCEEDED|FAILED|CANCELLED)"'; do
  sleep 0.2
done
t3=$(now)
api "$BASE/v1/runs/$RUN/report" > "$TMP/daemon.json"

python3 - "$TMP/eval.json" "$TMP/daemon.json" "$t0" "$t1" "$t2" "$t3" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
t0, t1, t2, t3 = map(float, sys.argv[3:7])
key = lambda s: (s["problem"], s.get("index", 0))
va = {key(s): (s["verdict"], s.get("mismatches", 0)) for s in a["samples"]}
vb = {key(s): (s["verdict"], s.get("mismatches", 0)) for s in b["samples"]}
diff = [k for k in va if va[k] != vb.get(k)]
print(f"  evald eval: {t1 - t0:7.1f} s   ({a['summary'].get('simulations', 0)} simulations)")
print(f"  daemon:     {t3 - t2:7.1f} s   (POST to SUCCEEDED)")
print(f"  ratio daemon/eval: {(t3 - t2) / (t1 - t0):.2f}x   (goal <= 1.15x)")
print(f"  verdicts: {len(va)} vs {len(vb)} samples, {len(diff)} differ" +
      (f" (first: {diff[0]} {va[diff[0]]} vs {vb.get(diff[0])})" if diff else ""))
PY
