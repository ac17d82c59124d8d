"""The cohort stream of a recorded bundle (spec 1.3, data/cohort.jsonl) as
the tests read it: one dict per incarnation, in stream order, shaped as the
1.2 document's incarnations were (comm, parent, tids, exec, exit, resources
with fields), so that a test says what it checks, not how to join records.

load() also checks the stream rules pmurec must keep (COHORT-1.3): the
first record is the root, a parent's record precedes its children's, every
record of an incarnation comes after its incarnation record and before its
one end, a thread record for its pid, execs in time order.  A violation
raises AssertionError, which fails the test that read it.
"""
import json

FIELDS = ("cpu_user_ns", "cpu_system_ns", "max_rss_bytes", "minor_faults", "major_faults",
          "voluntary_switches", "involuntary_switches", "read_bytes", "write_bytes")


def load(path):
    lines = open(path).read().splitlines()
    head = json.loads(lines[0])
    assert head["type"] == "header" and head["stream"] == "cohort", head
    incs, by_id = [], {}
    for n, line in enumerate(lines[1:], 2):
        r = json.loads(line)
        t = r["type"]
        if t == "incarnation":
            assert r["id"] not in by_id, "line %d: %s twice" % (n, r["id"])
            assert ("parent" in r) == bool(incs), "line %d: only the first is the root" % n
            assert "parent" not in r or r["parent"] in by_id, "line %d: parent after child" % n
            i = dict(id=r["id"], pid=r["pid"], start_ns=r["start_ns"], preexisting=r["preexisting"],
                     tids=[], exec=[], resources={"fields": {}}, ended=False)
            if "parent" in r:
                i["parent"] = r["parent"]
            incs.append(i)
            by_id[r["id"]] = i
            continue
        i = by_id.get(r["inc"])
        assert i is not None, "line %d: %s before its incarnation" % (n, r["inc"])
        assert not i["ended"], "line %d: %s after its end" % (n, t)
        if t == "thread":
            assert r["tid"] not in i["tids"], "line %d: tid twice" % n
            i["tids"].append(r["tid"])
        elif t == "exec":
            assert not i["exec"] or i["exec"][-1]["t_ns"] <= r["t_ns"], "line %d: exec out of order" % n
            i["exec"].append(dict({"t_ns": r["t_ns"], "path": r["path"]},
                                  **{k: r[k] for k in ("argv", "argv_truncated", "argv_reason") if k in r}))
        elif t == "resource":
            f = r["field"]
            assert f in FIELDS and f not in i["resources"]["fields"], "line %d: field %s" % (n, f)
            st = {k: r[k] for k in ("status", "source", "reason", "remedy") if k in r}
            i["resources"]["fields"][f] = st
            if r["status"] == "ok":
                i["resources"][f] = r[f]
        elif t == "end":
            assert i["pid"] in i["tids"], "line %d: no thread record for pid %d" % (n, i["pid"])
            assert len(i["resources"]["fields"]) in (0, 9), "line %d: some totals missing" % n
            i["ended"] = True
            i["comm"] = r["comm"]
            if "end_ns" in r:
                i["end_ns"] = r["end_ns"]
            i["exit"] = {"kind": r["exit"]}
            for k in ("code", "signal"):
                if k in r:
                    i["exit"][k] = r[k]
        else:
            raise AssertionError("line %d: unknown record type %s" % (n, t))
    assert incs, "no incarnation"
    for i in incs:
        assert i["ended"], "%s has no end" % i["id"]
        del i["ended"]
    return {"root": incs[0]["id"], "incarnations": incs}
