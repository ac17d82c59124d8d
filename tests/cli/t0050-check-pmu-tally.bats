#!/usr/bin/env bats
# tests/run --guest: how make check-pmu tallies what the emulated arm64
# guest sent back (tests/pmu/check).  No guest here: the results are made
# by hand, so the tally's rules are checked on every host.

load helpers
top="$BATS_TEST_DIRNAME/../.."

setup() {
	G="$BATS_TEST_TMPDIR/out"
	mkdir -p "$G/tap" "$G/bundles"
}

# tap NAME RC LINES...: one suite's results, as tests/pmu/guest-run writes them
tap() {
	local n=$1 rc=$2; shift 2
	printf '%s\n' "$@" >"$G/tap/$n.tap"
	: >"$G/tap/$n.err"
	echo "$rc" >"$G/tap/$n.rc"
}

@test "the guest's suites are tallied into one summary line" {
	tap unit_t-a 0 "1..2" "ok 1 - a" "ok 2 - b"
	tap cli_t1450-hw-x 0 "1..1" "ok 1 - exact cycles"
	run "$top/tests/run" --guest "$G" "$PMU_BUILD"
	assert_success
	assert_line "== arm64/unit/t-a"
	assert_line "== arm64/cli/t1450-hw-x"
	assert_line "3 passed, 0 failed, 0 skipped"
}

@test "a skip in the guest is a failure unless tests/pmu/allowed-skips names it" {
	tap cli_t1450-hw-x 0 "1..2" "ok 1 - a" "ok 2 # skip no hardware PMU: perf_event_open(cycles) failed"
	run "$top/tests/run" --guest "$G" "$PMU_BUILD"
	assert_failure
	assert_output --partial "not in tests/pmu/allowed-skips"
	assert_line "1 passed, 1 failed, 0 skipped"
	# one that is named stays a skip (never a pass)
	tap cli_t1450-hw-x 0 "1..1" "ok 1 # SKIP AVX2 line masks: x86-64 only (this build falls back to byte scans)"
	mv "$G/tap/cli_t1450-hw-x.tap" "$G/tap/user_t-validate.tap"; mv "$G/tap/cli_t1450-hw-x.rc" "$G/tap/user_t-validate.rc"
	rm -f "$G/tap/cli_t1450-hw-x."*
	run "$top/tests/run" --guest "$G" "$PMU_BUILD"
	assert_success
	assert_line "0 passed, 0 failed, 1 skipped"
}

@test "a guest that sent nothing, or a suite cut short, is a failure" {
	run "$top/tests/run" --guest "$G" "$PMU_BUILD"
	assert_failure
	assert_output --partial "the guest sent no suite's results"
	assert_line "0 passed, 1 failed, 0 skipped"
	tap cli_t1450-hw-x 1 "1..3" "ok 1 - a"
	run "$top/tests/run" --guest "$G" "$PMU_BUILD"
	assert_failure
	assert_output --partial "suite ended after 1 of 3 tests"
}

@test "bundles recorded in the guest are validated here: a valid one passes, a tampered one fails" {
	tap unit_t-a 0 "1..1" "ok 1 - a"
	mkfixture minimal "$G/bundles/good.bundle" >/dev/null
	mkfixture minimal "$G/bundles/bad.bundle" >/dev/null
	f=$(find "$G/bundles/bad.bundle/data" -type f | head -n 1)
	echo tampered >>"$f"
	run "$top/tests/run" --guest "$G" "$PMU_BUILD"
	assert_failure
	assert_line --partial "ok 2 - recorded in the guest, valid here: good.bundle"
	assert_line --partial "not ok 1 - recorded in the guest, refused here: bad.bundle"
	assert_line "2 passed, 1 failed, 0 skipped"
}

@test "a skipped test whose teardown failed (bats writes 'not ok N' with the skip directive) is a failure, not a skip" {
	# what bats-core 1.8 writes for a test that skips in setup and whose
	# teardown then fails (nobody_teardown once did, hiding the failure)
	# (a skip the guest may have, so only the failed teardown can fail it)
	tap user_t-validate 1 "1..2" "ok 1 - a" "not ok 2 # SKIP AVX2 line masks: x86-64 only (this build falls back to byte scans)" \
		"# (from function \`teardown' in test file t-validate.bats, line 2)"
	run "$top/tests/run" --guest "$G" "$PMU_BUILD"
	assert_failure
	assert_line "1 passed, 1 failed, 0 skipped"
}
