#!/usr/bin/env bats
# pmuanalyze on one bundle: describes it, refuses an invalid one (comparisons: t3300).

load helpers

@test "describes a valid bundle: run, what was not measured, collectors, tree" {
	b=$(mk b multiproc)
	run pmuanalyze "$b"
	assert_success
	assert_line "command  sh -c ls / >/dev/null; sleep 0.1 & wait"
	assert_line --regexp '^  hardware-events +unavailable +no PMU under /sys/bus/event_source/devices supports cycles; remedy: '
	assert_line --regexp '^  hwcount +unavailable +cycles: no hardware PMU'
	assert_line --regexp '^  sched +not-requested +not requested$'
	assert_line "  i1 pid 5000 sh (/bin/sh), 189.999 ms, exit 0, 2 threads"
	assert_line "    i2 pid 5001 ls (/usr/bin/ls), 7.000 ms, exit 0, 1 thread"
	assert_line "       task-clock 5.200 ms  page-faults 96  r00c0 ~2400000 (estimate, counted 50.0% of the time)"
	assert_line "       task-clock 0.700 ms  page-faults 51  r00c0 not counted"
	assert_line --regexp '^  r00c0 +sum of procs +not counted: .+'
	assert_line --regexp "^  counter cycles +unavailable +perf_event_open: .*no hardware PMU"
	# 8.3 ms on a CPU in 190 ms: the off-CPU time leads, then the CPU's largest share
	assert_line --regexp "^dominant cost: 96% of wall time \(at least 181.699 ms of 189.999 ms\) no cohort process was on a CPU .*; on CPU \(4% of wall\): process 'ls' \(pid 5001, incarnation i2\) spent 63% of the cohort's CPU \(task-clock 5.200 of 8.300 ms, exact counts\)$"
}

@test "without counted task-clock there is no dominant cost statement" {
	b=$(mk b minimal)
	run pmuanalyze "$b"
	assert_success
	assert_line "dominant cost: not determined (no counted task-clock in this bundle)"
}

@test "--json carries the same facts" {
	b=$(mk b multiproc)
	run pmuanalyze --json "$b"
	assert_success
	echo "$output" >"$BATS_TEST_TMPDIR/a.json"
	run $PY -c 'import json,sys
d=json.load(open(sys.argv[1]))
t=d["counting"]["totals"]
print(d["valid"], len(d["cohort"]), sorted((c["name"],c["status"]) for c in d["collectors"]),
      sorted(m["what"] for m in d["not_measured"]))
print(t["i2"]["r00c0"]["estimate"], t["i2"]["r00c0"]["running_ppm"], t["i3"]["r00c0"]["status"],
      "value" in t["i3"]["r00c0"], d["dominant_cost"]["inc"], d["dominant_cost"]["estimate"])' "$BATS_TEST_TMPDIR/a.json"
	assert_line "True 3 [('counting', 'ok'), ('hwcount', 'unavailable'), ('sched', 'not-requested'), ('syscalls', 'ok')] ['counter cycles', 'hardware-events', 'hwcount', 'read_format-lost']"
	assert_line "True 500000 unavailable False i2 False"
}

@test "an invalid bundle is refused with exit 1 and its failed checks" {
	b=$(mk b minimal)
	sed -i 's/"result": "complete"/"result": "interrupted"/' "$b/data/run.json"
	rebag "$b"
	run pmuanalyze "$b"
	assert_failure 1
	assert_output --partial "is invalid"
	assert_output --partial "RESULT"
}

@test "--allow-invalid analyzes anyway with the failures on top" {
	b=$(mk b minimal)
	sed -i 's/"result": "complete"/"result": "interrupted"/' "$b/data/run.json"
	rebag "$b"
	run pmuanalyze --allow-invalid "$b"
	assert_success
	assert_line --index 0 --partial "INVALID BUNDLE (analyzed on request)"
	assert_line --index 1 --partial "RESULT data/run.json"
}

@test "an archive bundle is described like a directory" {
	b=$(mk b.tar.gz multiproc)
	run pmuanalyze "$b"
	assert_success
	assert_output --partial "process tree (3 incarnations)"
}
