#!/usr/bin/env bats
# pmuanalyze: the wall time decomposed (on-CPU, off-CPU as a lower bound,
# what would attribute it) before the dominant cost, which names the largest
# share of the wall time, on real workloads.

load helpers

setup() {
	T=$BATS_TEST_TMPDIR
}

teardown() {
	[ -n "${D:-}" ] && rm -rf "$D"
	true
}

# q FILE EXPR: print a Python expression over the --json report d
q() {
	$PY -c 'import json,sys
d = json.load(open(sys.argv[1]))
w = d["wall_time"]; c = d["dominant_cost"]
print(eval("(" + sys.argv[2] + "\n)"))' "$1" "$2"
}

@test "a workload blocked in fdatasync: the dominant cost is the off-CPU time and what would attribute it, not a CPU hotspot" {
	needs_backend linux
	# tmpfs returns from fdatasync at once: the file must be on a disk
	D=$(mktemp -d /var/tmp/pmu-t3050.XXXXXX)
	fs=$(stat -f -c %T "$D")
	[ "$fs" != tmpfs ] || skip "/var/tmp is tmpfs: fdatasync does not block there"
	run pmurec -o "$T/s.bundle" -- sync-writes "$D/f" 300
	assert_success
	pmuanalyze --json "$T/s.bundle" >"$T/s.json"
	off=$(q "$T/s.json" '"%.0f" % w["off_cpu_percent"]')
	[ "$off" -ge 50 ] || skip "fdatasync on this $fs file system left the workload only $off% of its wall time off-CPU"
	# what is attributed comes from the cohort's own cgroup (pressure
	# stalls), labelled estimates; the rest is unattributed
	run q "$T/s.json" 'c["level"], w["status"], w["off_cpu_is_lower_bound"],
all(a["estimate"] and a["source"].startswith("the cohort cgroup") for a in w["attributed"]),
w["unattributed_ns"] == max(0, w["off_cpu_ns"] - sum(a["value_ns"] for a in w["attributed"]))'
	assert_output "('off-cpu', 'ok', True, True, True)"
	run pmuanalyze "$T/s.bundle"
	assert_success
	# the sentence leads with the off-CPU share and says what would attribute it
	assert_line --regexp "^dominant cost: $off% of wall time \(at least [0-9.]+ m?s of [0-9.]+ m?s\) no cohort process was on a CPU \(off-CPU: blocked, sleeping or waiting\): .*the syscalls and sched collectors \(--mode full\) would attribute it; .*; on CPU \([0-9]+% of wall\): process 'sync-writes' "
	refute_line --regexp "^dominant cost: process"
	# and the wall time comes first: its lines before the dominant cost
	wall=$(grep -n '^wall time' <<<"$output" | cut -d: -f1)
	dom=$(grep -n '^dominant cost:' <<<"$output" | cut -d: -f1)
	tree=$(grep -n '^process tree' <<<"$output" | cut -d: -f1)
	[ "$wall" -lt "$dom" ] && [ "$dom" -lt "$tree" ]
	assert_line --regexp "^  off CPU      at least [0-9.]+ m?s, $off% of wall: no cohort task on a CPU \(blocked, sleeping or runnable but waiting\)$"
	assert_line --regexp '^  (attributed   none of it|unattributed [0-9.]+ m?s), [0-9]+% of wall: the syscalls and sched collectors \(--mode full\) would attribute it'
	# the missing evidence is listed with what was not measured
	if [ "$(q "$T/s.json" 'w["unattributed_ns"] > 0')" = True ]; then
		assert_line --regexp '^  off-CPU time +not-requested +no collector of this recording says where'
	fi
}

@test "sleep 0.5: off-CPU, bounded below, on + off no more than the wall" {
	needs_backend linux
	run pmurec -o "$T/z.bundle" -- sleep 0.5
	assert_success
	pmuanalyze --json "$T/z.bundle" >"$T/z.json"
	run q "$T/z.json" 'c["level"], w["on_cpu_ns"] + w["off_cpu_ns"] <= w["wall_ns"], w["wall_ns"] >= 500000000, w["off_cpu_percent"] >= 50'
	assert_output "('off-cpu', True, True, True)"
	run q "$T/z.json" 'c["wall_share_percent"] == w["off_cpu_percent"], abs(w["parallelism"] - w["on_cpu_ns"] / w["wall_ns"]) < 1e-9'
	assert_output "(True, True)"
}

@test "a CPU-bound loop: the process is named with its share of the wall time, or a busy host's CPU wait is" {
	needs_backend linux
	# 400 ms of CPU by the thread's own clock, however loaded the host is
	run pmurec -o "$T/c.bundle" -- spin-threads 1 400
	assert_success
	pmuanalyze --json "$T/c.bundle" >"$T/c.json"
	on=$(q "$T/c.json" 'int(w["on_cpu_percent"])')
	if [ "$on" -lt 60 ]; then
		# a busy host kept the loop from a CPU: that is the off-CPU time,
		# and the cohort's cgroup says it was runnable, waiting for a CPU
		run q "$T/c.json" '[a["what"] for a in w["attributed"] if a["value_ns"] > w["off_cpu_ns"] / 2]'
		[ "$output" != "[]" ] || skip "the host kept the loop off a CPU ($on% on) and no cgroup pressure says why"
		assert_output "['runnable, waiting for a CPU']"
		run q "$T/c.json" 'c["level"]'
		assert_output off-cpu
		return
	fi
	run q "$T/c.json" 'c["level"], c["wall_share_percent"] >= 50, "off-CPU" in c["statement"], c["comm"]'
	assert_output "('process', True, False, 'spin-threads')"
	run pmuanalyze "$T/c.bundle"
	assert_line --regexp "^dominant cost: process 'spin-threads' \(pid [0-9]+, incarnation i1\) spent 100% of the cohort's CPU"
}

@test "mode none: the command's own CPU time (wait4) against its wall time" {
	needs_backend linux
	run pmurec -m none -o "$T/n.bundle" -- sleep 0.2
	assert_success
	pmuanalyze --json "$T/n.bundle" >"$T/n.json"
	run q "$T/n.json" 'w["status"], "wait4" in w["on_cpu_source"], c["level"]'
	assert_output "('ok', True, 'off-cpu')"
}

@test "no CPU evidence: the wall time is not decomposed, and says why" {
	b=$(mk b minimal)
	pmuanalyze --json "$b" >"$T/m.json"
	run q "$T/m.json" 'w["status"], "reason" in w, "off_cpu_ns" in w, "level" in c'
	assert_output "('unavailable', True, False, False)"
	run pmuanalyze "$b"
	assert_line "  not decomposed: neither a counted task-clock nor every incarnation's CPU time is in the bundle"
	assert_line "dominant cost: not determined (no counted task-clock in this bundle)"
}

@test "collector fates say what would attribute the off-CPU time: a syscalls collector that ran" {
	# the fixture's syscalls collector recorded evidence: no claim that none was requested
	b=$(mk b multiproc)
	pmuanalyze --json "$b" >"$T/f.json"
	run q "$T/f.json" 'w["would_attribute"]'
	assert_output "the syscalls collector recorded evidence, but this pmuanalyze does not attribute off-CPU time from it yet"
	run q "$T/f.json" '[m["what"] for m in d["not_measured"] if m["what"] == "off-CPU time"]'
	assert_output "[]"
}
