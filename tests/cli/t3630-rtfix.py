#!/usr/bin/env python3
"""Add the spec 1.8 runtime streams to a `mkfixture sampled` bundle (t3630).

The sampled fixture is one incarnation i1 (pid 7000, `hot`) from 1.000001 s
to its exit, with maps that name 0x55d0c4a01234 (hot_loop) and
0x55d0c4a013a8 (main) in /work/build/hot.  Added, with known answers:

  probes.jsonl  runtime pmu; marks startup-end at +50 ms and warmup-end at
                +80 ms; 10 requests (span "request" begun on tid 7000, ended
                on 7001, 2 ms each) with a child "work" (1 ms, parent the
                request, begun/ended on 7001), requests 0..9 ending one per
                10 ms from +20 ms; GC pauses of runtime pmu kind "young":
                1, 2, 3, 4 ms ending at +30, +60, +90, +120 ms; probe
                records, summary.
  alloc.jsonl   sample_bytes 524288; 6 samples of 4096 bytes at hot_loop
                (chain 0x55d0c4a01234 0x55d0c4a013a8), 2 of 256 bytes at
                main; est per spec 24.3; 4 freed; inc record, summary.

Options: --no-alloc (the alloc collector not requested), --no-probes.
"""
import json
import math
import os
import sys

ROOT = os.path.dirname(os.path.abspath(__file__)) + "/../.."


def units(stream):
    s = json.load(open(f"{ROOT}/bundle-spec/schema/{stream}.schema.json"))
    u = s["oneOf"][0]["properties"]["units"]["properties"]
    return {k: v["const"] for k, v in u.items()}


def header(stream):
    return {"type": "header", "spec": "1.8", "stream": stream, "units": units(stream)}


def lifecycle(t0, status="ok", reason=None, remedy=None):
    h = {"type": "header", "spec": "1.8", "stream": "lifecycle", "units": {"t_ns": "ns", "count": "count"}}
    out = [h] if status == "not-requested" else [h, {"type": "lifecycle", "t_ns": t0, "event": "requested"}]
    if status != "ok":
        f = {"type": "lifecycle", "t_ns": t0 + 10, "event": "final", "status": status}
        if reason:
            f["reason"] = reason
        if remedy:
            f["remedy"] = remedy
        return out + [f]
    for k, e in enumerate(["probed", "opened", "attached", "stopped", "detached"]):
        r = {"type": "lifecycle", "t_ns": t0 + 10 * (k + 1), "event": e}
        if e == "probed":
            r["status"] = "ok"
        if e == "attached":
            r["evidence"] = "fixture: t3630-rtfix.py"
        out.append(r)
    return out + [{"type": "lifecycle", "t_ns": t0 + 70, "event": "final", "status": "ok"}]


def write(path, recs):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        for r in recs:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")


