#!/usr/bin/python3
"""alloc_check.py BUNDLE SCHEMA: the alloc stream of BUNDLE against the
schema (every record), in t_ns order, its samples and frees attributed to
incarnations of cohort.jsonl, free records naming earlier samples of their
incarnation, the inc records' sums equal to their samples' (est_bytes,
samples, live = samples not freed) and the summary's to the stream's.
Prints "ok" or the first problems, one a line.

alloc_check.py --sites BUNDLE: the functions the samples' call chains pass
through, from the sampling collector's maps.jsonl and the ELF symbols (nm)
of the mapped files, one "FUNCTION COUNT" a line (samples whose chain has it).

alloc_check.py --est BUNDLE INC: that incarnation's inc record's
"est_bytes live_est_bytes samples exited"."""
import bisect
import json
import subprocess
import sys


def records(b):
    for line in open(f"{b}/data/collectors/alloc/alloc.jsonl"):
        o = json.loads(line)
        if o.get("type") != "header":
            yield o


def check(b, schema):
    import jsonschema
    s = json.load(open(schema))
    bad = []
    incs = set()
    for line in open(f"{b}/data/cohort.jsonl"):
        o = json.loads(line)
        if o.get("type") == "incarnation":
            incs.add(o["id"])
    last = 0
    samples, freed, acc = {}, set(), {}
    summ = None
    for o in records(b):
        errs = list(jsonschema.Draft202012Validator(s).iter_errors(o))
        if errs:
            bad.append(f"schema: {o.get('type')}: {errs[0].message}")
        t = o.get("t_ns")
        if t is not None:
            if t < last:
                bad.append(f"time order: {o}")
            last = t
        ty = o["type"]
        if ty in ("sample", "free", "inc") and o["inc"] not in incs:
            bad.append(f"{ty} of an incarnation not in cohort.jsonl: {o['inc']}")
        if ty == "sample":
            samples[o["seq"]] = o
            a = acc.setdefault(o["inc"], [0, 0, 0, 0])
            a[0] += 1
            a[1] += o["est_bytes"]
        elif ty == "free":
            sm = samples.get(o["sample_seq"])
            if not sm or sm["inc"] != o["inc"] or o["sample_seq"] in freed:
                bad.append(f"free of no live sample of its incarnation: {o}")
            freed.add(o["sample_seq"])
        elif ty == "inc":
            a = acc.get(o["inc"], [0, 0])
            live = [x for q, x in samples.items() if x["inc"] == o["inc"] and q not in freed and "addr" in x]
            want = (a[0], a[1], len(live), sum(x["est_bytes"] for x in live))
            got = (o["samples"], o["est_bytes"], o["live_samples"], o["live_est_bytes"])
            if want != got:
                bad.append(f"inc {o['inc']}: samples, est_bytes, live_samples, live_est_bytes {got}, from its samples {want}")
        elif ty == "summary":
            summ = o
    if not summ:
        bad.append("no summary")
    elif (summ["samples"], summ["frees"], summ["est_bytes"]) != (len(samples), len(freed), sum(x["est_bytes"] for x in samples.values())):
        bad.append(f"summary {summ} disagrees with the stream")
    print("\n".join(bad[:10]) if bad else "ok")


def sites(b):
    maps = {}
    for line in open(f"{b}/data/collectors/sampling/maps.jsonl"):
        m = json.loads(line)
        if m.get("type") == "map" and m.get("path", "").startswith("/"):
            maps.setdefault(m["inc"], []).append((int(m["start"], 16), int(m["end"], 16), int(m["pgoff"], 16), m["path"]))
    syms = {}

    def symtab(path):
        if path not in syms:
            out = subprocess.run(["nm", "--defined-only", path], capture_output=True, text=True).stdout
            v = sorted((int(a, 16), n.split(".")[0]) for a, t, n in (l.split()[:3] for l in out.splitlines() if len(l.split()) >= 3) if t in "tTwW")
            syms[path] = ([a for a, _ in v], [n for _, n in v])
        return syms[path]

    count = {}
    for o in records(b):
        if o["type"] != "sample" or "chain" not in o:
            continue
        seen = set()
        for pc in (int(x, 16) for x in o["chain"].split()):
            for s, e, off, path in maps.get(o["inc"], ()):
                if s <= pc < e:
                    addrs, names = symtab(path)
                    # an executable's text: file offset == link address (ET_DYN as gcc links it)
                    i = bisect.bisect_right(addrs, pc - s + off) - 1
                    if i >= 0:
                        seen.add(names[i])
                    break
        for n in seen:
            count[n] = count.get(n, 0) + 1
    for n, c in sorted(count.items()):
        print(n, c)


if sys.argv[1] == "--sites":
    sites(sys.argv[2])
elif sys.argv[1] == "--est":
    for o in records(sys.argv[2]):
        if o["type"] == "inc" and o["inc"] == sys.argv[3]:
            print(o["est_bytes"], o["live_est_bytes"], o["samples"], str(o["exited"]).lower())
else:
    check(sys.argv[1], sys.argv[2])
