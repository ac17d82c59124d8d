"""Compare the cohorts two followers recorded of the same command.

usage: followers_diff.py PTRACE.bundle EBPF.bundle [--cpu-tolerance]

Pids differ between two runs, so incarnations are compared by what does not
depend on the run: each one's path from the root (the exec chains of its
ancestors and its own), its exec chain, its exit (kind and code or signal)
and its number of threads, as a multiset (make -j2 starts its children in
either order).  With --cpu-tolerance the CPU time (user + system) of the
incarnations that did the same work must agree within 25 % or 15 ms, the
rule stated in docs/ebpf-follower.md.  Prints "same" or the differences.
"""
import sys
from collections import Counter

sys.path.insert(0, __import__("os").path.dirname(__file__))
import cohort_doc  # noqa: E402


def shape(bundle):
    incs = cohort_doc.load(bundle + "/data/cohort.jsonl")["incarnations"]
    by = {i["id"]: i for i in incs}

    def chain(i):
        return tuple(e["path"] for e in i["exec"])

    def lineage(i):
        out = []
        while i is not None:
            out.append(chain(i))
            i = by.get(i.get("parent"))
        return tuple(reversed(out))

    rows, cpu = Counter(), {}
    for i in incs:
        x = i["exit"]
        key = (lineage(i), x["kind"], x.get("code", x.get("signal")), len(i["tids"]))
        rows[key] += 1
        r = i["resources"]
        if "cpu_user_ns" in r and "cpu_system_ns" in r:
            cpu.setdefault(key, []).append(r["cpu_user_ns"] + r["cpu_system_ns"])
    return rows, cpu


a, ca = shape(sys.argv[1])
b, cb = shape(sys.argv[2])
bad = []
for k in sorted(set(a) | set(b), key=repr):
    if a[k] != b[k]:
        bad.append("%r: ptrace %d, ebpf %d" % (k, a[k], b[k]))
if "--cpu-tolerance" in sys.argv:
    for k in ca:
        if k in cb and len(ca[k]) == 1 and len(cb[k]) == 1:
            x, y = ca[k][0], cb[k][0]
            if abs(x - y) > max(0.25 * max(x, y), 15e6):
                bad.append("%r: cpu ptrace %.1f ms, ebpf %.1f ms" % (k[0][-1], x / 1e6, y / 1e6))
print("same" if not bad else "\n".join(bad))
