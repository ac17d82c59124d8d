#!/usr/bin/env bats
# The counting collector on real processes and the real kernel: every
# incarnation and thread has its own counts, the sums add up, absent
# hardware is explained, and a background load does not move the cohort's
# numbers.  Per-thread counter groups need each new task held before it
# runs, which only the ptrace follower does: these tests ask for it by
# name (--follower ptrace); the eBPF follower's counting is tested last.

load helpers

setup() {
	needs_backend linux
	B=$BATS_TEST_TMPDIR/c.bundle
	C=data/collectors/counting/counts.jsonl
}

# q BUNDLE PYTHON: run PYTHON with R (the counts records, header dropped),
# COH (the cohort stream, read by cohort_doc) and tot(inc, counter) / coh(counter, scope) helpers
q() {
	local b=$1
	shift
	$PY - "$b" <<EOF
import json, sys
sys.path.insert(0, "$BATS_TEST_DIRNAME")
import cohort_doc
b = sys.argv[1]
R = [json.loads(l) for l in open(b + "/$C")][1:]
COH = cohort_doc.load(b + "/data/cohort.jsonl")
INC = {i["id"]: i for i in COH["incarnations"]}
def tot(inc, c):
    return [r for r in R if r["type"] == "total" and r["inc"] == inc and r["counter"] == c][0]
def coh(c, scope="incarnations"):
    return [r for r in R if r["type"] == "cohort" and r["counter"] == c and r["scope"] == scope][0]
def ctr(c):
    return [r for r in R if r["type"] == "counter" and r["name"] == c][0]
def val(r):
    return r.get("value", r.get("value_ns"))
$*
EOF
}

busy='i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done'

@test "each incarnation of sh -> {busy loop, sleep} has its own task-clock and page faults" {
	run pmurec --follower ptrace -e task-clock,page-faults -o "$B" -- sh -c "sh -c '$busy' & sleep 0.3; wait"
	assert_success
	run pmuvalidate -q "$B"
	assert_success
	run q "$B" '
byc = {}
for i, inc in INC.items():
    t = tot(i, "task-clock"); p = tot(i, "page-faults")
    assert t["status"] == "ok" and p["status"] == "ok", (t, p)
    assert not t["estimate"] and t["running_ppm"] == 1000000
    byc.setdefault(inc["comm"], []).append(val(t))
# the busy sh's own count is far above sleep's (a few ms of exec and
# loading under ptrace stops, up to 8 ms on a loaded VM); mixed-up counts
# would be alike
busy = max(byc["sh"]); sleep = byc["sleep"][0]
print(sorted(byc), busy > 5 * sleep, busy > 50_000_000)'
	assert_output "['sh', 'sleep'] True True"
}

@test "a multi-threaded target: one count per thread, the incarnation's total is their sum" {
	run pmurec --follower ptrace -e task-clock -o "$B" -- spin-threads 3 60
	assert_success
	run pmuvalidate -q "$B"
	assert_success
	run q "$B" '
cs = [r for r in R if r["type"] == "count" and r["counter"] == "task-clock"]
t = tot("i1", "task-clock")
print(len(INC["i1"]["tids"]), len(cs), t["threads"], t["value_ns"] == sum(c["value_ns"] for c in cs),
      sum(c["value_ns"] >= 50_000_000 for c in cs))'
	# main thread + 3 spinners, each spinner at least 50 of its 60 ms
	assert_output "4 4 4 True 3"
}

@test "an exec chain stays one incarnation and is counted across the exec" {
	run pmurec --follower ptrace -e task-clock -o "$B" -- sh -c "exec sh -c '$busy'"
	assert_success
	run q "$B" '
print(len(INC), len(INC["i1"]["exec"]), tot("i1", "task-clock")["value_ns"] > 50_000_000)'
	assert_output "1 2 True"
}

