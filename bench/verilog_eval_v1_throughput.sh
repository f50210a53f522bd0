#!/usr/bin/env bash
# VerilogEval v1 graded by evald against upstream's own harness (its check_correctness, Icarus,
# its pass rule: the first "Mismatches: N in M samples" in the output, N = 0), on the same
# samples, in one run: samples/s of each and the ratio, and where their pass/fail differs (each
# such sample with evald's verdict and detail, so that every difference can be justified).
#   bench/verilog_eval_v1_throughput.sh [--checkout DIR] [--task verilog-eval-v1-human|-machine]
#                                       [--problems N] [--jobs 2]
# Samples per problem: upstream's canonical solution and the text mutants of
# bench/make_sample_set.py applied to it (operators, constants, clock edge, blocking, an early
# $finish, a syntax error), each once. Needs a build (scripts/setup.sh) and /usr/bin/python3.
set -euo pipefail
cd "$(dirname "$0")/.."
CHECKOUT=../shared/verilog-eval-v1
TASK=verilog-eval-v1-human
PROBLEMS=0
JOBS=2
source bench/args.sh
parse_args "CHECKOUT TASK PROBLEMS JOBS" "$@"
EVALD=${EVALD:-$(find_evald)}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
case "$TASK" in
  verilog-eval-v1-human) FILE="$CHECKOUT/data/VerilogEval_Human.jsonl" ;;
  verilog-eval-v1-machine) FILE="$CHECKOUT/data/VerilogEval_Machine.jsonl" ;;
  *) echo "unknown --task $TASK" >&2; exit 2 ;;
esac

/usr/bin/python3 - "$FILE" "$PROBLEMS" "$TMP" <<'PY'
import importlib.util, json, sys
problem_file, limit, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
spec = importlib.util.spec_from_file_location("make_sample_set", "bench/make_sample_set.py")
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
problems = [json.loads(l) for l in open(problem_file) if l.strip()]
if limit: problems = problems[:limit]
with open(f"{out}/problems.jsonl", "w") as pf, open(f"{out}/samples.jsonl", "w") as sf:
    for p in problems:
        pf.write(json.dumps(p) + "\n")
        body = p["canonical_solution"]
        seen = {body}
        sf.write(json.dumps({"task_id": p["task_id"], "completion": body}) + "\n")
        for _, mutate in m.MUTATIONS:
            mutant = mutate(body)
            if mutant not in seen:
                seen.add(mutant)
                sf.write(json.dumps({"task_id": p["task_id"], "completion": mutant}) + "\n")
PY
COUNT=$(wc -l < "$TMP/samples.jsonl")
now() { date +%s.%N; }
t0=$(now)
/usr/bin/python3 tests/upstream/verilog_eval_v1_upstream.py "$CHECKOUT" "$TMP/problems.jsonl" \
  "$TMP/samples.jsonl" > "$TMP/upstream.jsonl"
t1=$(now)
"$EVALD" eval --dataset "$CHECKOUT" --task "$TASK" --samples "$TMP/samples.jsonl" --jobs "$JOBS" \
  --formal off --json "$TMP/off.json" > /dev/null 2> "$TMP/off-err.txt"
t2=$(now)
"$EVALD" eval --dataset "$CHECKOUT" --task "$TASK" --samples "$TMP/samples.jsonl" --jobs "$JOBS" \
  --json "$TMP/default.json" > /dev/null 2> "$TMP/default-err.txt"
t3=$(now)
/usr/bin/python3 bench/agreement.py "$TMP" "$COUNT" "$t0" "$t1" "$t2" "$t3" task_id \
  "upstream harness (sequential, no sandbox)" "canonical solutions and their mutants"