def main():
    b = sys.argv[1]
    opts = sys.argv[2:]
    d = b + "/data"
    run = json.load(open(d + "/run.json"))
    S = 1000001000  # i1's start
    ms = 1000000
    END = 1190000000  # i1's end_ns
    colls = run["collectors"]
    if "--no-probes" not in opts:
        recs = [header("probes"),
                {"type": "config", "mechanism": "USDT uprobes (eBPF, libbpf)", "filter": "members",
                 "providers": "pmu python hotspot", "abi": 1, "ring_bytes": 262144, "ncpus": 2,
                 "clock": "monotonic"},
                {"type": "runtime", "t_ns": S + 1 * ms, "inc": "i1", "pid": 7000, "tid": 7000, "name": "hot",
                 "abi": 1}]
        ev = []
        ev.append({"type": "mark", "t_ns": S + 50 * ms, "inc": "i1", "pid": 7000, "tid": 7000,
                   "name": "startup-end", "source": "pmu:mark", "via": "usdt"})
        ev.append({"type": "mark", "t_ns": S + 80 * ms, "inc": "i1", "pid": 7000, "tid": 7000,
                   "name": "warmup-end", "source": "pmu:mark", "via": "usdt"})
        for i in range(10):
            end = S + (20 + 10 * i) * ms
            rid = str(i + 1)
            cid = str((i + 1) | (1 << 62))
            ev.append({"type": "span", "t_ns": end - ms // 2, "id": cid, "parent": rid, "inc": "i1", "pid": 7000,
                       "tid": 7000, "end_tid": 7000, "name": "work", "begin_ns": end - 3 * ms // 2,
                       "end_ns": end - ms // 2, "via": "usdt"})
            ev.append({"type": "span", "t_ns": end, "id": rid, "inc": "i1", "pid": 7000, "tid": 7000,
                       "end_tid": 7000, "name": "request", "begin_ns": end - 2 * ms, "end_ns": end, "via": "usdt"})
        for k in range(4):
            end = S + 30 * (k + 1) * ms
            ev.append({"type": "gc", "t_ns": end, "begin_ns": end - (k + 1) * ms, "dur_ns": (k + 1) * ms,
                       "inc": "i1", "pid": 7000, "tid": 7000, "runtime": "pmu", "kind": "young",
                       "source": "pmu:gc_begin"})
        ev.sort(key=lambda r: r["t_ns"])
        recs += ev
        recs.append({"type": "allocs", "t_ns": END, "inc": "i1", "pid": 7000, "count": 8,
                     "bytes": 6 * 4096 + 2 * 256})
        names = ["runtime", "mark", "span_begin", "span_end", "gc_begin", "gc_end", "alloc"]
        hits = {"runtime": 1, "mark": 2, "span_begin": 20, "span_end": 20, "gc_begin": 4, "gc_end": 4, "alloc": 8}
        for n in names:
            recs.append({"type": "probe", "t_ns": S + 190 * ms, "binary": "/work/build/hot",
                         "build_id": "3f9a8c7e6d5b4a39281706f5e4d3c2b1a0918273", "provider": "pmu", "name": n,
                         "semaphore": False, "role": n, "attached": True, "attached_ns": S - 500, "hits": hits[n]})
        recs.append({"type": "summary", "probes": 7, "attached": 7, "hits": sum(hits.values()), "spans": 20,
                     "marks": 2, "gcs": 4, "raw_hits": 0, "unended": 0, "unmatched": 0, "unattributed": 0,
                     "lost": 0, "malformed": 0})
        write(d + "/collectors/probes/probes.jsonl", recs)
        write(d + "/collectors/probes/lifecycle.jsonl", lifecycle(1000000100))
        colls.append({"name": "probes", "requested": True})
    if "--no-alloc" not in opts:
        SB = 524288

        def est(size):
            p = 1 - math.exp(-size / SB)
            return round(size / p), round(1000 / p)

        recs = [header("alloc"),
                {"type": "config", "via": "uprobe", "library": "/usr/lib/x86_64-linux-gnu/libc.so.6",
                 "functions": "malloc calloc realloc free", "sample_bytes": SB, "chains": True,
                 "ring_bytes": 262144, "ncpus": 2, "clock": "monotonic"}]
        seq = 0
        live = []
        ev = []
        for k in range(8):
            seq += 1
            size = 4096 if k < 6 else 256
            chain = "0x55d0c4a01234 0x55d0c4a013a8" if k < 6 else "0x55d0c4a013a8 0x7f3a1c029d90"
            eb, eo = est(size)
            t = S + (10 + 15 * k) * ms
            ev.append({"type": "sample", "t_ns": t, "seq": seq, "inc": "i1", "pid": 7000, "tid": 7000,
                       "func": "malloc", "size": size, "addr": "0x%x" % (0x5000000 + seq * 0x1000),
                       "est_bytes": eb, "est_objects_milli": eo, "chain": chain})
            if k < 4:
                ev.append({"type": "free", "t_ns": t + ms, "sample_seq": seq, "inc": "i1", "pid": 7000,
                           "tid": 7000})
            else:
                live.append(eb)
        ev.sort(key=lambda r: r["t_ns"])
        recs += ev
        tot = sum(r["est_bytes"] for r in ev if r["type"] == "sample")
        objs = round(sum(r["est_objects_milli"] for r in ev if r["type"] == "sample") / 1000)
        recs.append({"type": "inc", "t_ns": END, "inc": "i1", "pid": 7000, "exited": True, "samples": 8,
                     "est_bytes": tot, "est_objects": objs, "live_samples": len(live), "live_est_bytes": sum(live),
                     "dropped": 0})
        recs.append({"type": "summary", "samples": 8, "frees": 4, "est_bytes": tot, "unattributed": 0, "lost": 0,
                     "malformed": 0})
        write(d + "/collectors/alloc/alloc.jsonl", recs)
        write(d + "/collectors/alloc/lifecycle.jsonl", lifecycle(1000000100))
        colls.append({"name": "alloc", "requested": True})
    else:
        write(d + "/collectors/alloc/lifecycle.jsonl",
              lifecycle(1000000100, "not-requested"))
        colls.append({"name": "alloc", "requested": False})
    json.dump(run, open(d + "/run.json", "w"), indent=2)


main()
