#!/usr/bin/env bats
# pmurec in this version: truthful help, and it records nothing.

load helpers

@test "pmurec --help says recording is not available yet" {
	run pmurec --help
	assert_success
	assert_output --partial "usage: pmurec -o BUNDLE -- COMMAND"
	assert_output --partial "cannot record yet"
}

@test "pmurec --version names the version and the spec" {
	run pmurec --version
	assert_success
	assert_output --regexp '^pmurec [0-9]+\.[0-9]+\.[0-9]+ \(spec 1\.0, revision '
}

@test "pmurec asked to record exits 2 and writes no bundle" {
	cd "$BATS_TEST_TMPDIR"
	run pmurec -o run.bundle -- true
	assert_failure 2
	assert_output --partial "recording is not available"
	[ ! -e run.bundle ]
	[ -z "$(ls -A)" ]
}

@test "pmurec rejects an unknown option with exit 2" {
	run pmurec --no-such-option
	assert_failure 2
	assert_output --partial usage
}
