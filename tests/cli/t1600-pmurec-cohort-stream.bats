#!/usr/bin/env bats
# pmurec writes the cohort as a stream (spec 1.3, data/cohort.jsonl) while
# it follows, in bounded memory, and never past the bounds the validator
# accepts.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	needs_backend linux
	cd "$BATS_TEST_TMPDIR"
}

# cpy 'expression using d' COHORT.jsonl (see cohort_doc.py)
cpy() {
	$PY -c "import sys; sys.path.insert(0, '$BATS_TEST_DIRNAME'); import json, cohort_doc; d=cohort_doc.load(sys.argv[1]); print(($1))" "$2"
}

# peak_kib OUT CMD...: run CMD under /usr/bin/time, its peak RSS (KiB) in OUT
peak_kib() {
	local out=$1
	shift
	/usr/bin/time -f '%M' -o "$out" "$@"
}

@test "the cohort is data/cohort.jsonl, its records in the agreed order, and the bundle validates" {
	run pmurec -o r.bundle -- sh -c 'ls / >/dev/null; (sleep 0.05; /bin/true) & wait'
	assert_success
	[ -f r.bundle/data/cohort.jsonl ]
	[ ! -e r.bundle/data/cohort.json ]
	f=r.bundle/data/cohort.jsonl
	run jq -r 'select(.type == "header") | .stream + " " + .spec' "$f"
	assert_output "cohort 1.8"
	# one incarnation record per id, and exactly one end for each
	run jq -rs '[.[] | select(.type == "incarnation") | .id] | (length == (unique | length)) and length == 4' "$f"
	assert_output true
	run jq -rs '[.[] | select(.type == "end") | .inc] | sort == ([.[]] | unique) and length == 4' "$f"
	assert_output true
	# every parent, and every record's incarnation, came earlier; nothing after an end
	run jq -rs 'reduce .[1:][] as $r ({seen: {}, ended: {}, ok: true};
		if $r.type == "incarnation" then
			.ok = (.ok and ($r.parent == null or .seen[$r.parent] != null)) | .seen[$r.id] = true
		else
			.ok = (.ok and .seen[$r.inc] != null and .ended[$r.inc] == null)
			| if $r.type == "end" then .ended[$r.inc] = true else . end
		end) | .ok' "$f"
	assert_output true
	# the root first, a thread record for each pid, execs in time order
	run jq -rs '.[1].type == "incarnation" and .[1].parent == null' "$f"
	assert_output true
	run jq -rs '[.[] | select(.type == "incarnation") | {id, pid}] as $i
		| [.[] | select(.type == "thread") | "\(.inc):\(.tid)"] as $t
		| all($i[]; ("\(.id):\(.pid)") as $k | $t | index($k) != null)' "$f"
	assert_output true
	run jq -rs '[.[] | select(.type == "exec")] | group_by(.inc) | all(.[]; [.[].t_ns] == ([.[].t_ns] | sort))' "$f"
	assert_output true
	run jq -rs '[.[] | select(.type == "exec") | .path | split("/") | last] | sort | join(" ")' "$f"
	assert_output --regexp '^(bash|dash) ls sleep true$'
	# nine totals per incarnation, a value exactly when ok
	run jq -rs '[.[] | select(.type == "resource")] | group_by(.inc) | all(.[]; length == 9)
		and all(.[][]; (.status == "ok") == (.[.field] != null))' "$f"
	assert_output true
	run cpy '[(i["comm"], i["exit"]) for i in d["incarnations"]][0]' "$f"
	assert_output "('sh', {'kind': 'exited', 'code': 0})"
	run pmuvalidate r.bundle
	assert_success
}

@test "an attached tree still running at the detach ends its incarnations without end_ns" {
	sh -c 'while :; do sleep 0.05; done' &
	target=$!
	sleep 0.2
	run pmurec --max-duration 300 --pid "$target" -o a.bundle
	assert_success
	kill "$target"
	run jq -rs --argjson p "$target" '[.[] | select(.type == "incarnation" and .pid == $p) | .id][0] as $i
		| [.[] | select(.type == "end" and .inc == $i)] | length == 1 and (.[0] | has("end_ns") | not) and .[0].exit == "unknown"' a.bundle/data/cohort.jsonl
	assert_output true
	run pmuvalidate a.bundle
	assert_success
}

