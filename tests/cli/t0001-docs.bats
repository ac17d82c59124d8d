#!/usr/bin/env bats
# The documentation that ships is well formed and matches the tools.

load helpers
top="$BATS_TEST_DIRNAME/../.."

@test "every man page renders without warnings" {
	for m in "$top"/man/*.[15]; do
		run groff -man -ww -z "$m"
		assert_success
		assert_output ""
	done
}

@test "every long option in --help is documented in the tool's man page" {
	for t in pmurec pmuvalidate pmuanalyze; do
		for o in $($t --help | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
			grep -q -- "$(echo "$o" | sed 's/-/\\\\-/g')" "$top/man/$t.1" ||
				fail "$t: $o is not in man/$t.1"
		done
	done
}

@test "README gives the two set-up commands" {
	run grep -c -E '^make (demo|check) +#' "$top/README.md"
	assert_output 2
}
