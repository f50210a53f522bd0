#!/usr/bin/env bash
# How close the per-problem CPU-time limit comes to cutting off a design that would have
# finished, and what a hanging design costs under it. Grades, twice in one run - under a fixed
# 5 s (--sim-timeout 5, the old floor) and under the derived limits (harness/calibration.h) -
# the references and their mutants (make_sample_set.py --set large), samples shaped like real
# completions (--set real), deliberately slow but correct variants (each reference with an idle
# loop of K steps on every clock edge) and a design that hangs on every fourth problem; prints,
# from each simulation's own CPU time against its problem's reference:
#   - the largest CPU ratio of a sample that finished, and the tightest margin to its limit;
#   - the samples that finished within 5 s but would be cut by the derived limit (the goal:
#     none but deliberately slow variants), and every letter that changed between the two;
#   - the CPU the hanging designs cost, and what they would under the formula before (20x +
#     2 s in whole seconds, at least 5 s).
#   bench/hang_limit_margin.sh [--benchmark DIR] [--n 20] [--problems 0] [--jobs 2]
#                              [--sets "large real"]
set -euo pipefail
cd "$(dirname "$0")/.."
BENCHMARK=../shared/verilog-eval
N=20
PROBLEMS=0
JOBS=2
SETS="large real"
source bench/args.sh
parse_args "BENCHMARK N PROBLEMS JOBS SETS" "$@"
EVALD=${EVALD:-$(find_evald)}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

for set in $SETS; do
  python3 bench/make_sample_set.py --benchmark "$BENCHMARK" --set "$set" --n "$N" \
    --problems "$PROBLEMS" --out "$TMP/$set.jsonl"
  cat "$TMP/$set.jsonl" >> "$TMP/sets.jsonl"
done
python3 - "$TMP/sets.jsonl" "$BENCHMARK" "$TMP/all.jsonl" <<'PY'
import json, os, sys
sys.path.insert(0, "bench")
from make_sample_set import hang
lines = open(sys.argv[1]).read().splitlines()
problems = sorted({json.loads(l)["problem"] for l in lines})
with open(sys.argv[3], "w") as out:
    for l in lines:
        out.write(l + "\n")
    for name in problems:
        ref = os.path.join(sys.argv[2], "dataset_spec-to-rtl", name + "_ref.sv")
        code = open(ref).read().replace("RefModule", "TopModule")
        end = code.rfind("endmodule")
        if end < 0 or "posedge clk" not in code:
            continue
        for k in (100, 1000, 10000):
            spin = (f"  integer evald_spin_{k};\n  always @(posedge clk) for (evald_spin_{k} = 0; "
                    f"evald_spin_{k} < {k}; evald_spin_{k} = evald_spin_{k} + 1) ;\n")
            out.write(json.dumps({"problem": name, "code": code[:end] + spin + code[end:],
                                  "slow": k}) + "\n")
    # A design that hangs (a loop with no delay) on every fourth problem: what each costs.
    for name in problems[::4]:
        ref = os.path.join(sys.argv[2], "dataset_spec-to-rtl", name + "_ref.sv")
        code = open(ref).read().replace("RefModule", "TopModule")
        out.write(json.dumps({"problem": name, "code": hang(code), "slow": -1}) + "\n")
PY
echo "samples: $(wc -l < "$TMP/all.jsonl") ($SETS, and slow variants of the references)"

grade() {  # NAME [FLAGS...]
  local name=$1
  shift
  local t0 t1
  t0=$(date +%s.%N)
  "$EVALD" eval --dataset "$BENCHMARK" --samples "$TMP/all.jsonl" --jobs "$JOBS" --formal off \
    "$@" --json "$TMP/$name.json" > /dev/null 2> "$TMP/$name.log"
  t1=$(date +%s.%N)
  echo "$name: $(python3 -c "print(f'{$t1 - $t0:.1f}')") s"
}
grade fixed5 --sim-timeout 5
grade derived

python3 - "$TMP/all.jsonl" "$TMP/fixed5.json" "$TMP/derived.json" <<'PY'
import json, math, sys
slow = [json.loads(l).get("slow", 0) for l in open(sys.argv[1])]
a, b = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
ref_cpu = {c["problem"]: c.get("simulate_cpu_seconds", 0) for c in b["calibration"]}
limit_ms = {c["problem"]: c.get("simulate_limit_ms", 0) for c in b["calibration"]}
def key(s):
    return (s["problem"], s.get("index", 0))
bs = {key(s): s for s in b["samples"]}
worst, tightest, over, changed, hang_cpu = None, None, [], [], [0.0, 0.0]
old_limit_s, new_limit_s, by_problem = 0.0, 0.0, {}  # the limits the designs that hang under the derived ones cost
def old_formula_s(problem):  # before: 20x + 2 s in whole seconds, between 5 s and 30 s
    return min(max(math.ceil(ref_cpu[problem] * 20 + 2), 5), 30)
