#!/usr/bin/python3
"""Turn a `mkfixture minimal` bundle into one with a large cohort, for
t3400-large-cohort.bats and bench/analyze.

    t3400-gencohort.py BUNDLE N [chain | programs=M]

Written independently of pmu's writers (so the expectations of the tests are
not computed by the code under test).  The cohort is a 10-ary tree of N
incarnations under the fixture's root i1: incarnation k (k >= 2) has parent
(k - 2) // 10 + 1 (with "chain": k - 1, a parent chain N deep), pid 10000 + k, one thread, one exec of /bin/true, an exit,
and the nine resource totals with values that vary with k.  With programs=M
incarnation k execs /opt/gen/p<k % M> instead: M distinct programs.  The root keeps
the fixture's times and spans.  The cohort is written in the form of the
bundle's spec: cohort.jsonl (1.3 and later; the fixture's header line kept)
or a compact cohort.json (1.0 to 1.2).  The manifests are recomputed."""
import hashlib
import json
import os
import sys

FIELDS = ["cpu_user_ns", "cpu_system_ns", "max_rss_bytes", "minor_faults", "major_faults",
          "voluntary_switches", "involuntary_switches", "read_bytes", "write_bytes"]


def dumps(o):
    return json.dumps(o, separators=(",", ":"), ensure_ascii=False)


def resources(k):
    """The nine totals of incarnation k: deterministic, different per k."""
    return {"cpu_user_ns": (k * 7919 % 1000) * 1000 + 1000, "cpu_system_ns": (k * 104729 % 500) * 1000,
            "max_rss_bytes": 1048576 + (k % 4096) * 4096, "minor_faults": 50 + k % 97, "major_faults": k % 3,
            "voluntary_switches": k % 11, "involuntary_switches": k % 5, "read_bytes": (k % 13) * 512,
            "write_bytes": (k % 7) * 100}


def incarnations(n, root, chain=False):
    """Yield (id, parent id, pid, start, end, comm, res) for 2..n."""
    rs, re_ = root["start_ns"], root["end_ns"]
    for k in range(2, n + 1):
        if chain:
            # nested lifetimes: each starts 10 ns after its parent and ends 10 ns before it
            parent, start, end = k - 1, rs + 10 * (k - 1), re_ - 10 * (k - 1)
        else:
            depth, p = 1, (k - 2) // 10 + 1
            while p > 1:
                depth, p = depth + 1, (p - 2) // 10 + 1
            parent, start, end = (k - 2) // 10 + 1, rs + 1000 * depth + k % 500, re_ - 1000 * depth - k % 500
        yield ("i%d" % k, "i%d" % parent, 10000 + k, start, end, "w%d" % (k % 50), resources(k))


def main():
    bundle, n = sys.argv[1], int(sys.argv[2])
    chain = sys.argv[3:] == ["chain"]
    progs = int(sys.argv[3][9:]) if sys.argv[3:] and sys.argv[3].startswith("programs=") else 0
    path = lambda k: "/opt/gen/p%d" % (k % progs) if progs else "/bin/true"
    data = os.path.join(bundle, "data")
    spec = json.load(open(os.path.join(data, "run.json")))["spec"]
    major, minor = (int(x) for x in spec.split("."))
    rres = resources(1)
    if (major, minor) >= (1, 3):
        # the fixture's root, from its incarnation and end records; its header kept
        lines = open(os.path.join(data, "cohort.jsonl")).read().splitlines()
        header, recs = lines[0], [json.loads(x) for x in lines[1:]]
        r = next(x for x in recs if x["type"] == "incarnation" and "parent" not in x)
        r = dict(r, **{k: v for x in recs if x["type"] == "end" and x["inc"] == r["id"] for k, v in x.items()
                       if k in ("end_ns", "comm")})
        with open(os.path.join(data, "cohort.jsonl"), "w") as f:
            w = lambda o: f.write(dumps(o) + "\n")
            f.write(header + "\n")

            def one(iid, parent, pid, start, end, comm, res, path):
                rec = {"type": "incarnation", "id": iid, "pid": pid, "start_ns": start, "preexisting": False}
                if parent:
                    rec["parent"] = parent
                w(rec)
                w({"type": "thread", "inc": iid, "tid": pid})
                x = {"type": "exec", "inc": iid, "t_ns": start + 50, "path": path}
                if minor >= 4:  # every exec has its argv from spec 1.4
                    x["argv"] = [path.rsplit("/", 1)[-1]]
                w(x)
                return (iid, end, comm, res)

            def close(iid, end, comm, res):
                for fld in FIELDS:
                    w({"type": "resource", "inc": iid, "field": fld, "status": "ok", "source": "/proc/PID at exit",
                       fld: res[fld]})
                w({"type": "end", "inc": iid, "end_ns": end, "comm": comm, "exit": "exited", "code": 0})

            root = one("i1", None, r["pid"], r["start_ns"], r["end_ns"], r["comm"], rres, "/usr/bin/true")
            for iid, parent, pid, start, end, comm, res in incarnations(n, r, chain):
                close(*one(iid, parent, pid, start, end, comm, res, path(pid - 10000)))
            close(*root)
    else:
        old = json.load(open(os.path.join(data, "cohort.json")))
        r = old["incarnations"][0]
        fields = {f: {"status": "ok", "source": "/proc/PID at exit"} for f in FIELDS}
        with open(os.path.join(data, "cohort.json"), "w") as f:
            head = {k: v for k, v in old.items() if k != "incarnations"}
            f.write(dumps(head)[:-1] + ',"incarnations":[')
            r = dict(r, resources=dict(rres, fields=fields))
            f.write(dumps(r))
            for iid, parent, pid, start, end, comm, res in incarnations(n, r, chain):
                f.write("," + dumps({"id": iid, "pid": pid, "start_ns": start, "end_ns": end,
                                     "preexisting": False, "parent": parent, "comm": comm, "tids": [pid],
                                     "exec": [{"t_ns": start + 50, "path": path(pid - 10000)}],
                                     "exit": {"kind": "exited", "code": 0},
                                     "resources": dict(res, fields=fields)}))
            f.write("]}")
    # the manifests, as rebag in helpers.bash does
    files = sorted(os.path.relpath(os.path.join(d, x), bundle) for d, _, fs in os.walk(data) for x in fs)

    def sha(p):
        h = hashlib.sha256()
        with open(os.path.join(bundle, p), "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()
    with open(os.path.join(bundle, "manifest-sha256.txt"), "w") as f:
        for p in files:
            f.write("%s  %s\n" % (sha(p), p))
    size = sum(os.path.getsize(os.path.join(bundle, p)) for p in files)
    info = os.path.join(bundle, "bag-info.txt")
    lines = [("Payload-Oxum: %d.%d" % (size, len(files))) if x.startswith("Payload-Oxum:") else x
             for x in open(info).read().splitlines()]
    open(info, "w").write("\n".join(lines) + "\n")
    with open(os.path.join(bundle, "tagmanifest-sha256.txt"), "w") as f:
        for p in ["bag-info.txt", "bagit.txt", "manifest-sha256.txt"]:
            f.write("%s  %s\n" % (sha(p), p))


if __name__ == "__main__":
    main()