@test "the cohort total is the sum of the incarnations and agrees with perf stat on the same command" {
	command -v perf >/dev/null || skip "perf (Debian linux-perf) is not installed"
	perf stat -x, -e task-clock -- true 2>/dev/null || skip "perf stat does not run on this kernel"
	cmd="for k in 1 2 3; do sh -c '$busy'; ls -R /usr/share/locale >/dev/null; done"
	# Page faults do not depend on timing: perf stat and pmurec on the same
	# command, alternating, three of each.
	for k in 1 2 3; do
		perf stat -x, -e page-faults -o "$BATS_TEST_TMPDIR/perf$k.csv" -- sh -c "$cmd"
		pmurec --follower ptrace -e page-faults -o "$BATS_TEST_TMPDIR/c$k.bundle" -- sh -c "$cmd"
	done
	# CPU time does: this VM's moves by 40% between runs.  So perf stat
	# counts the very same run, wrapped around pmurec: its task-clock is the
	# cohort's plus pmurec's own.
	perf stat -x, -e task-clock -o "$BATS_TEST_TMPDIR/wrap.csv" -- \
		pmurec --follower ptrace -e task-clock,page-faults -o "$B" -- sh -c "$cmd"
	run q "$B" '
import statistics
t = sys.argv[1][:-len("c.bundle")]
def perf(f, ev):
    for l in open(f):
        x = l.strip().split(",")
        if len(x) > 3 and x[0] and x[0][0].isdigit() and x[2] == ev:
            return float(x[0])
ppf = statistics.median(perf(t + "perf%d.csv" % k, "page-faults") for k in (1, 2, 3))
pf = statistics.median([r["value"] for r in (json.loads(l) for l in open(t + "c%d.bundle/'"$C"'" % k))
                        if r["type"] == "cohort" and r["scope"] == "incarnations"][0] for k in (1, 2, 3))
wrap = perf(t + "wrap.csv", "task-clock")
clk = coh("task-clock")["value_ns"] / 1e6
sums = all(val(coh(c)) == sum(val(tot(i, c)) for i in INC) for c in ("task-clock", "page-faults"))
# stated tolerances: page faults within 10% of perf stat (medians of three);
# task-clock at most that of perf stat around pmurec, and short of it by no more
# than the CPU of pmurec itself: 50 ms plus 10%
print(sums, abs(pf - ppf) <= 0.10 * ppf, clk <= wrap * 1.001 and wrap - clk <= 50 + 0.10 * wrap, pf, ppf, clk, wrap)'
	# pmurec's own CPU is held to its bound in the plain build (make check);
	# a sanitized build's instrumentation says nothing about the code's own
	# cost, so there the test ends skipped, with the number
	if sanitized && [[ $output =~ ^True\ True\ False ]]; then
		skip "pmurec's own CPU (perf stat around it minus the cohort's task-clock: $output) is not held to a bound in a sanitized build"
	fi
	assert_output --regexp '^True True True '
}

@test "a background spinner and writer do not leak into the cohort's task-clock and page faults" {
	cmd="sh -c '$busy'; sh -c '$busy'"
	pmurec --follower ptrace -e task-clock,page-faults -o "$BATS_TEST_TMPDIR/quiet.bundle" -- sh -c "$cmd"
	# noise outside the cohort: a spinner per CPU and a file writer
	pids=()
	for _ in $(seq "$(nproc)"); do sh -c 'while :; do :; done' & pids+=($!); done
	dd if=/dev/zero of="$BATS_TEST_TMPDIR/noise" bs=1M count=4000 status=none & pids+=($!)
	run pmurec --follower ptrace -e task-clock,page-faults -o "$B" -- sh -c "$cmd"
	kill "${pids[@]}" 2>/dev/null; wait "${pids[@]}" 2>/dev/null || true
	assert_success
	run q "$B" '
Q = [json.loads(l) for l in open(b + "/../quiet.bundle/'"$C"'")][1:]
def qc(c):
    return [r for r in Q if r["type"] == "cohort" and r["counter"] == c][0]
run = json.load(open(b + "/data/run.json"))
wall = run["end_ns"] - run["start_ns"]
clk = coh("task-clock")["value_ns"]
pf, qpf = coh("page-faults")["value"], qc("page-faults")["value"]
# Page faults: within 10% of the quiet run.  Task-clock is not compared
# with the quiet run: on this VM the spinners make the hypervisor steal
# time from the cohort vCPU while it runs, which inflates any CPU clock
# (perf stat shows the same; 1 run in 30 went 69% over the quiet one).
# What leaking would look like is a counter above the incarnation own
# scheduler time, so the task-clock of each incarnation is held to its /proc
# CPU time (utime + stime, which the kernel scales to the exact
# runtime and truncates to 10 ms clock ticks): the counter misses only the
# runtime before its enable (microseconds) and adds only the exit path
# after the /proc read, so -5 ms <= clk - proc < 15 ms.  And the cohort,
# one process at a time, never counts more than the wall time.
bad = []
for i, inc in INC.items():
    r = inc["resources"]
    d = tot(i, "task-clock")["value_ns"] - (r["cpu_user_ns"] + r["cpu_system_ns"])
    if not -5000000 <= d < 15000000:
        bad.append((i, d))
print(abs(pf - qpf) <= 0.10 * qpf, bad, clk <= wall, pf, qpf, clk, wall)'
	assert_output --regexp '^True \[\] True '
}