for s in a["samples"]:
    t = bs[key(s)]
    kind = slow[s.get("line", 1) - 1] if s.get("line") else 0
    cpu = s.get("simulate_cpu_seconds", 0)
    rc = max(ref_cpu.get(s["problem"], 0), 1e-3)
    if s["verdict"] == "T" and kind <= 0:
        hang_cpu[0] += cpu
    if t["verdict"] == "T" and kind <= 0:
        hang_cpu[1] += t.get("simulate_cpu_seconds", 0)
        if "CPU-time limit" in t.get("detail", ""):
            old_limit_s += old_formula_s(t["problem"])
            new_limit_s += limit_ms[t["problem"]] / 1000.0
            by_problem[t["problem"]] = by_problem.get(t["problem"], 0) + 1
    if s["verdict"] not in ("T", "S", "C", "?", "!") and cpu > 0 and kind >= 0:
        ratio = cpu / rc
        if not kind and (worst is None or ratio > worst[0]):
            worst = (ratio, s["problem"], cpu, limit_ms[s["problem"]] / 1000.0 / rc)
        margin = limit_ms[s["problem"]] / 1000.0 / cpu
        if not kind and (tightest is None or margin < tightest[0]):
            tightest = (margin, s["problem"], cpu, limit_ms[s["problem"]] / 1000.0)
        if cpu * 1000 > limit_ms.get(s["problem"], 0):
            over.append((s["problem"], kind, cpu, limit_ms[s["problem"]] / 1000.0, s["verdict"]))
    if s["verdict"] != t["verdict"]:
        changed.append((s["problem"], kind, s["verdict"], t["verdict"], cpu))
# The same design's CPU time in the two runs (both finished, at least 0.2 s): how much CPU time
# itself moves from run to run on this machine - what the margin has to cover.
moves = sorted(max(x, y) / min(x, y) for x, y in
               ((s.get("simulate_cpu_seconds", 0), bs[key(s)].get("simulate_cpu_seconds", 0))
                for s in a["samples"] if s["verdict"] == "." and bs[key(s)]["verdict"] == ".")
               if min(x, y) >= 0.2)
if moves:
    print(f"CPU time of the same passing design in the two runs ({len(moves)} at >= 0.2 s): "
          f"median {moves[len(moves) // 2]:.2f}x apart, max {moves[-1]:.2f}x")
limits = sorted(limit_ms.values())
print(f"derived limits: {len(limits)} problems, min {limits[0] / 1000:.1f} s, median "
      f"{limits[len(limits) // 2] / 1000:.1f} s, max {limits[-1] / 1000:.1f} s")
if worst:
    print(f"largest CPU ratio of a sample (not a slow variant) that finished: {worst[0]:.1f}x the "
          f"reference ({worst[1]}, {worst[2]:.3f} s); its limit there is {worst[3]:.0f}x "
          f"(margin {worst[3] / worst[0]:.1f}x)")
if tightest:
    print(f"tightest margin of a sample (not a slow variant) that finished: its limit is "
          f"{tightest[0]:.1f}x its CPU time ({tightest[1]}, {tightest[2]:.3f} s of "
          f"{tightest[3]:.1f} s)")
mutants_over = [o for o in over if not o[1]]
print(f"finished within 5 s but over the derived limit: {len(mutants_over)} samples, "
      f"{len(over) - len(mutants_over)} deliberately slow variants")
for p, k, cpu, lim, v in over:
    print(f"  {p} {'slow x' + str(k) if k else 'mutant'}: {cpu:.2f} s CPU > {lim:.1f} s ({v})")
print(f"letters changed between the two: {len(changed)}")
for p, k, x, y, cpu in changed[:40]:
    what = "hang" if k < 0 else f"slow x{k}" if k else ""
    print(f"  {p} {what} {x} -> {y} ({cpu:.2f} s CPU under 5 s)")
print("designs that hang (a delay-free loop on every fourth problem, and any sample): " + ", ".join(
    f"{p} x{c} ({limit_ms[p] / 1000:.1f} s, before {old_formula_s(p)} s)"
    for p, c in sorted(by_problem.items(), key=lambda x: -x[1] * limit_ms[x[0]])[:8]))
print(f"CPU spent by designs that hang: {hang_cpu[0]:.1f} s under a fixed 5 s, {hang_cpu[1]:.1f} s "
      f"under the derived limits")
print(f"the same hangs under the limit formula before (20x + 2 s, whole seconds, at least 5 s): "
      f"{old_limit_s:.1f} s of CPU limit, under the derived one {new_limit_s:.1f} s: "
      f"{old_limit_s / max(new_limit_s, 1e-9):.2f}x less")
PY
