#!/usr/bin/env bats
# run.json's host_load (spec 1.4): the whole host's CPU time over each
# repetition, read from /proc/stat by pmurec, scope system, never the
# cohort's; and what the validator requires of it.  The host is loaded and
# noisy: the bounds are loose, and every number is derived from what this
# test itself measured, never from a fixed timing.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# py 'expression using d (run.json)' RUN.JSON
py() {
	$PY -c "import json,sys; d=json.load(open(sys.argv[1])); print(($1))" "$2"
}

edit_run() { # BUNDLE PYTHON: edit run.json's object r in place, rebag
	$PY - "$1/data/run.json" <<<"import json, sys
p = sys.argv[1]
r = json.load(open(p))
h = r['host_load']
$2
open(p, 'w').write(json.dumps(r, indent=2) + '\n')"
	rebag "$1"
}

@test "every repetition's run.json has host_load: scope system, ok, from /proc/stat, with the host's CPUs and tick" {
	needs_backend linux
	[ -r /proc/stat ] || skip "no readable /proc/stat"
	run pmurec --repeat 2 -o r.bundle -- sleep 0.3
	assert_success
	run pmuvalidate r.bundle
	assert_success
	cpus=$(grep -c '^cpu[0-9]' /proc/stat)
	tick=$((1000000000 / $(getconf CLK_TCK)))
	for f in r.bundle/data/run.json r.bundle/data/repeats/2/run.json; do
		run py 'd["host_load"]["scope"], d["host_load"]["status"], d["host_load"]["source"], d["host_load"]["cpus"], d["host_load"]["resolution_ns"]' "$f"
		assert_output "('system', 'ok', '/proc/stat', $cpus, $tick)"
		# the interval is the repetition's window
		run py 'd["host_load"]["interval_ns"] <= d["end_ns"] - d["start_ns"] and d["host_load"]["interval_ns"] >= 300000000' "$f"
		assert_output True
	done
	run py 'sorted(d["units"][k] for k in ("interval_ns", "cpus", "resolution_ns", "busy_ns", "steal_ns", "idle_ns", "iowait_ns"))' r.bundle/data/run.json
	assert_output "['count', 'ns', 'ns', 'ns', 'ns', 'ns', 'ns']"
}

@test "host_load's busy + idle + steal + iowait is about interval x cpus, within ticks" {
	needs_backend linux
	[ -r /proc/stat ] || skip "no readable /proc/stat"
	run pmurec -m none -o r.bundle -- sleep 1
	assert_success
	# /proc/stat's CPUs tick apart: a few ticks per CPU either way, and
	# loose beyond that (a CPU offline or entering NOHZ idle mid-window)
	run py '(lambda h: (h["busy_ns"] + h["idle_ns"] + h["steal_ns"] + h["iowait_ns"], h["interval_ns"] * h["cpus"], 4 * h["resolution_ns"] * h["cpus"]))(d["host_load"])' r.bundle/data/run.json
	echo "sum, interval x cpus, 4 ticks per CPU: $output"
	run py '(lambda h, s: 0.75 * h["interval_ns"] * h["cpus"] - 4 * h["resolution_ns"] * h["cpus"] <= s <= 1.25 * h["interval_ns"] * h["cpus"] + 4 * h["resolution_ns"] * h["cpus"])(d["host_load"], sum(d["host_load"][k] for k in ("busy_ns", "idle_ns", "steal_ns", "iowait_ns")))' r.bundle/data/run.json
	assert_output True
}

@test "a spinner outside the cohort shows in host_load's busy_ns, never in the cohort's numbers" {
	needs_backend linux
	[ -r /proc/stat ] || skip "no readable /proc/stat"
	tick=$((1000000000 / $(getconf CLK_TCK)))
	sh -c 'while :; do :; done' &
	spin=$!
	# The command reads the spinner's CPU time (utime + stime, ticks) when
	# it starts and when it ends: its life lies inside the repetition's
	# window, so what the spinner spent meanwhile is a floor for busy_ns
	# that no timing of this loaded host can move.
	SPIN=$spin run pmurec -o r.bundle -- sh -c 'awk "{print \$14 + \$15}" /proc/$SPIN/stat >s0; sleep 2; awk "{print \$14 + \$15}" /proc/$SPIN/stat >s1'
	kill "$spin"
	wait "$spin" 2>/dev/null || :
	assert_success
	run pmuvalidate r.bundle
	assert_success
	floor=$((($(cat s1) - $(cat s0) - 2) * tick))
	echo "the spinner spent at least $floor ns inside the window"
	[ "$floor" -gt 100000000 ] || skip "the spinner got too little CPU on this loaded host to tell ($floor ns)"
	run py "d['host_load']['busy_ns'] >= $floor" r.bundle/data/run.json
	assert_output True
	# the cohort's CPU time holds nothing of the spinner
	run py "d['command_rusage']['cpu_user_ns'] + d['command_rusage']['cpu_system_ns'] < $floor / 2" r.bundle/data/run.json
	assert_output True
	run $PY -c 'import json,sys
print(sorted({r["pid"] for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "incarnation"}.intersection({int(sys.argv[2])})))' r.bundle/data/cohort.jsonl "$spin"
	assert_output "[]"
}