@test "context switches are the incarnation's own: they match its /proc totals" {
	run pmurec --follower ptrace -e context-switches -o "$B" -- sh -c "sleep 0.05; sleep 0.05; sh -c '$busy'"
	assert_success
	run q "$B" '
bad = []
for i, inc in INC.items():
    r = inc["resources"]
    if len(inc["tids"]) != 1 or "voluntary_switches" not in r:
        continue
    vol = r["voluntary_switches"]
    own = vol + r["involuntary_switches"]
    perf = tot(i, "context-switches")["value"]
    # /proc counts every switch from fork to the exit stop, the counter
    # every switch from its enable to perf_event_exit_task().  Before the
    # enable a task switches voluntarily exactly once (into its first
    # ptrace stop; the root: blocking on the launch barrier), but it may
    # be preempted any number of times on a loaded host (the root runs
    # code there; involuntary switches of the root before the enable made
    # the old bound own - 2 fail 1 run in 9).  So the lower bound holds for
    # voluntary switches alone: perf >= vol - 1, whatever the load.  After
    # the exit stop only the short exit path up to perf_event_exit_task()
    # can add to the counter (a preemption there): the kernel does not
    # bound it, so the upper bound keeps a margin (25 loaded runs: never
    # above own).
    if not (vol - 1 <= perf <= own + 5):
        bad.append((inc["comm"], vol, own, perf))
print(bad)'
	assert_output "[]"
}

@test "cycles is unavailable here with a reason that names the missing PMU" {
	run pmurec --follower ptrace -e task-clock,cycles -o "$B" -- true
	assert_success
	run pmuvalidate -q "$B"
	assert_success
	if perf stat -e cycles -- true 2>&1 | grep -q '<not supported>'; then
		run q "$B" 'c = ctr("cycles"); print(c["status"], "PMU" in c["reason"], bool(c["remedy"]),
			[r for r in R if r.get("counter") == "cycles"])'
		assert_output "unavailable True True []"
	else
		run q "$B" 'print(ctr("cycles")["status"], tot("i1", "cycles")["status"])'
		assert_output "ok ok"
	fi
}

@test "the make -j2 of a small C project: every make, cc, as and ld incarnation has its own task-clock" {
	command -v make >/dev/null && command -v cc >/dev/null || skip "make and cc are needed"
	P=$BATS_TEST_TMPDIR/proj
	mkdir -p "$P"
	printf 'int f(void) { return 1; }\n' >"$P/a.c"
	printf 'int f(void);\nint main(void) { return f() - 1; }\n' >"$P/b.c"
	printf 'prog: a.o b.o\n\t$(CC) -o $@ a.o b.o\n' >"$P/Makefile"
	cd "$P"
	run pmurec --follower ptrace -e task-clock,page-faults,cycles -o "$B" -- make -j2
	assert_success
	run pmuvalidate -q "$B"
	assert_success
	run q "$B" '
names = {}
for i, inc in INC.items():
    names.setdefault(inc["comm"], []).append(tot(i, "task-clock")["status"])
need = [n for n in ("make", "as", "ld", "cc1") if n not in names]
print(need, all(s == "ok" for v in names.values() for s in v), ctr("cycles")["status"] in ("ok", "unavailable"))'
	assert_output "[] True True"
}

@test "as nobody: user-space counts, and the fallback is recorded with its reason" {
	nobody_setup
	paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
	run as_nobody "$PMU_BUILD/pmurec" --follower ptrace -e task-clock,page-faults -o "$W/n.bundle" -- sh -c "$busy"
	assert_success
	run pmuvalidate -q "$W/n.bundle"
	assert_success
	run q "$W/n.bundle" '
fb = [r for r in R if r["type"] == "fallback"]
c = ctr("task-clock")
t = [r for r in R if r["type"] == "total" and r["counter"] == "task-clock"]
print(c["exclude_kernel"], [f["reason"] for f in fb], t[0]["status"] if t else "no totals",
      c["status"], "perf_event_paranoid" in c.get("reason", "perf_event_paranoid"))'
	nobody_teardown
	if [ "$paranoid" -ge 2 ] && [[ $output == *"no totals unavailable"* ]]; then
		# a kernel that refuses every unprivileged perf_event_open (Debian's
		# paranoid 3): the counter says why, and nothing is counted
		assert_output --regexp "^(True|False) \[\] no totals unavailable True$"
	elif [ "$paranoid" -ge 2 ]; then
		assert_output "True ['kernel counting refused by perf_event_paranoid=$paranoid, counting user space only'] ok ok True"
	else
		assert_output "False [] ok ok True"
	fi
}

