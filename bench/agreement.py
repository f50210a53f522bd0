#!/usr/bin/python3
"""The summary both benchmark benches print: samples/s of a benchmark's own procedure and of
evald (formal off, default), the ratios, and pass/fail agreement with every difference listed.

  agreement.py TMP COUNT T0 T1 T2 T3 KEY LABEL [NOTE]

TMP holds upstream.jsonl (one object a line: KEY, "index", "passed", optionally "result") and
evald's reports off.json and default.json; T0..T3 are the times around the three runs; KEY names
the upstream record's problem field ("problem", "task_id"); LABEL names the procedure.
"""
import json
import sys


def main():
    tmp, count = sys.argv[1], int(sys.argv[2])
    t0, t1, t2, t3 = map(float, sys.argv[3:7])
    key, label = sys.argv[7], sys.argv[8]
    note = f" ({sys.argv[9]})" if len(sys.argv) > 9 else ""
    up = {}
    for line in open(f"{tmp}/upstream.jsonl"):
        r = json.loads(line)
        up[(r[key], r["index"])] = r
    width = max(len(label), 40) + 1
    print(f"samples={count}{note}")
    print(f"  {label + ':':<{width}} {count/(t1-t0):.2f} samples/s ({t1-t0:.1f} s)")
    for name, flags, begin, end in (("off", "evald eval --formal off:", t1, t2),
                                    ("default", "evald eval (default, formal on passes):", t2, t3)):
        print(f"  {flags:<{width}} {count/(end-begin):.2f} samples/s ({end-begin:.1f} s)"
              f"  ratio {(t1-t0)/(end-begin):.2f}x")
    for name in ("off", "default"):
        report = json.load(open(f"{tmp}/{name}.json"))
        agree, differ = 0, []
        for s in report["samples"]:
            u = up.get((s["problem"], s.get("index", 0)), {})
            if bool(s.get("passed", False)) == bool(u.get("passed", False)):
                agree += 1
            else:
                said = u.get("result", f"passed={u.get('passed')}")
                differ.append((s["problem"], s.get("index", 0), said, s["verdict"],
                               s.get("detail", "")[:110]))
        print(f"  pass/fail agreement with {label} ({name}): {agree}/{len(report['samples'])}")
        for d in differ:
            print(f"    {d[0]}#{d[1]}: upstream '{d[2]}', evald {d[3]}: {d[4]}")
        if name == "default":
            refuted = sum(1 for s in report["samples"] if s.get("cross_check") == "refuted")
            strict = sum(1 for s in report["samples"] if s.get("strict_passed"))
            print(f"  formal (default): {refuted} passes refuted by a replayed counterexample, "
                  f"{strict} strict passes")


if __name__ == "__main__":
    main()
