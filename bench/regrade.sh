#!/usr/bin/env bash
# Re-grading is a lookup: the same samples graded a second time, against the first time, in the
# same run - by `evald eval --data STORE`, and by the daemon (a second run under the same
# checkpoint, and one under another checkpoint; the daemon's own created->finished times), with
# uploaded samples and with samples drawn from a recorded checkpoint.
# Every second run must give the first one's verdicts. Goal: every re-grade >= 50x faster
# than the first grading.
#   bench/regrade.sh [--samples FILE.jsonl] [--benchmark DIR] [--n 5] [--problems 40]
# Without --samples: references + mutants of the first 40 problems, 5 each (200 samples).
set -euo pipefail
cd "$(dirname "$0")/.."
SAMPLES=""
BENCHMARK=../shared/verilog-eval
N=5
PROBLEMS=40
source bench/args.sh
parse_args "SAMPLES BENCHMARK N PROBLEMS" "$@"
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

echo "re-grading, $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ), $(wc -l < "$SAMPLES") samples"
eval_once() {
  local t0 t1
  t0=$(now)
  "$EVALD" eval --dataset "$BENCHMARK" --task spec-to-rtl --samples "$SAMPLES" \
    --data "$TMP/eval-store" --json "$TMP/$1.json" > /dev/null 2> "$TMP/$1.log"
  t1=$(now)
  python3 -c "print($t1 - $t0)" > "$TMP/$1.seconds"
}
eval_once eval-first
eval_once eval-again

checkpoint() {
  api -X POST "$BASE/v1/checkpoints" --data "{\"name\": \"$1\"}" |
    python3 -c "import json,sys; print(json.load(sys.stdin)['id'])"
}
# A recorded checkpoint: its runs sample the completions from it (the generation cache answers
# a second run under the same checkpoint), then grade them.
recorded() {
  python3 -c "
import json, sys
print(json.dumps({'name': sys.argv[2], 'recorded_completions': open(sys.argv[1]).read()}))
" "$SAMPLES" "$1" > "$TMP/ck.json"
  api -X POST "$BASE/v1/checkpoints" --data @"$TMP/ck.json" |
    python3 -c "import json,sys; print(json.load(sys.stdin)['id'])"
}
daemon_run() {  # NAME CHECKPOINT [recorded]
  python3 -c "
import json, sys
spec = {'dataset': 'verilog-eval', 'checkpoint_id': sys.argv[2]}
lines = [json.loads(l) for l in open(sys.argv[1])]
if len(sys.argv) > 3:  # sampled from the checkpoint: n per problem of the problems in the file
    problems = list(dict.fromkeys(l['problem'] for l in lines))
    spec.update(problems=problems, sampling={'n': max(l['index'] for l in lines) + 1})
    print(json.dumps({'spec': spec}))
else:
    print(json.dumps({'spec': spec, 'samples_jsonl': open(sys.argv[1]).read()}))
" "$SAMPLES" "$2" ${3:-} > "$TMP/req.json"
  local run
  run=$(api -X POST "$BASE/v1/runs" --data @"$TMP/req.json" |
    python3 -c "import json,sys; print(json.load(sys.stdin)['id'])")
  while ! api "$BASE/v1/runs/$run" | grep -qE '"state":"(SUCCEEDED|FAILED|CANCELLED)"'; do
    sleep 0.05
  done
  api "$BASE/v1/runs/$run" > "$TMP/$1.run.json"
  api "$BASE/v1/runs/$run/report" > "$TMP/$1.json"
}
start_daemon uploads --dataset "verilog-eval=$BENCHMARK"  # a fresh store each time
CK_A=$(checkpoint bench-a)
CK_B=$(checkpoint bench-b)
daemon_run daemon-first "$CK_A"
daemon_run daemon-same "$CK_A"
daemon_run daemon-other "$CK_B"
start_daemon recorded --dataset "verilog-eval=$BENCHMARK"
REC_A=$(recorded recorded-a)
REC_B=$(recorded recorded-b)
daemon_run recorded-first "$REC_A" recorded
daemon_run recorded-same "$REC_A" recorded
daemon_run recorded-other "$REC_B" recorded

python3 - "$TMP" <<'PY'
import json, sys
d = sys.argv[1]
def verdicts(name):
    r = json.load(open(f"{d}/{name}.json"))
    return {(s["problem"], s.get("index", 0)): (s["verdict"], s.get("mismatches", 0),
            s.get("cross_check", "")) for s in r["samples"]}, r["summary"]
def server_seconds(name):
    r = json.load(open(f"{d}/{name}.run.json"))
    assert r["state"] == "SUCCEEDED", r.get("state_reason")
    return (int(r["finished_unix_ms"]) - int(r["created_unix_ms"])) / 1000
rows = [("evald eval --data", float(open(f"{d}/eval-first.seconds").read()), "eval-first",
         [("again", float(open(f"{d}/eval-again.seconds").read()), "eval-again")]),
        ("daemon", server_seconds("daemon-first"), "daemon-first",
         [("same checkpoint", server_seconds("daemon-same"), "daemon-same"),
          ("other checkpoint", server_seconds("daemon-other"), "daemon-other")]),
        ("daemon, sampled from a recorded checkpoint", server_seconds("recorded-first"),
         "recorded-first",
         [("same checkpoint", server_seconds("recorded-same"), "recorded-same"),
          ("other checkpoint", server_seconds("recorded-other"), "recorded-other")])]
ok = True
for label, first, first_name, agains in rows:
    base, summary = verdicts(first_name)
    print(f"  {label}: first {first:6.2f} s ({summary.get('simulations', 0)} simulations)")
    for what, secs, name in agains:
        v, s = verdicts(name)
        differ = sum(1 for k in base if base[k] != v.get(k))
        ratio = first / max(secs, 1e-3)
        ok &= ratio >= 50 and differ == 0
        print(f"    {what:17s} {secs:6.3f} s  {ratio:6.1f}x (goal >= 50x)  "
              f"{s.get('simulations', 0)} simulations, {s.get('cache_hits', 0)} cache hits, "
              f"{differ} verdicts differ")
print("  goal met" if ok else "  goal NOT met")
PY