@test "pfm: events explain themselves when libpfm4 cannot resolve them" {
	run pmurec --follower ptrace -e task-clock,pfm:NO_SUCH_EVENT_XYZ -o "$B" -- true
	assert_success
	run q "$B" 'c = ctr("pfm:NO_SUCH_EVENT_XYZ"); print(c["status"], "libpfm4" in c["reason"], bool(c["remedy"]))'
	assert_output "unavailable True True"
	PMU_LIBPFM=/nonexistent/libpfm.so.4 run pmurec --follower ptrace -e pfm:cycles -o "$BATS_TEST_TMPDIR/n.bundle" -- true
	assert_success
	run q "$BATS_TEST_TMPDIR/n.bundle" 'c = ctr("pfm:cycles"); print(c["status"], c["reason"].startswith("libpfm4 is not installed"))'
	assert_output "unavailable True"
}

@test "a malformed event list is a usage error naming the event" {
	run pmurec --follower ptrace -e task-clock,cyclez -o "$B" -- true
	assert_failure 2
	assert_output --partial "unknown event 'cyclez' (did you mean 'cycles'?)"
	[ ! -e "$B" ]
	run pmurec -m none -e task-clock -o "$B" -- true
	assert_failure 2
	assert_output --partial "-e needs --mode light or full"
}

@test "--list-events lists the generic events with their units" {
	run pmurec --list-events
	assert_success
	assert_line --regexp '^task-clock +software +ns '
	assert_line --regexp '^cycles +hardware +count '
}

@test "--cohort cgroup: the cohort's own cgroup is counted, its statistics recorded, and removed" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to create a cgroup"
	grep -q cgroup2 /proc/mounts || skip "no cgroup2 mount"
	run pmurec --follower ptrace --cohort cgroup -e task-clock,page-faults -o "$B" -- sh -c "sh -c '$busy'; sleep 0.1"
	assert_success
	run pmuvalidate -q "$B"
	assert_success
	run q "$B" '
s = [r for r in R if r["type"] == "scope"][0]
cg, inc = coh("task-clock", "cgroup"), coh("task-clock")
st = {(r["file"], r["key"]): r for r in R if r["type"] == "cgstat" and r["scope"] == "cgroup"}
u = st[("cpu.stat", "usage_ns")]
# the cgroup count covers the same tasks: within 20% of the incarnations sum
print(s["used"], cg["status"], abs(cg["value_ns"] - inc["value_ns"]) <= 0.2 * inc["value_ns"],
      u["status"], u["value_ns"] > 50_000_000, s["cgroup"])'
	assert_output --regexp '^cgroup ok True ok True /'
	leaf=${output##* }
	[ ! -e "$leaf" ]
}

@test "--cohort cgroup as nobody: unavailable with the reason and the delegation remedy, the bundle still valid" {
	nobody_setup
	run as_nobody "$PMU_BUILD/pmurec" --follower ptrace --cohort cgroup -e task-clock -o "$W/n.bundle" -- true
	assert_success
	run pmuvalidate -q "$W/n.bundle"
	assert_success
	paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
	run q "$W/n.bundle" '
s = [r for r in R if r["type"] == "scope"][0]
print(s["used"], s["status"], "Delegate=yes" in s["remedy"])'
	assert_output "inherit unavailable True"
	# the counts go on per process (where perf_event_paranoid lets nobody count at all)
	if [ "$paranoid" -le 2 ]; then
		run q "$W/n.bundle" 'print(coh("task-clock", "cgroup")["status"], tot("i1", "task-clock")["status"])'
		assert_output "unavailable ok"
	fi
	nobody_teardown
}

@test "--cohort cgroup: the cgroup is removed after the cohort crashes and leaves a process behind" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to create a cgroup"
	grep -q cgroup2 /proc/mounts || skip "no cgroup2 mount"
	run pmurec --follower ptrace --cohort cgroup --max-duration 400 -e task-clock -o "$B" -- sh -c 'sleep 1430 & kill -SEGV $$'
	run q "$B" 's = [r for r in R if r["type"] == "scope"][0]; print(s["used"], s["cgroup"])'
	assert_output --regexp '^cgroup /'
	leaf=${output##* }
	[ ! -e "$leaf" ]
	run pgrep -f '^sleep 1430$'
	assert_failure
}