@test "at the cohort's bound the run ends truncated with the reason, and the bundle holds no more" {
	# ptrace holds the task past the bound before it runs, and kills it
	PMUREC_TEST_MAX_INCARNATIONS=5 run pmurec --follower ptrace -o b.bundle -- sh -c 'i=0; while [ $i -lt 50 ]; do /bin/true; i=$((i+1)); done'
	assert_failure 143
	assert_output --partial "the cohort reached 5 incarnations, the most a bundle holds"
	run jq -r '.result + ": " + .result_reason' b.bundle/data/run.json
	assert_output "truncated: the cohort reached 5 incarnations, the most a bundle holds: it was sent SIGTERM"
	run jq -rs '[.[] | select(.type == "incarnation")] | length' b.bundle/data/cohort.jsonl
	assert_output 5
	run cpy 'len(d["incarnations"])' b.bundle/data/cohort.jsonl
	assert_output 5
	# the bundle says what it is: truncated, and otherwise sound
	run pmuvalidate --json b.bundle
	echo "$output" >v.json
	run ids v.json
	assert_output RESULT
}

@test "at the cohort's bound with the eBPF follower: truncated with the reason, and what ran past it is counted lost" {
	[ "$(id -u)" = 0 ] || skip "the eBPF follower needs root"
	PMUREC_TEST_MAX_INCARNATIONS=5 run pmurec --follower ebpf -o e.bundle -- sh -c 'i=0; while [ $i -lt 50 ]; do /bin/true; i=$((i+1)); done'
	grep -q '"evidence":"ebpf follower' e.bundle/data/collectors/cohort/lifecycle.jsonl || skip "the eBPF follower did not run here"
	assert_output --partial "the cohort reached 5 incarnations, the most a bundle holds"
	run jq -r '.result' e.bundle/data/run.json
	assert_output truncated
	run jq -rs '[.[] | select(.type == "incarnation")] | length' e.bundle/data/cohort.jsonl
	assert_output 5
	# no task is held before it runs: those past the bound ran, and their
	# records are not in the bundle, so they are a counted loss
	run pmuvalidate --json e.bundle
	echo "$output" >v.json
	run ids v.json
	assert_output --partial RESULT
}

@test "a write error of the cohort stream is the recorder's error, never a short stream" {
	command -v prlimit >/dev/null || skip "prlimit (util-linux) is not installed"
	# RLIMIT_FSIZE: a write past 256 KiB fails with EFBIG (SIGXFSZ ignored)
	run sh -c 'trap "" XFSZ; exec prlimit --fsize=262144 pmurec -o w.bundle -- sh -c "i=0; while [ \$i -lt 600 ]; do /bin/true; i=\$((i+1)); done"'
	assert_failure 125
	assert_output --partial "cannot write"
	[ ! -e w.bundle ]
	run bash -c "ls -A | grep -c pmu-staging"
	assert_output 0
}

@test "provenance.json stays small: images past the bound are left out, counted and said" {
	mkdir bin
	for i in $(seq 1030); do cp /bin/true "bin/t$i"; done
	run pmurec -o p.bundle -- sh -c 'for f in bin/t*; do "$f"; done'
	assert_success
	assert_output --regexp "pmurec: provenance.json: [0-9]+ distinct image\(s\) seen were not described"
	run jq -r '.images | length' p.bundle/data/provenance.json
	assert_output 1024
	run jq -r '.images_note' p.bundle/data/provenance.json
	assert_output --regexp '^[0-9]+ distinct image\(s\) seen were not described: the list holds at most 1024 images'
	n=$(jq -r '.images_note | split(" ")[0]' p.bundle/data/provenance.json)
	[ "$n" -ge 6 ]
	[ "$(stat -c %s p.bundle/data/provenance.json)" -lt 4194304 ]
	run pmuvalidate -q p.bundle
	assert_success
}

# The hard memory limit of issue 12: pmurec's peak RSS does not grow with
# the number of processes it follows (it grew by 26 KiB each: 62 MiB at
# 2,000, 273 MiB at 10,000).  bench/record measures the curve.
@test "pmurec following 2,000 and 10,000 short processes stays under 64 MiB" {
	[ -x /usr/bin/time ] || skip "/usr/bin/time (GNU time) is not installed"
	for n in 2000 10000; do
		run peak_kib "rss.$n" pmurec -o "m$n.bundle" -- sh -c "i=0; while [ \$i -lt $n ]; do /bin/true & i=\$((i+1)); done; wait"
		assert_success
		run jq -rs '[.[] | select(.type == "end")] | length' "m$n.bundle/data/cohort.jsonl"
		assert_output "$((n + 1))"
		kib=$(tail -n1 "rss.$n")
		echo "n=$n peak RSS ${kib} KiB"
		rss_under "$kib"
	done
	run pmuvalidate -q m10000.bundle
	assert_success
}
