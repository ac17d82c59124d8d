#!/usr/bin/env bats
# pmuanalyze's single-bundle report, readable: "not measured" by cause,
# settings left out, CPU times no finer than their source, rchar/wchar
# named, the repetition the header shows, exit codes and signals in CSV.

load helpers

setup() {
	T=$BATS_TEST_TMPDIR
}

@test "not measured is grouped by cause: each cause once, every item in one group" {
	needs_backend linux
	run pmurec -o "$T/g.bundle" -- true
	assert_success
	pmuanalyze --json "$T/g.bundle" >"$T/g.json"
	run $PY - "$T/g.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
g = d["not_measured_groups"]
causes = [(x["status"], x["reason"], x["remedy"]) for x in g]
whats = sorted(w for x in g for w in x["what"])
print(len(causes) == len(set(causes)), whats == sorted(m["what"] for m in d["not_measured"]),
      max(len(x["what"]) for x in g) if g else 0)
EOF
	assert_line --regexp '^True True [0-9]+$'
	n=$(awk '{print $3}' <<<"$output")
	[ "$n" -gt 1 ] || skip "no two items of this host share a cause (it has a hardware PMU)"
	# the text lists a cause of several items once, with their count
	run pmuanalyze "$T/g.bundle"
	assert_line --regexp "^  .* \($n\)$"
	run grep -c 'this host exposes no hardware PMU that counts' <<<"$output"
	[ "$output" -le 1 ]
}

@test "host settings are not measurements: left out of not measured" {
	needs_backend linux
	run pmurec -o "$T/s.bundle" -- true
	assert_success
	$PY -c 'import json,sys
c = json.load(open(sys.argv[1]))["capabilities"]
sys.exit(0 if any(x["name"] == "ptrace_scope" and x["status"] != "ok" for x in c) else 1)' "$T/s.bundle/data/capabilities.json" ||
		skip "ptrace_scope is readable on this host: no setting is missing"
	pmuanalyze "$T/s.bundle" >"$T/s.txt"
	run sed -n '/^not measured/,/^$/p' "$T/s.txt"
	assert_line --regexp '^not measured '
	refute_line --regexp '^  ptrace_scope '
	# and a collector that worked and had nothing to record is not missing
	refute_line --regexp '^  control +no-events'
}

@test "tick-resolution CPU times are not shown beside an exact task-clock, nor to 0.1 ms" {
	needs_backend linux
	# the ptrace follower reads /proc/PID/stat (10 ms ticks) and counts
	# task-clock per thread
	run pmurec --follower ptrace -o "$T/t.bundle" -- sh -c 'ls / >/dev/null'
	assert_success
	grep -q 'clock ticks' "$T/t.bundle/data/cohort.jsonl" || skip "this follower's CPU times are not in clock ticks"
	run pmuanalyze "$T/t.bundle"
	assert_success
	refute_line --regexp ' user [0-9]+\.[0-9] ms'
	assert_line --regexp '^ +task-clock [0-9.]+ ms '
}

@test "read and write byte counts are named rchar and wchar, with what they count" {
	b=$(mk b multiproc)
	run pmuanalyze "$b"
	assert_line "  (rchar/wchar: bytes passed to read/write-like system calls, page cache included; not storage I/O)"
	assert_line --regexp ' rchar 8\.8 KiB  wchar 0\.2 KiB$'
	refute_output --partial " written "
}

@test "with --repeat the header and tree say they are repetition 1 of N, beside the median" {
	needs_backend linux
	run pmurec --repeat 3 -o "$T/r.bundle" -- true
	assert_success
	run pmuanalyze "$T/r.bundle"
	assert_line --regexp '^wall     [0-9.]+ ms \(run window of repetition 1 of 3; the root.s lifetime, median of 3: [0-9.]+ ms\)$'
	assert_line --regexp '^process tree \(repetition 1 of 3; 1 incarnations\)$'
	assert_line "wall time (repetition 1)"
}

@test "CSV carries each process's exit code and signal" {
	needs_backend linux
	run pmurec -o "$T/x.bundle" -- sh -c 'sh -c "kill -TERM \$\$"; exit 3'
	[ "$status" -eq 3 ] || [ "$status" -eq 0 ]
	run pmuanalyze --csv "$T/x.bundle"
	assert_success
	assert_line --regexp '^table,inc,pid,comm,parent,wall_ns,exit,exit_code,exit_signal,'
	assert_line --regexp '^processes,i1,[0-9]+,sh,,[0-9]+,exited,3,,'
	assert_line --regexp '^processes,i2,[0-9]+,sh,i1,[0-9]+,signaled,,15,'
	assert_line --regexp '^wall_time,ok,[0-9]+,[0-9]+,[0-9]+,'
}