@test "exec from a thread that is not the leader: the old leader and the exec'd thread are counted apart" {
	run pmurec --follower ptrace -e task-clock -o "$B" -- thread-exec sh -c "$busy"
	assert_success
	run pmuvalidate -q "$B"
	assert_success
	run q "$B" '
cs = [r for r in R if r["type"] == "count"]
t = tot("i1", "task-clock")
pid = INC["i1"]["pid"]
# three threads: the old leader (read at the exec) and the exec'"'"'d thread,
# both under the process id, and the idle thread the exec ended
print(len(INC), len(cs), sum(c["tid"] == pid for c in cs), t["value_ns"] > 50_000_000,
      t["value_ns"] == sum(c["value_ns"] for c in cs))'
	assert_output "1 3 2 True True"
}

@test "counters never take the last file descriptors: threads stay threads, and their counts say why they are missing" {
	run bash -c "ulimit -n 64; pmurec --follower ptrace -o '$B' -- spin-threads 16 20"
	assert_success
	run pmuvalidate -q "$B"
	assert_success
	run q "$B" '
miss = [r for r in R if r["type"] == "count" and r["status"] != "ok"]
print(len(INC), len(INC["i1"]["tids"]), len(miss) > 0, all("open-file limit" in r["reason"] for r in miss),
      any("value" in r or "value_ns" in r for r in miss))'
	assert_output "1 17 True True False"
}

# The hardware path, where a PMU exists; skipped here with the reason.
hw_or_skip() {
	local out
	out=$(perf stat -e cycles -- true 2>&1) || skip "perf stat does not run here"
	if grep -q '<not supported>' <<<"$out"; then
		skip "this host exposes no hardware PMU (perf stat: cycles <not supported>)"
	fi
}

@test "with a hardware PMU: cycles and instructions per incarnation, exact, never a silent 0" {
	command -v perf >/dev/null || skip "perf (Debian linux-perf) is not installed"
	hw_or_skip
	run pmurec --follower ptrace -e task-clock,cycles,instructions -o "$B" -- sh -c "sh -c '$busy'"
	assert_success
	run pmuvalidate -q "$B"
	assert_success
	run q "$B" '
ok = all(tot(i, c)["status"] == "ok" and val(tot(i, c)) > 0 for i in INC for c in ("cycles", "instructions"))
print(ok, ctr("cycles")["status"], any(r.get("suspect_zero") for r in R))'
	assert_output "True ok False"
}

@test "with a hardware PMU: more events than counters are dropped with the reason, or scaled and labelled" {
	command -v perf >/dev/null || skip "perf (Debian linux-perf) is not installed"
	hw_or_skip
	many=cycles,instructions,branches,branch-misses,cache-references,cache-misses,r00c0,r003c,r01c2,r00c4,r00c5,r02c0
	run pmurec --follower ptrace -e "$many" -o "$B" -- sh -c "$busy"
	assert_success
	run q "$B" '
dropped = [r["name"] for r in R if r["type"] == "counter" and r["status"] != "ok" and "dropped" in r.get("reason", "")]
est = [r for r in R if r["type"] == "count" and r.get("estimate")]
print(len(dropped) > 0, est)'
	assert_output "True []"
	run pmurec --follower ptrace --scaled -e "$many" -o "$BATS_TEST_TMPDIR/s.bundle" -- sh -c "$busy"
	assert_success
	run pmuvalidate -q "$BATS_TEST_TMPDIR/s.bundle"
	assert_success
	run q "$BATS_TEST_TMPDIR/s.bundle" '
est = [r for r in R if r["type"] == "count" and r.get("estimate")]
print(len(est) > 0, all(r["running_ppm"] < 1000000 for r in est))'
	assert_output "True True"
}

@test "with the eBPF follower: per-incarnation counts by the follower's per-CPU method, and the cohort's cgroup too" {
	[ "$(id -u)" = 0 ] || skip "the eBPF follower needs root"
	run pmurec -e task-clock,page-faults -o "$B" -- sh -c "sh -c '$busy'"
	assert_success
	grep -q '"attached","evidence":"ebpf follower' "$B/data/collectors/cohort/lifecycle.jsonl" ||
		skip "the eBPF follower did not run here: $(grep -o '"evidence":"[^"]*' "$B/data/collectors/cohort/lifecycle.jsonl")"
	run pmuvalidate -q "$B"
	assert_success
	# no task is held, so the follower counts each thread itself (spec
	# 1.5 method per-cpu-switch: bundle-spec/README.md 19.3, t1470)
	run q "$B" '
i, g = coh("task-clock"), coh("task-clock", "cgroup")
ct = [r for r in R if r["type"] in ("count", "total")]
print(i["status"], i["method"], i["value_ns"] > 0, len(ct) > 0,
      sorted(set((r["method"], r["status"]) for r in ct)), g["status"], g["value_ns"] > 0, "method" in g)'
	assert_output "ok per-cpu-switch True True [('per-cpu-switch', 'ok')] ok True False"
}
