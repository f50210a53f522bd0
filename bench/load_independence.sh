#!/usr/bin/env bash
# Same samples, same letters, on a quiet and on a loaded machine: grades the slowest problems'
# references and mutants twice with `evald eval`, once alone and once beside busy loops that
# compete for every CPU and loops that start short-lived programs without pause (what a build
# or another grader does: the load that made a tick-sampled CPU timer charge a simulation time
# it did not use), and counts the letters that changed (the goal is none: simulation limits are
# CPU time, not wall time). Prints each changed sample with its CPU and wall times.
#   bench/load_independence.sh [--benchmark DIR] [--problems A,B,..] [--n 20] [--jobs 2]
#                              [--busy 2] [--forking 1]
set -euo pipefail
cd "$(dirname "$0")/.."
BENCHMARK=../shared/verilog-eval
PROBLEMS=Prob144_conwaylife,Prob124_rule110,Prob108_rule90,Prob141_count_clock
N=20
JOBS=2
BUSY=2
FORKING=1
source bench/args.sh
parse_args "BENCHMARK PROBLEMS N JOBS BUSY FORKING" "$@"
BENCH="$BENCHMARK"
EVALD=${EVALD:-$(find_evald)}
TMP=$(mktemp -d)
busy_pids=()
cleanup() {
  for p in "${busy_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT

python3 bench/make_sample_set.py --benchmark "$BENCH" --set large --n "$N" --out "$TMP/all.jsonl"
python3 - "$PROBLEMS" "$TMP/all.jsonl" "$TMP/slow.jsonl" "$BENCH" <<'PY'
import json, os, sys
keep = set(sys.argv[1].split(","))
with open(sys.argv[2]) as src, open(sys.argv[3], "w") as out:
    for line in src:
        if json.loads(line)["problem"] in keep:
            out.write(line)
    # Right but slow designs, the case a wall-clock limit gets wrong under load: each reference
    # with an idle loop of K steps on every clock edge, K chosen so that some stay well inside
    # the limit and some go past it.
    for name in sorted(keep):
        ref = os.path.join(sys.argv[4], "dataset_spec-to-rtl", name + "_ref.sv")
        code = open(ref).read().replace("RefModule", "TopModule")
        end = code.rfind("endmodule")
        if end < 0 or "clk" not in code:
            continue
        for k in (1000, 10000, 100000):
            spin = (f"  integer evald_spin_{k};\n  always @(posedge clk) for (evald_spin_{k} = 0; "
                    f"evald_spin_{k} < {k}; evald_spin_{k} = evald_spin_{k} + 1) ;\n")
            out.write(json.dumps({"problem": name, "code": code[:end] + spin + code[end:]}) + "\n")
PY
echo "samples: $(wc -l < "$TMP/slow.jsonl") of $PROBLEMS"

# evald exits 1 when a sample could not be run ('!': the wall-clock backstop ended it twice, the
# load's doing, not the design's); its report still holds every sample, '!' counted as a change.
grade() {
  "$EVALD" eval --dataset "$BENCH" --samples "$TMP/slow.jsonl" --jobs "$JOBS" \
    --json "$TMP/$1.json" > /dev/null 2> "$TMP/$1.log" || true
  if [ ! -s "$TMP/$1.json" ]; then
    echo "evald eval wrote no report ($1); its last messages:" >&2
    tail -n 20 "$TMP/$1.log" >&2
    exit 1
  fi
}
t0=$(date +%s)
grade quiet
t1=$(date +%s)
for _ in $(seq "$BUSY"); do (while :; do :; done) & busy_pids+=($!); done
for _ in $(seq "$FORKING"); do (while :; do /bin/true; done) & busy_pids+=($!); done
grade loaded
t2=$(date +%s)
echo "quiet: $((t1 - t0)) s; with $BUSY busy and $FORKING forking loops: $((t2 - t1)) s"

python3 - "$TMP/quiet.json" "$TMP/loaded.json" <<'PY'
import json, sys
def letters(path):
    r = json.load(open(path))
    return {(s["problem"], s.get("index", 0)): s for s in r.get("samples", [])}
a, b = letters(sys.argv[1]), letters(sys.argv[2])
changed = [k for k in a if k in b and a[k]["verdict"] != b[k]["verdict"]]
for k in changed:
    print(f"  {k[0]} #{k[1]}: {a[k]['verdict']} -> {b[k]['verdict']}  ({b[k].get('detail', '')})")
ts = sum(1 for s in a.values() if s["verdict"] == "T")
unrun = sum(1 for k in changed if b[k]["verdict"] == "!")
print(f"load independence: {len(a)} samples ({ts} T when quiet), {len(changed)} letters changed"
      f" ({unrun} of them '!', not run to a verdict under load)")
PY
