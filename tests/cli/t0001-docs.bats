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

@test "the man pages, --help and the spec name the spec version the tools implement" {
	v=$(pmuvalidate --version | sed -n 's/.*(spec \([0-9]*\.[0-9]*\),.*/\1/p')
	[ -n "$v" ] || fail "no spec version in pmuvalidate --version"
	for t in pmurec pmuanalyze; do
		run $t --version
		assert_output --partial "(spec $v,"
	done
	# the first version each names is the current one
	first() { grep -o -m1 -E "$1 [0-9]+\.[0-9]+" | head -1; }
	for t in pmurec pmuvalidate; do
		[ "$($t --help | first spec)" = "spec $v" ] || fail "$t --help: '$($t --help | first spec)', not spec $v"
		[ "$(first spec <"$top/man/$t.1")" = "spec $v" ] ||
			fail "man/$t.1: '$(first spec <"$top/man/$t.1")', not spec $v"
	done
	[ "$(first spec <"$top/man/pmu-bundle.5")" = "spec $v" ] || fail "man/pmu-bundle.5 does not name spec $v first"
	[ "$(first version <"$top/bundle-spec/README.md")" = "version $v" ] ||
		fail "bundle-spec/README.md does not name version $v first"
}

@test "plain make builds the tools, and without the packages says which command installs them" {
	command -v make >/dev/null || skip "make is not installed"
	run make -n -C "$top" BUILD="$BATS_TEST_TMPDIR/b"
	assert_success
	assert_output --partial "$BATS_TEST_TMPDIR/b/pmurec"
	PKG_CONFIG_LIBDIR=/nonexistent PKG_CONFIG_PATH= run make -n -C "$top" BUILD="$BATS_TEST_TMPDIR/b"
	assert_failure
	assert_output --partial '`make check` or `make demo` installs them as root'
}
