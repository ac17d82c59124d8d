#!/usr/bin/env bats
# The sampling collector on a real hardware PMU: cycles-based sampling
# (make check-pmu runs this suite in the emulated arm64 guest, whose PMU is
# QEMU's PMUv3 model with overflow interrupts; on a host without a PMU every
# test skips with "no hardware PMU").  What is tested is pmu's behaviour:
# the event chosen and why, samples taken by the PMU's overflow interrupt
# and attributed to the right incarnations, the rule that leaves the PMU's
# counters to -e when it counts hardware events.  No python, perf or cc in
# the guest: the records are read with jq.

load helpers

setup() {
	needs_backend linux
	needs_hw_pmu
	B=$BATS_TEST_TMPDIR/s.bundle
	S=$B/data/collectors/sampling/samples.jsonl
}

@test "cycles: chosen when -e counts no hardware event; samples of both incarnations, the summary their count" {
	run pmurec --mode full -e task-clock -o "$B" -- hot 30 child
	assert_success
	run jq -r 'select(.type == "config") | "\(.event) | \(.event_reason)"' "$S"
	echo "$output"
	assert_output --regexp '^cycles \| the core PMU \(.+\) samples cycles, and -e counts no hardware event$'
	run jq -r 'select(.type == "sample") | .inc' "$S"
	assert_line i1
	assert_line i2
	n=$(jq -s '[.[] | select(.type == "sample")] | length' "$S")
	run jq -r 'select(.type == "summary") | .samples' "$S"
	assert_output "$n"
	# the PMU's samples carry the period it counted (frequency mode)
	run jq -s '[.[] | select(.type == "sample") | .period > 0] | all' "$S"
	assert_output true
	run jq -s '[.[] | .t_ns // empty] | . == sort' "$S"
	assert_output true
	run pmuvalidate "$B"
	echo "$output"
	assert_success
}

@test "-e counting hardware events: cpu-clock samples, the PMU's counters left to the counts, and the bundle says why" {
	run pmurec --mode full -e cycles,instructions -o "$B" -- hot 10
	assert_success
	run jq -r 'select(.type == "config") | "\(.event) | \(.event_reason)"' "$S"
	assert_output --partial "cpu-clock | -e counts hardware events (cycles)"
	# the counts stayed exact
	run jq -r 'select(.type == "count" and .event == "cycles") | .status' "$B/data/collectors/counting/counts.jsonl"
	refute_output --partial dropped
}

@test "--sample-event cycles with a period: the event the user named, sampled every N cycles" {
	run pmurec --mode light --sample-event cycles --period 1000000 -e task-clock -o "$B" -- hot 10
	assert_success
	run jq -r 'select(.type == "config") | "\(.event) \(.period) \(.freq_hz) \(.event_reason)"' "$S"
	assert_output "cycles 1000000 null --sample-event cycles"
	run jq -s '[.[] | select(.type == "sample")] | length > 0' "$S"
	assert_output true
}
