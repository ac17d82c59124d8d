#!/usr/bin/env bats
# Symbolization (analyze/symbolize.c) of bundles that pmurec recorded from
# the test workload (tests/helpers/hot.c): sym-dump symbolizes every sample
# with the symbolizer alone.  Frame-pointer chains, DWARF unwinding of
# code without frame pointers, retained binaries after the originals are
# gone, and a rebuilt binary reported stale, never misnamed.

load helpers

# rec NAME ARGS...: record ARGS into $BATS_TEST_TMPDIR/NAME.bundle, or skip
# with the sampling collector's reason when it cannot sample here
rec() {
	local b=$BATS_TEST_TMPDIR/$1.bundle
	shift
	run pmurec --mode full -o "$b" "$@"
	if [ ! -s "$b/data/collectors/sampling/samples.jsonl" ]; then
		skip "the sampling collector recorded no samples here: $(grep -h '"sampling"' "$b"/data/collectors/sampling/lifecycle.jsonl 2>/dev/null | tail -1)"
	fi
	B=$b
}

# top: the first "self" line of sym-dump's output (the most samples)
top() { grep -m1 '^self ' <<<"$1"; }

@test "frame-pointer chains: hot_loop with hot.c lines and mix inlined, lib_work, child_loop" {
	rec fp -- "$PMU_BUILD/hot" 300 child
	run sym-dump "$B"
	assert_success
	[[ $(top "$output") == "self "*" hot_loop tests/helpers/hot.c:"*" (mix inlined)" ]] ||
		[[ $(top "$output") == "self "*" hot_loop "* ]]
	assert_output --regexp 'self [0-9]+ lib_work .*tests/helpers/hotlib.c:[0-9]+'
	assert_output --regexp 'self [0-9]+ child_loop .*tests/helpers/hot.c:[0-9]+'
	assert_output --regexp 'stack [0-9]+ .*main;run;hot_loop;mix'
	refute_output --regexp 'self [0-9]+ (stale|notfound)'
}

@test "call-graph dwarf: code without frame pointers unwinds main;run;hot_loop and main;run;lib_work" {
	rec dw --call-graph dwarf -- "$PMU_BUILD/hot-nofp" 300
	run sym-dump "$B"
	assert_success
	unwound=$(sed -n 's/^unwound //p' <<<"$output")
	samples=$(sed -n 's/^samples //p' <<<"$output")
	echo "unwound $unwound of $samples"
	[ "$unwound" -gt $((samples / 2)) ]
	assert_output --regexp 'stack [0-9]+ .*main;run;hot_loop'
	assert_output --regexp 'stack [0-9]+ .*main;run;lib_work'
}

@test "retained binaries: the bundle moved, the binaries deleted, still named; a rebuilt binary is stale" {
	w=$BATS_TEST_TMPDIR/w
	mkdir -p "$w"
	cp "$PMU_BUILD/hot" "$PMU_BUILD/libhot.so" "$w/"
	rec ret --retain-binaries -- "$w/hot" 200
	ls "$B"/data/build-id/*/* >/dev/null || skip "pmurec retained no binary"
	mv "$B" "$BATS_TEST_TMPDIR/moved.bundle"
	rm -f "$w/hot" "$w/libhot.so"
	run sym-dump "$BATS_TEST_TMPDIR/moved.bundle"
	assert_success
	[[ $(top "$output") == "self "*" hot_loop "* ]]
	assert_output --regexp 'self [0-9]+ lib_work '

	# without the retained copies: the same path, another build-id
	rm -rf "$BATS_TEST_TMPDIR/moved.bundle/data/build-id"
	cc -O2 -DPMU_REBUILT -Wl,--build-id=0x0123456789abcdef -o "$w/hot" "$BATS_TEST_DIRNAME/../helpers/hot.c" \
		-L"$PMU_BUILD" -lhot
	run sym-dump "$BATS_TEST_TMPDIR/moved.bundle"
	assert_success
	assert_output --regexp 'self [0-9]+ stale: stale binary \(build-id mismatch\)'
	refute_output --regexp 'self [0-9]+ (hot_loop|run|main) '
	# and no file at all
	rm -f "$w/hot"
	run sym-dump "$BATS_TEST_TMPDIR/moved.bundle"
	assert_output --regexp 'self [0-9]+ notfound: binary not found \(build-id [0-9a-f]+\)'
}
