#!/usr/bin/python3
"""Add spec 1.7 OS-event streams (syscalls, syscall-stats, sched) to a
mkfixture multiproc bundle, for t3620 until mkfixture has its own: sh (i1,
tids 5000 5003) opens /tmp/x.db-journal, writes it three times, fdatasyncs it
three times (40 ms each, blocked in D), closes it and waits for its children
in wait4; ls (i2) fails an openat with ENOENT; sleep (i3) sleeps ~109 ms.

usage: t3620-osfix.py BUNDLE [--calls N] [--no-sched] [--no-chains]
(rebag after it)."""
import json, sys, os

b = sys.argv[1]
args = sys.argv[2:]
nsync = int(args[args.index("--calls") + 1]) if "--calls" in args else 3
sched = "--no-sched" not in args
chains = "--no-chains" not in args
D = os.path.join(b, "data/collectors")


def bucket(d):
    if d < 16:
        return d
    e = d.bit_length() - 1
    if e > 40:
        return 311
    return 16 + (e - 4) * 8 + ((d >> (e - 3)) & 7)


def hist(durs):
    h = {}
    for d in durs:
        h[bucket(d)] = h.get(bucket(d), 0) + 1
    return " ".join("%d:%d" % (k, h[k]) for k in sorted(h))


def dump(path, stream, units, recs):
    # the bag's spec version (the streams' header names the same)
    spec = json.load(open(path.split("/data/")[0] + "/data/run.json"))["spec"]
    with open(path, "w") as f:
        f.write(json.dumps({"type": "header", "spec": spec, "stream": stream, "units": units},
                           separators=(",", ":")) + "\n")
        for r in recs:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")


A = "0x0 0x0 0x0 0x0 0x0 0x0"
NR = {"openat": 257, "write": 1, "fdatasync": 75, "close": 3, "wait4": 61, "getdents64": 217,
      "clock_nanosleep": 230}
FILE = {"dev": "8:1", "ino": 42, "ftype": "reg"}
calls = []
offs = []


def call(inc, pid, name, entry, dur, **kw):
    r = {"type": "call", "t_ns": entry + dur, "dur_ns": dur, "seq": 0, "inc": inc, "pid": pid, "tid": pid,
         "syscall": name, "nr": NR[name]}
    r.update(kw)
    r["args"] = A
    calls.append(r)


call("i1", 5000, "openat", 1001000000, 20000, ret=3, fd=3, path="/tmp/x.db-journal", path_source="dentry",
     flags="0x241", **FILE)
for k in range(3):
    call("i1", 5000, "write", 1002000000 + k * 100000, 10000, ret=4096, bytes=4096, fd=3, **FILE)
# nsync fdatasyncs of 40 ms over [1020 ms, 1140 ms): each blocked in D but 20 us
span = 120000000 // nsync
sync_durs = []
for k in range(nsync):
    entry = 1020000000 + k * span
    dur = span - 100000
    sync_durs.append(dur)
    call("i1", 5000, "fdatasync", entry, dur, ret=0, fd=3, **FILE)
    o = {"type": "off", "t_ns": entry + dur - 10000, "off_ns": dur - 20000, "inc": "i1", "pid": 5000, "tid": 5000,
         "state": "D", "wait_ns": dur - 25000, "runq_ns": 5000, "syscall": "fdatasync", "cpu_out": 0, "cpu_in": 1}
    if chains:
        o["chain"] = "0x401234 0x401100 0x400f00"
    offs.append(o)
call("i1", 5000, "close", 1140100000, 5000, ret=0, fd=3, **FILE)
call("i2", 5001, "openat", 1003000000, 15000, errno=2, error="ENOENT", path="/nonexistent",
     path_source="argument")
# sh waits for its children in wait4 (not a raw call: no file)
offs.append({"type": "off", "t_ns": 1189000000, "off_ns": 48700000, "inc": "i1", "pid": 5000, "tid": 5000,
             "state": "S", "wait_ns": 48700000, "runq_ns": 0, "syscall": "wait4", "cpu_out": 1, "cpu_in": 1})
offs.append({"type": "off", "t_ns": 1119000000, "off_ns": 108900000, "inc": "i3", "pid": 5002, "tid": 5002,
             "state": "S", "wait_ns": 108890000, "runq_ns": 10000, "syscall": "clock_nanosleep", "cpu_out": 0,
             "cpu_in": 0})
calls.sort(key=lambda r: r["t_ns"])
for i, r in enumerate(calls):
    r["seq"] = i + 1
Y = {"t_ns": "ns", "dur_ns": "ns", "seq": "count", "pid": "id", "tid": "id", "nr": "id", "ret": "count",
     "errno": "id", "bytes": "bytes", "fd": "id", "newfd": "id", "fd2": "id", "ino": "id", "ring_bytes": "bytes",
     "ncpus": "count", "max_output_bytes": "bytes", "cpu": "id", "lost": "count", "calls": "count",
     "fd_records": "count", "seq_end": "count", "unattributed": "count", "truncated": "count", "malformed": "count"}
cfg = {"type": "config", "mechanism": "raw_tp sys_enter/sys_exit (eBPF)", "filter": "members",
       "raw_calls": "openat read write fdatasync close", "ring_bytes": 4194304, "ncpus": 2, "arch": "x86_64",
       "clock": "monotonic"}
fd0 = {"type": "fd", "t_ns": 1000001000, "inc": "i1", "pid": 5000, "fd": 1, "dev": "0:25", "ino": 7,
       "ftype": "chr", "path": "/dev/null", "path_source": "proc-fd"}