@test "pmuvalidate: a 1.4 run.json without host_load is refused (SCHEMA-FIELD); a 1.3 one needs none" {
	b=$(mk b minimal)
	edit_run "$b" "del r['host_load']"
	run pmuvalidate "$b"
	assert_failure 1
	assert_output --partial "required field 'host_load' is missing"
	b3=$BATS_TEST_TMPDIR/b13
	mkfixture multiproc "$b3" --spec 1.3 >/dev/null
	run py '"host_load" in d' "$b3/data/run.json"
	assert_output False
	run pmuvalidate "$b3"
	assert_success
}

@test "pmuvalidate: host_load of another scope than system is refused (SCHEMA-FIELD)" {
	b=$(mk b minimal)
	edit_run "$b" "h['scope'] = 'cohort'"
	run pmuvalidate "$b"
	assert_failure 1
	assert_output --partial "SCHEMA-FIELD"
	assert_output --partial "run.host_load.scope"
}

@test "pmuvalidate: host_load's status is ok or unavailable, nothing else (SCHEMA-FIELD)" {
	b=$(mk b minimal)
	edit_run "$b" "h.clear(); h.update(scope='system', status='failed', reason='x', remedy='y')"
	run pmuvalidate "$b"
	assert_failure 1
	assert_output --partial "run.host_load: status 'failed'; it is 'ok' or 'unavailable'"
}

@test "pmuvalidate: host_load unavailable needs reason and remedy (STATUS-REASON), and then has no value (FIELD-STATUS)" {
	b=$(mk b minimal)
	edit_run "$b" "h['status'] = 'unavailable'; h['reason'] = 'no /proc'"
	run pmuvalidate "$b"
	assert_failure 1
	assert_output --partial "STATUS-REASON"
	assert_output --partial "FIELD-STATUS"
	assert_output --partial "status 'unavailable' but 'busy_ns' is present"
	b=$(mk c minimal)
	edit_run "$b" "r['host_load'] = dict(scope='system', status='unavailable', reason='no /proc', remedy='mount it')"
	run pmuvalidate "$b"
	assert_success
}

@test "pmuvalidate: host_load ok without a value is refused (FIELD-STATUS), never read as 0" {
	b=$(mk b minimal)
	edit_run "$b" "del h['steal_ns']"
	run pmuvalidate "$b"
	assert_failure 1
	assert_output --partial "status 'ok' but 'steal_ns' is absent"
}

@test "host_load's recorder_cpu_ns is pmurec's own CPU, inside busy_ns" {
	needs_backend linux
	[ -r /proc/stat ] || skip "no readable /proc/stat"
	pmurec -o r.bundle -- true
	run py 'd["host_load"]["status"], 0 < d["host_load"]["recorder_cpu_ns"] <= d["host_load"]["busy_ns"] + d["host_load"]["cpus"] * d["host_load"]["resolution_ns"]' r.bundle/data/run.json
	assert_output "('ok', True)"
}

@test "pmuvalidate: host_load ok without recorder_cpu_ns is refused (FIELD-STATUS)" {
	b=$(mk b minimal)
	edit_run "$b" "del h['recorder_cpu_ns']"
	run pmuvalidate "$b"
	assert_failure 1
	assert_output --partial "status 'ok' but 'recorder_cpu_ns' is absent"
}

@test "pmuvalidate: host_load's interval longer than the run window is refused (TIME-WINDOW)" {
	b=$(mk b minimal)
	edit_run "$b" "h['interval_ns'] = r['end_ns'] - r['start_ns'] + 1"
	run pmuvalidate "$b"
	assert_failure 1
	assert_output --partial "TIME-WINDOW"
	assert_output --partial "run.host_load: interval_ns"
}
