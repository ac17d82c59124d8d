#!/usr/bin/env python3
"""Checks of bpf-follow-dump's JSON lines, for t1700-bpf-follower.bats.

  bpf_follow_check.py cohort OUT [--procs N] [--exe PATH --execs N] [--cpus N]
      no gap, no drop, no malformed record; seqs are exactly 1..assigned;
      every process the cohort forked has one group exit with the same start
      time, every exec and exit belongs to a member; at least N process
      forks (and N execs of PATH); records from at least N CPUs
  bpf_follow_check.py drops OUT
      some records were dropped, and the seqs missing from the stream are
      exactly as many as the dropped ones: delivered + dropped == assigned
  bpf_follow_check.py starts OUT PROCFILE
      each "pid field22" line of PROCFILE has a record of that pid with
      that start time in clock ticks
  bpf_follow_check.py spin OUT STATFILE TOL_PCT
      the root's sum_exec_runtime agrees with the utime+stime ticks it read
      from /proc/self/stat just before its exit: within 2 ticks + TOL_PCT %
  bpf_follow_check.py exits OUT
      one line per process exit, in seq order: "exit TGID status N" or
      "exit TGID signal N", then "root TGID wait N" (the waitpid status)
Prints what it found; exits 1 with the reason when a check fails.
"""
import json
import os
import sys


def load(path):
    recs, stats = [], None
    with open(path) as f:
        for line in f:
            d = json.loads(line)
            if d["kind"] == "stats":
                stats = d
            elif d["kind"] == "unavailable":
                sys.exit("follower unavailable: %s" % d["reason"])
            else:
                recs.append(d)
    if stats is None:
        sys.exit("no stats line")
    recs.sort(key=lambda r: r["seq"])
    return recs, stats


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def root_of(recs):
    if not recs or recs[0]["seq"] != 1 or recs[0]["kind"] != "exec":
        fail("the first record is not the root's exec")
    return recs[0]["tgid"]


def cohort(args):
    recs, st = load(args[0])
    opts = dict(zip(args[1::2], args[2::2]))
    for k in ("gaps", "dropped", "map_fail", "malformed"):
        if st[k] != 0:
            fail("%s is %d" % (k, st[k]))
    seqs = [r["seq"] for r in recs]
    if seqs != list(range(1, st["assigned"] + 1)):
        fail("seqs are not exactly 1..%d" % st["assigned"])
    root = root_of(recs)
    members = {root}
    forks, execs, gexits, cpus = {}, 0, {}, set()
    exe = opts.get("--exe")
    for r in recs:
        cpus.add(r["cpu"])
        k = r["kind"]
        if k == "fork":
            if r["parent_tgid"] not in members:
                fail("fork by non-member %d" % r["parent_tgid"])
            if not r["thread"]:
                if r["child_tgid"] in forks and r["child_tgid"] not in gexits:
                    fail("tgid %d forked twice while alive" % r["child_tgid"])
                forks[r["child_tgid"]] = r["child_start_ticks"]
                members.add(r["child_tgid"])
                gexits.pop(r["child_tgid"], None)
        elif k == "exec":
            if r["tgid"] not in members:
                fail("exec by non-member %d" % r["tgid"])
            if exe is None or r["filename"] == exe:
                execs += 1
        elif k == "exit":
            if r["tgid"] not in members:
                fail("exit of non-member %d" % r["tgid"])
            if r["early"]:
                fail("exit of %d read early" % r["tid"])
            if r["group_dead"]:
                if r["tgid"] in gexits:
                    fail("two group exits of %d" % r["tgid"])
                gexits[r["tgid"]] = r["start_ticks"]
                if r["tgid"] in forks and forks[r["tgid"]] != r["start_ticks"]:
                    fail("start of %d differs between fork and exit" % r["tgid"])
                members.discard(r["tgid"])
    if members:
        fail("members without a group exit: %s" % sorted(members)[:10])
    nforks = len([r for r in recs if r["kind"] == "fork" and not r["thread"]])
    if nforks < int(opts.get("--procs", 0)):
        fail("%d process forks, want %s" % (nforks, opts["--procs"]))
    if execs < int(opts.get("--execs", 0)):
        fail("%d execs of %s, want %s" % (execs, exe, opts["--execs"]))
    if len(cpus) < int(opts.get("--cpus", 1)):
        fail("records from cpus %s only" % sorted(cpus))
    print("ok records %d forks %d execs %d group_exits %d cpus %s assigned %d" %
          (len(recs), nforks, execs, len([r for r in recs if r["kind"] == "exit" and r["group_dead"]]),
           ",".join(map(str, sorted(cpus))), st["assigned"]))


