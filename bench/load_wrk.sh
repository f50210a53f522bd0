#!/usr/bin/env bash
# Load test of the daemon's result queries with wrk (loopback only): starts `evald serve` on a
# temporary store, grades the built-in samples once, then drives GET /v1/runs/{id},
# GET /v1/runs/{id}/samples and GET /v1/leaderboard. Prints requests/s and p99 latency per
# endpoint. Goals: >= 5000 req/s with p99 <= 20 ms for the built-in set; GET /v1/runs/{id} of a
# finished 156-problem run >= 10k req/s with p99 <= 10 ms (--dataset verilog-eval: the
# benchmark's references uploaded as the samples).
#   bench/load_wrk.sh [--duration 10] [--connections 32] [--threads 2]
#                     [--dataset builtin|verilog-eval] [--benchmark ../shared/verilog-eval]
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=10
CONNECTIONS=32
THREADS=2
DATASET=builtin
BENCHMARK=../shared/verilog-eval
source bench/args.sh
parse_args "DURATION CONNECTIONS THREADS DATASET BENCHMARK" "$@"
command -v wrk >/dev/null || { echo "wrk is not installed (scripts/install-deps.sh)" >&2; exit 2; }
EVALD=${EVALD:-$(find_evald)}
TMP=$(mktemp -d)
source bench/daemon.sh
bench_token
trap 'stop_daemon; rm -rf "$TMP"' EXIT
start_daemon wrk --dataset "verilog-eval=$BENCHMARK"
python3 - "$DATASET" "$BENCHMARK" > "$TMP/req.json" <<'PY'
import json, os, sys
dataset, bench = sys.argv[1], sys.argv[2]
if dataset == "builtin":
    samples = open("datasets/builtin/samples_spec-to-rtl.jsonl").read()
else:  # every reference of the benchmark as a sample: a finished 156-problem run
    folder = os.path.join(bench, "dataset_spec-to-rtl")
    names = [n.strip() for n in open(os.path.join(folder, "problems.txt")) if n.strip()]
    samples = "".join(json.dumps({"problem": n, "code": open(os.path.join(folder, n + "_ref.sv"))
                                  .read().replace("RefModule", "TopModule")}) + "\n" for n in names)
print(json.dumps({"spec": {"dataset": dataset}, "samples_jsonl": samples}))
PY
RUN=$(api -X POST "$BASE/v1/runs" --data @"$TMP/req.json" |
  python3 -c "import json,sys; print(json.load(sys.stdin)['id'])")
for _ in $(seq 3000); do
  api "$BASE/v1/runs/$RUN" | grep -q '"state":"SUCCEEDED"' && break
  sleep 0.2
done

api "$BASE/v1/runs/$RUN" | python3 -c "
import json, sys
r = json.load(sys.stdin)
print(f\"run {r['id']}: {r['state']}, {len(r.get('problems', []))} problems, {r.get('samplesDone', r.get('samples_done'))} samples graded\")"
echo "evald daemon load test: wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s, $(nproc) CPUs, loopback"
for path in "/v1/runs/$RUN" "/v1/runs/$RUN/samples?page_size=20" "/v1/leaderboard?format=json" "/healthz"; do
  out=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency -H "Authorization: Bearer $TOKEN" "$BASE$path")
  rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  p99=$(echo "$out" | awk '$1 == "99%" {print $2}')
  errors=$(echo "$out" | grep -E "Non-2xx|Socket errors" || true)
  printf '  %-45s %10s req/s   p99 %8s  %s\n' "$path" "$rps" "$p99" "$errors"
done
