#!/usr/bin/env bats
# The stub backend (make BACKEND=stub): pmurec on a platform pmu has no
# backend for says so, capability by capability, and records nothing.

load helpers

REASON="pmu has no backend for this platform (built with BACKEND=stub)"

setup() {
	needs_backend stub
	cd "$BATS_TEST_TMPDIR"
}

@test "--probe --json: the host from uname, every capability unavailable with the reason and a remedy" {
	run pmurec --probe --json
	assert_success
	echo "$output" >probe.json
	run $PY - "$REASON" <<'EOF2'
import json, sys
d = json.load(open("probe.json"))
caps = d["capabilities"]
print(len(caps) >= 10, all(h in d["host"] and d["host"][h] for h in ("os", "arch", "kernel")))
bad = [c["name"] for c in caps
       if c["status"] != "unavailable" or c.get("reason") != sys.argv[1] or not c.get("remedy") or "value" in c]
print(bad)
print(sorted({"software-events", "hardware-events", "pmu-devices"} - {c["name"] for c in caps}))
EOF2
	assert_output "$(printf 'True True\n[]\n[]')"
}

@test "--probe: each capability's line says unavailable, why and what to do" {
	run pmurec --probe
	assert_success
	assert_line --regexp '^software-events +unavailable'
	assert_line --partial "why: $REASON"
	assert_line --partial "remedy: record on Linux with the default build (BACKEND=linux)"
	refute_line --regexp ' ok '
}

@test "recording is refused with the reason: the command does not run and no bundle is left" {
	for mode in none light; do
		run pmurec --mode $mode -o r.bundle -- touch ran
		assert_failure 125
		assert_output "pmurec: cannot run 'touch': $REASON"
		[ ! -e ran ] || fail "mode $mode ran the command"
		[ -z "$(ls -A)" ] || fail "mode $mode left $(ls -A)"
	done
}

@test "the event list is parsed as anywhere: a malformed one is a usage error, a good one only unavailable" {
	run pmurec -e cyclez -o r.bundle -- true
	assert_failure 2
	assert_output --partial "unknown event 'cyclez' (did you mean 'cycles'?)"
	run pmurec -e cycles,cpu-cycles -o r.bundle -- true
	assert_failure 2
	assert_output --partial "event 'cpu-cycles' repeats 'cycles'"
	run pmurec -e cycles,cpu/event=0x3c/,pfm:INST_RETIRED -o r.bundle -- true
	assert_failure 125
	assert_output "pmurec: cannot run 'true': $REASON"
	run pmurec --list-events
	assert_success
	assert_line --regexp '^task-clock +software +ns '
}
