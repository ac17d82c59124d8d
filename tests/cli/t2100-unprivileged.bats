#!/usr/bin/env bats
# The validator needs no privilege: as nobody it validates a readable bundle.

load helpers

setup() {
	nobody_setup
}

teardown() {
	nobody_teardown
}

mkw() {
	mkfixture "$2" "$W/$1" >/dev/null
	echo "$W/$1"
}

@test "as nobody, a valid bundle validates" {
	b=$(mkw b multiproc)
	chmod -R a+rX "$b"
	run as_nobody env TMPDIR=/tmp "$PMU_BUILD/pmuvalidate" "$b"
	assert_success
	assert_output --partial valid
}

@test "as nobody, an archive bundle is extracted privately and validates" {
	b=$(mkw b.tar.zst multiproc)
	chmod a+r "$b"
	run as_nobody env TMPDIR=/tmp "$PMU_BUILD/pmuvalidate" "$b"
	assert_success
}

@test "as nobody, an unreadable file is an invalid bundle, not a crash" {
	b=$(mkw b minimal)
	chmod -R a+rX "$b"
	chmod 600 "$b/data/cohort.jsonl"
	run as_nobody env TMPDIR=/tmp "$PMU_BUILD/pmuvalidate" "$b"
	assert_failure 1
	assert_output --partial "data/cohort.jsonl"
}
