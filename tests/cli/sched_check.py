#!/usr/bin/python3
"""sched_check.py BUNDLE SCHEMA: the sched stream of a recorded bundle against
the spec, independently of pmuvalidate.

Checks (each failure printed, exit 1):
  - every line after the header validates against SCHEMA (sched.schema.json);
  - config first, summary last, t_ns non-decreasing in between;
  - off: off_ns = wait_ns + runq_ns (wait_ns absent exactly for R);
  - thread: on + runq + sleep + blocked + other + unobserved = t_ns - start_ns;
  - every off/thread record names an incarnation of cohort.jsonl with its pid,
    the tid among its threads, and t_ns inside its life;
  - the summary's offs/threads/lost agree with the records.
Prints one line "ok offs=N threads=N" when all hold.
"""
import json
import sys

import jsonschema


def main():
    bundle, schema_path = sys.argv[1], sys.argv[2]
    schema = json.load(open(schema_path))
    validator = jsonschema.Draft202012Validator(schema)
    errs = []
    incs, tids = {}, {}
    for line in open(f"{bundle}/data/cohort.jsonl"):
        r = json.loads(line)
        if r.get("type") == "incarnation":
            incs[r["id"]] = {"pid": r["pid"], "start": r["start_ns"], "end": None}
        elif r.get("type") == "thread":
            tids.setdefault(r["inc"], set()).add(r["tid"])
        elif r.get("type") == "end":
            incs[r["inc"]]["end"] = r["end_ns"]
    lines = open(f"{bundle}/data/collectors/sched/sched.jsonl").read().splitlines()
    recs = [json.loads(x) for x in lines[1:]]
    if json.loads(lines[0]).get("stream") != "sched":
        errs.append("header does not name the sched stream")
    if not recs or recs[0]["type"] != "config" or recs[-1]["type"] != "summary":
        errs.append("config first and summary last")
    last = 0
    n = {"off": 0, "thread": 0, "lost": 0}
    for i, r in enumerate(recs, 2):
        for e in validator.iter_errors(r):
            errs.append(f"line {i}: schema: {e.message}")
        t = r.get("t_ns")
        if t is not None:
            if t < last:
                errs.append(f"line {i}: t_ns {t} before {last}")
            last = t
        ty = r["type"]
        if ty == "loss":
            n["lost"] += r["lost"]
        if ty not in ("off", "thread"):
            continue
        n[ty] += 1
        inc = incs.get(r["inc"])
        if not inc or inc["pid"] != r["pid"] or r["tid"] not in tids.get(r["inc"], ()):
            errs.append(f"line {i}: {r['inc']} pid {r['pid']} tid {r['tid']} is no cohort thread")
        elif t < inc["start"] or (inc["end"] is not None and t > inc["end"]):
            errs.append(f"line {i}: t_ns {t} outside {r['inc']}'s life")
        if ty == "off":
            wait = r.get("wait_ns")
            if (wait is None) != (r["state"] == "R"):
                errs.append(f"line {i}: wait_ns present for R or absent otherwise")
            if (wait or 0) + r["runq_ns"] != r["off_ns"]:
                errs.append(f"line {i}: wait_ns + runq_ns != off_ns")
        else:
            s = sum(r[k] for k in ("on_cpu_ns", "runq_ns", "sleep_ns", "blocked_ns", "other_ns", "unobserved_ns"))
            if s != r["t_ns"] - r["start_ns"]:
                errs.append(f"line {i}: totals {s} != t_ns - start_ns {r['t_ns'] - r['start_ns']}")
    sm = recs[-1]
    if sm.get("offs") != n["off"] or sm.get("threads") != n["thread"] or sm.get("lost") != n["lost"]:
        errs.append(f"summary {sm} disagrees with the records {n}")
    for e in errs[:20]:
        print(e)
    if errs:
        sys.exit(1)
    print(f"ok offs={n['off']} threads={n['thread']}")


main()
