#!/bin/sh
# A CI job's whole use of evald: submit a file of completions to a running daemon, wait for the
# run, and gate on it (thresholds, and no significant regression against a baseline run).
# docs/ci.md calls it from GitHub Actions and GitLab CI; tests/daemon_test.cc runs it.
#
#   EVALD_URL=http://evald:8080 EVALD_TOKEN=... SAMPLES=samples.jsonl \
#   [EVALD_BASELINE=RUN_ID] [EVALD_MIN='pass@1>=0.5'] [EVALD_DATASET=builtin] [EVALD_LABELS='{"model":"x"}'] \
#   [EVALD_BIN=evald] [EVALD_OUT=.] scripts/ci/evald-gate.sh
#
# Writes $EVALD_OUT/run-id, gate.xml (JUnit) and gate.md (a Markdown summary); exits as
# `evald gate` does: 0 pass, 1 the gate failed, 2 an error.
set -eu
: "${EVALD_URL:?set EVALD_URL}" "${EVALD_TOKEN:?set EVALD_TOKEN}" "${SAMPLES:?set SAMPLES}"
EVALD_BIN=${EVALD_BIN:-evald}
EVALD_OUT=${EVALD_OUT:-.}
EVALD_MIN=${EVALD_MIN:-pass@1>=0}
EVALD_LABELS=${EVALD_LABELS:-'{}'}
export EVALD_DATASET="${EVALD_DATASET:-builtin}" EVALD_LABELS
here=$(cd "$(dirname "$0")/../.." && pwd)

run=$(PYTHONPATH="$here/clients/python" python3 - <<'PY'
import json, os, sys
from evald_client import Client, EvaldError
evald = Client(os.environ["EVALD_URL"], token=os.environ["EVALD_TOKEN"])
spec = {"dataset": os.environ["EVALD_DATASET"], "labels": json.loads(os.environ["EVALD_LABELS"])}
try:
    run = evald.create_run(spec, samples_jsonl=open(os.environ["SAMPLES"]).read())
    run = evald.wait(run["id"], timeout=3600)
except (EvaldError, TimeoutError) as e:
    sys.exit(f"evald-gate: {e}")
if run["state"] != "SUCCEEDED":
    sys.exit(f"evald-gate: run {run['id']} {run['state']}: {run.get('state_reason', '')}")
print(run["id"])
PY
) || exit 2
echo "$run" > "$EVALD_OUT/run-id"
echo "evald-gate: run $run"
set -- --server "$EVALD_URL" --report "$run" --min "$EVALD_MIN" --strict \
  --junit "$EVALD_OUT/gate.xml" --markdown "$EVALD_OUT/gate.md"
if [ -n "${EVALD_BASELINE:-}" ]; then set -- "$@" --baseline "$EVALD_BASELINE"; fi
exec "$EVALD_BIN" gate "$@"