dump(D + "/syscalls/syscalls.jsonl", "syscalls", Y,
     [cfg, fd0] + calls + [{"type": "summary", "calls": len(calls), "fd_records": 1, "seq_end": len(calls),
                            "unattributed": 0, "truncated": 0, "lost": 0, "malformed": 0}])


def stat(inc, pid, name, durs, **kw):
    r = {"type": "stat", "inc": inc, "pid": pid, "syscall": name, "nr": NR[name]}
    r.update(kw)
    r.update({"count": len(durs), "total_ns": sum(durs), "min_ns": min(durs), "max_ns": max(durs),
              "hist": hist(durs)})
    if "bytes" in kw:
        r["bytes"] = r.pop("bytes")
    return r


stats = [stat("i1", 5000, "openat", [20000], path="/tmp/x.db-journal", **FILE),
         stat("i1", 5000, "write", [10000] * 3, bytes=12288, path="/tmp/x.db-journal", **FILE),
         stat("i1", 5000, "fdatasync", sync_durs, path="/tmp/x.db-journal", **FILE),
         stat("i1", 5000, "close", [5000], path="/tmp/x.db-journal", **FILE),
         stat("i1", 5000, "wait4", [48800000]),
         stat("i2", 5001, "openat", [15000], errno=2, error="ENOENT"),
         stat("i2", 5001, "getdents64", [30000, 2000]),
         stat("i3", 5002, "clock_nanosleep", [108950000])]
S = {"pid": "id", "nr": "id", "errno": "id", "ino": "id", "count": "count", "total_ns": "ns", "min_ns": "ns",
     "max_ns": "ns", "bytes": "bytes", "stats": "count", "calls": "count", "lost": "count",
     "unattributed": "count", "unentered": "count"}
dump(D + "/syscalls/syscall-stats.jsonl", "syscall-stats", S,
     stats + [{"type": "summary", "stats": len(stats), "calls": sum(s["count"] for s in stats), "lost": 0,
               "unattributed": 0, "unentered": 0}])
if sched:
    def thread(inc, pid, tid, start, t, on, runq, sleep, blocked, other=0):
        unobs = t - start - on - runq - sleep - blocked - other
        assert unobs >= 0
        return {"type": "thread", "t_ns": t, "inc": inc, "pid": pid, "tid": tid, "start_ns": start, "exited": True,
                "on_cpu_ns": on, "runq_ns": runq, "sleep_ns": sleep, "blocked_ns": blocked, "other_ns": other,
                "unobserved_ns": unobs, "voluntary": 20, "involuntary": 5, "migrations": 1}
    blocked = sum(o["wait_ns"] for o in offs if o["tid"] == 5000 and o["state"] == "D")
    runq = sum(o["runq_ns"] for o in offs if o["tid"] == 5000)
    thr = [thread("i1", 5000, 5003, 1000500000, 1000600000, 60000, 0, 40000, 0),
           thread("i2", 5001, 5001, 1002000000, 1009000000, 5200000, 800000, 0, 0),
           thread("i3", 5002, 5002, 1010000000, 1120000000, 700000, 10000, 108890000, 0),
           thread("i1", 5000, 5000, 1000001000, 1190000000, 2400000, runq, 48700000 + 17958000, blocked)]
    recs = sorted(offs + thr, key=lambda r: r["t_ns"])
    C = {"ring_bytes": "bytes", "ncpus": "count", "min_off_ns": "ns", "t_ns": "ns", "off_ns": "ns", "pid": "id",
         "tid": "id", "wait_ns": "ns", "runq_ns": "ns", "waker_tid": "id", "cpu_out": "id", "cpu_in": "id",
         "start_ns": "ns", "on_cpu_ns": "ns", "sleep_ns": "ns", "blocked_ns": "ns", "other_ns": "ns",
         "unobserved_ns": "ns", "voluntary": "count", "involuntary": "count", "migrations": "count", "cpu": "id",
         "lost": "count", "offs": "count", "threads": "count", "short_offs": "count", "unattributed": "count",
         "malformed": "count"}
    dump(D + "/sched/sched.jsonl", "sched", C,
         [{"type": "config", "mechanism": "raw_tp sched_switch/sched_wakeup/sched_migrate_task (eBPF)",
           "filter": "members", "ring_bytes": 4194304, "ncpus": 2, "min_off_ns": 1000000,
           "chains": "fp" if chains else "none", "clock": "monotonic"}] + recs +
         [{"type": "summary", "offs": len(offs), "threads": len(thr), "short_offs": 12, "unattributed": 0,
           "lost": 0, "malformed": 0}])
    lc = D + "/sched/lifecycle.jsonl"
    with open(lc) as f:
        head = f.readline()
    with open(lc, "w") as f:
        f.write(head)
        for i, ev in enumerate(["requested", "probed", "opened", "attached", "stopped", "detached"]):
            r = {"type": "lifecycle", "t_ns": 1000000100 + i * 10, "event": ev}
            if ev == "probed":
                r["status"] = "ok"
            if ev == "attached":
                r["evidence"] = "first record seen at t_ns 1000500000"
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
        f.write(json.dumps({"type": "lifecycle", "t_ns": 1000000170, "event": "final", "status": "ok"},
                           separators=(",", ":")) + "\n")
    with open(os.path.join(b, "data/run.json")) as f:
        run = json.load(f)
    for c in run["collectors"]:
        if c["name"] == "sched":
            c["requested"] = True
    with open(os.path.join(b, "data/run.json"), "w") as f:
        json.dump(run, f, indent=2)
    with open(os.path.join(b, "data/run.json")) as f:
        run = json.load(f)
    for c in run["collectors"]:
        if c["name"] == "sched":
            c["requested"] = True
    with open(os.path.join(b, "data/run.json"), "w") as f:
        json.dump(run, f, indent=2)
