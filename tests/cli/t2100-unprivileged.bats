#!/usr/bin/env bats
# The validator needs no privilege: as nobody it validates a readable bundle.

load helpers

setup() {
	[ "$(id -u)" -eq 0 ] || skip "needs root to switch to nobody with setpriv"
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
	# bats' own temporary directories are private to root: work in one
	# that nobody can traverse.
	W=$(mktemp -d /tmp/pmu-nobody.XXXXXX)
	chmod 755 "$W"
}

teardown() {
	[ -n "${W:-}" ] && rm -rf "$W"
}

mkw() {
	mkfixture "$2" "$W/$1" >/dev/null
	echo "$W/$1"
}

as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all -- "$@"
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
	chmod 600 "$b/data/cohort.json"
	run as_nobody env TMPDIR=/tmp "$PMU_BUILD/pmuvalidate" "$b"
	assert_failure 1
	assert_output --partial "data/cohort.json"
}