def drops(args):
    recs, st = load(args[0])
    seen = {r["seq"] for r in recs}
    missing = st["assigned"] - len(seen & set(range(1, st["assigned"] + 1)))
    if st["dropped"] == 0:
        fail("nothing was dropped (assigned %d)" % st["assigned"])
    if missing != st["dropped"] or st["gaps"] != st["dropped"]:
        fail("missing %d, gaps %d, dropped %d" % (missing, st["gaps"], st["dropped"]))
    if st["delivered"] + st["dropped"] != st["assigned"] or st["malformed"]:
        fail("delivered %d + dropped %d != assigned %d (malformed %d)" %
             (st["delivered"], st["dropped"], st["assigned"], st["malformed"]))
    if sum(st["dropped_cpu"]) != st["dropped"]:
        fail("per-CPU drops do not add up")
    print("ok assigned %d delivered %d dropped %d missing %d" % (st["assigned"], st["delivered"], st["dropped"], missing))


def starts(args):
    recs, _ = load(args[0])
    have = {}
    for r in recs:
        if r["kind"] == "fork" and not r["thread"]:
            have.setdefault(r["child_tgid"], set()).add(r["child_start_ticks"])
        if r["kind"] in ("exec", "exit"):
            have.setdefault(r["tgid"], set()).add(r["start_ticks"])
    n = 0
    for line in open(args[1]):
        pid, ticks = map(int, line.split())
        if have.get(pid) != {ticks}:
            fail("pid %d: /proc says %d, records say %s" % (pid, ticks, sorted(have.get(pid, []))))
        n += 1
    if n == 0:
        fail("no pid in %s" % args[1])
    print("ok %d start times equal /proc field 22" % n)


def spin(args):
    recs, _ = load(args[0])
    root = root_of(recs)
    tol = float(args[2])
    ut, stt = map(int, open(args[1]).read().split())
    tick = 1e9 / os.sysconf("SC_CLK_TCK")
    proc_ns = (ut + stt) * tick
    ex = [r for r in recs if r["kind"] == "exit" and r["tgid"] == root]
    if len(ex) != 1:
        fail("want one exit of the root, have %d" % len(ex))
    ns = ex[0]["sum_exec_runtime_ns"]
    allowed = 2 * tick + proc_ns * tol / 100
    print("sum_exec_runtime %.1f ms, /proc utime+stime %.1f ms, allowed difference %.1f ms" %
          (ns / 1e6, proc_ns / 1e6, allowed / 1e6))
    if proc_ns <= 0 or abs(ns - proc_ns) > allowed:
        fail("difference %.1f ms" % ((ns - proc_ns) / 1e6))
    print("ok")


def exits(args):
    recs, st = load(args[0])
    for r in recs:
        if r["kind"] == "exit" and r["group_dead"]:
            if "signal" in r:
                print("exit %d signal %d" % (r["tgid"], r["signal"]))
            else:
                print("exit %d status %d" % (r["tgid"], r["status"]))
    root = root_of(recs)
    g = [r for r in recs if r["kind"] == "exit" and r["group_dead"] and r["tgid"] == root]
    print("root %d wait %d group_status %s" % (root, st["root_status"], g[0]["group_status"] if g else "none"))


{"cohort": cohort, "drops": drops, "starts": starts, "spin": spin, "exits": exits}[sys.argv[1]](sys.argv[2:])
