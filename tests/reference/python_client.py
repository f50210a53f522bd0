"""clients/python against a live daemon: submit, poll, report, compare, leaderboard, errors.

Usage: python3 python_client.py BASE_URL TOKEN SAMPLES_JSONL. Prints one JSON object with what
each call returned (the test checks it); exit status 1 when a call raised unexpectedly.
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "clients", "python"))
from evald_client import Client, EvaldError  # noqa: E402

base_url, token, samples_path = sys.argv[1:4]
evald = Client(base_url, token=token)
samples = open(samples_path).read()
out = {}
step = ""
try:
    step = "openapi"
    out["openapi_version"] = evald.openapi()["openapi"]
    step = "create and wait"
    ids = [evald.create_run({"dataset": "builtin", "labels": {"model": f"m{i}"}},
                            samples_jsonl=samples)["id"] for i in range(2)]
    runs = [evald.wait(i, timeout=300) for i in ids]
    out["states"] = [r["state"] for r in runs]
    out["samples_done"] = [r["samples_done"] for r in runs]
    step = "samples"
    out["samples_listed"] = sum(1 for _ in evald.samples(ids[0], page_size=7))
    step = "report"
    out["report_problems"] = len(evald.report(ids[0])["problems"])
    step = "compare"
    comparison = evald.compare(ids[0], ids[1])
    out["shared_problems"] = comparison["shared_problems"]
    step = "leaderboard"
    board = evald.leaderboard()
    out["leaderboard_rows"] = len(board["rows"])
    out["leaderboard_markdown"] = evald.leaderboard(format="markdown")
    out["runs_labelled_m1"] = [r["id"] for r in evald.runs(label="model=m1")] == [ids[1]]
    step = "errors"
    try:
        evald.run("no-such-run")
    except EvaldError as e:
        out["missing_status"] = e.status
    step = "delete"
    out["deleted_samples"] = int(evald.delete_run(ids[1])["samples_deleted"])
    print(json.dumps(out))
except Exception as e:  # noqa: BLE001 - the test prints what failed
    print(json.dumps({"failed": step, "error": repr(e)}))
    sys.exit(1)
