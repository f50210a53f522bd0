#!/usr/bin/env bash
# RTLLM 2.0 graded by evald against the benchmark's own rule run the plain way (each sample
# compiled with `iverilog -g2012` beside its testbench and data files in a copy of the design's
# folder, simulated for at most 8 s, "pass"/"Pass" in the output: tests/upstream/
# rtllm_upstream_rule.py, with the same number of workers), on the same samples, in one run:
# samples/s of each and the ratio, and every sample whose pass/fail differs, with evald's
# verdict and detail, so that each difference can be justified.
#   bench/rtllm_throughput.sh [--checkout DIR] [--samples FILE] [--jobs 2]
# Samples: FILE (one JSON object a line, "problem" and "code", e.g. RTLLM's own LLM outputs),
# or by default each reference (its top renamed to the module the testbench instantiates) and
# the text mutants of bench/make_sample_set.py applied to it, each once. Needs a build
# (scripts/setup.sh) and /usr/bin/python3.
set -euo pipefail
cd "$(dirname "$0")/.."
CHECKOUT=../shared/rtllm2
SAMPLES=""
JOBS=2
source bench/args.sh
parse_args "CHECKOUT SAMPLES JOBS" "$@"
EVALD=${EVALD:-$(find_evald)}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

if [ -n "$SAMPLES" ]; then
  cp "$SAMPLES" "$TMP/samples.jsonl"
else
  /usr/bin/python3 - "$CHECKOUT" "$TMP" <<'PY'
import importlib.util, json, os, re, sys
root, out = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("make_sample_set", "bench/make_sample_set.py")
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
sys.path.insert(0, "tests/upstream")
import rtllm_upstream_rule as rule
declared = lambda text: re.findall(r"^\s*module\s+(\w+)", text, re.M)
with open(f"{out}/samples.jsonl", "w") as sf:
    for name, folder in sorted(rule.design_folders(root).items()):
        ref_file = [f for f in os.listdir(folder) if f.startswith("verified_")][0]
        ref = open(os.path.join(folder, ref_file), errors="replace").read()
        tb = open(os.path.join(folder, "testbench.v"), errors="replace").read()
        mods = declared(ref)
        # the module the testbench instantiates, among the names the files give (as evald)
        dut = [c for c in set(mods + [name]) if re.search(r"\b%s\b" % c, tb) and c not in declared(tb)][0]
        top = "verified_" + dut if "verified_" + dut in mods else (dut if dut in mods else mods[0])
        body = re.sub(r"\b%s\b" % top, dut, ref)
        seen = {body}
        sf.write(json.dumps({"problem": name, "code": body}) + "\n")
        for _, mutate in m.MUTATIONS:
            mutant = mutate(body)
            if mutant not in seen:
                seen.add(mutant)
                sf.write(json.dumps({"problem": name, "code": mutant}) + "\n")
PY
fi
COUNT=$(wc -l < "$TMP/samples.jsonl")
now() { date +%s.%N; }
t0=$(now)
/usr/bin/python3 tests/upstream/rtllm_upstream_rule.py "$CHECKOUT" "$TMP/samples.jsonl" "$JOBS" \
  > "$TMP/upstream.jsonl"
t1=$(now)
grade() {  # NAME [FLAGS...]: evald eval on the samples; its log printed when it fails
  local name=$1
  shift
  "$EVALD" eval --dataset "$CHECKOUT" --task rtllm2 --samples "$TMP/samples.jsonl" \
    --jobs "$JOBS" "$@" --json "$TMP/$name.json" > /dev/null 2> "$TMP/$name-err.txt" ||
    { tail -20 "$TMP/$name-err.txt" >&2; exit 1; }
}
grade off --formal off
t2=$(now)
grade default
t3=$(now)
/usr/bin/python3 bench/agreement.py "$TMP" "$COUNT" "$t0" "$t1" "$t2" "$t3" problem \
  "upstream's rule with Icarus (plain, no sandbox)"
