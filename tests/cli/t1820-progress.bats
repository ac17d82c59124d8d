#!/usr/bin/env bats
# The progress line of a long recording: on a terminal (a pty from
# script(1)), a campaign or --repeat N > 1 shows which run is in progress,
# rewritten in place and erased at the end; with stderr not a terminal,
# nothing of it.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	needs_backend linux
	cd "$BATS_TEST_TMPDIR"
}

ERASE=$'\r\e[K'

# on_pty COMMAND: run the shell command with stdin, stdout and stderr on a
# pty (util-linux script); what the pty got is in $output
on_pty() {
	command -v script >/dev/null || skip "script (util-linux) is not installed"
	script -V 2>/dev/null | grep -q util-linux || skip "script is not util-linux's (no -e, -c)"
	run script -qec "$1" /dev/null
}

@test "on a terminal, --repeat 3 shows run k of 3 with the time elapsed and an estimate, and erases it at the end" {
	on_pty "pmurec -o r.bundle --repeat 3 -- true"
	assert_success
	assert_output --partial "${ERASE}pmurec: run 1 of 3 (light, repetition 1 of 3), "
	assert_output --partial "the rest is estimated after the first run"
	assert_output --partial "${ERASE}pmurec: run 2 of 3 (light, repetition 2 of 3), "
	assert_output --partial "${ERASE}pmurec: run 3 of 3 (light, repetition 3 of 3), "
	assert_output --regexp "run 3 of 3 \(light, repetition 3 of 3\), [0-9.]+ s elapsed, about [0-9.]+ s left \(estimate\)"
	# the last thing on the terminal is the erase: no line is left behind
	[[ $output == *"(estimate)$ERASE" ]] || fail "the line is not erased at the end: $(printf %q "${output: -120}")"
	run pmuvalidate r.bundle
	assert_success
}

@test "on a terminal, an --ab campaign names each run's mode" {
	on_pty "pmurec --ab none,light --repeat 2 -o ab -- true"
	assert_success
	assert_output --partial "pmurec: run 1 of 4 (none mode, repetition 1 of 2)"
	assert_output --partial "pmurec: run 2 of 4 (light mode, repetition 1 of 2)"
	assert_output --partial "pmurec: run 4 of 4 (light mode, repetition 2 of 2)"
}

@test "on a terminal, a --variants campaign names each run's variant; the command's own output still comes through" {
	on_pty "pmurec --variants old,new -o v -- echo out-old ::: echo out-new"
	assert_success
	assert_output --partial "pmurec: run 1 of 2 (variant old, repetition 1 of 1)"
	assert_output --partial "pmurec: run 2 of 2 (variant new, repetition 1 of 1)"
	assert_output --partial "out-old"
	assert_output --partial "out-new"
}

@test "on a terminal, a single run shows no progress line" {
	on_pty "pmurec -o r.bundle -- echo single"
	assert_success
	assert_output --partial single
	refute_output --partial "pmurec: run "
	refute_output --partial "$ERASE"
}

@test "with stderr not a terminal, nothing of the progress is written" {
	run --separate-stderr pmurec --repeat 2 --variants a,b -o v -- echo a ::: echo b
	assert_success
	[[ $stderr != *"run 1 of"* && $stderr != *$'\e'* && $stderr != *$'\r'* ]] ||
		fail "progress on a stderr that is no terminal: $(printf %q "$stderr")"
	[[ $output != *$'\e'* ]] || fail "escape sequences on stdout: $(printf %q "$output")"
	assert_output "a
b
a
b"
}

@test "with stdout on a terminal but stderr not, nothing of the progress is written" {
	command -v script >/dev/null || skip "script (util-linux) is not installed"
	script -V 2>/dev/null | grep -q util-linux || skip "script is not util-linux's (no -e, -c)"
	run script -qec "pmurec --repeat 2 -o r.bundle -- true 2>err" /dev/null
	assert_success
	[ -f err ]
	run cat -A err
	refute_output --partial "run 1 of"
	refute_output --partial '^['
	refute_output --partial "pmurec: run"
}
