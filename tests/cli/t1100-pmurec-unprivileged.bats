#!/usr/bin/env bats
# As nobody (perf_event_paranoid=2 here allows only user-space counting of
# one's own processes), pmurec records its command with what is allowed,
# and the bundle says what is missing and how to get it.

load helpers

setup() {
	needs_backend linux
	nobody_setup
}

teardown() {
	nobody_teardown
}

@test "as nobody, the recorded bundle validates and follows the whole tree" {
	run as_nobody "$PMU_BUILD/pmurec" -o "$W/u.bundle" -- sh -c 'ls / >/dev/null; true'
	assert_success
	run pmuvalidate "$W/u.bundle"
	assert_success
	run $PY -c 'import sys; sys.path.insert(0, sys.argv[2]); import cohort_doc; d=cohort_doc.load(sys.argv[1]); print([i["comm"] for i in d["incarnations"]])' "$W/u.bundle/data/cohort.jsonl" "$BATS_TEST_DIRNAME"
	assert_output "['sh', 'ls']"
}

@test "as nobody, every capability that is missing says why and how to get it" {
	run as_nobody "$PMU_BUILD/pmurec" -o "$W/u.bundle" -- true
	assert_success
	run $PY -c 'import json,sys
d=json.load(open(sys.argv[1]))
bad=[c["name"] for c in d["capabilities"] if c["status"] != "ok" and not (c.get("reason") and c.get("remedy"))]
k=[c for c in d["capabilities"] if c["name"] == "kernel-counting"][0]
print(bad, k["status"], k.get("remedy"))' "$W/u.bundle/data/capabilities.json"
	paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
	if [ "$paranoid" -ge 2 ]; then
		assert_output "[] unavailable run as root, grant CAP_PERFMON, or set kernel.perf_event_paranoid=1"
	else
		assert_output --partial "[] ok"
	fi
}
