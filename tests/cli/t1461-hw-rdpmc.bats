#!/usr/bin/env bats
# rdpmc self-monitoring against a real PMU (issue 15): a counter read from
# user space through the mmap page's seqlock (build/bench-rdpmc, from
# bench/rdpmc.c: rdpmc on x86, mrs of PMEVCNTR<n>_EL0/PMCCNTR_EL0 on
# aarch64).  On arm64 the kernel lends a counter to user space only when
# the counter asks (config1's rdpmc bit) and kernel.perf_user_access is 1:
# while it is 0 the probe says unavailable with that reason; the test then
# sets it to 1 and holds the user-space read between two read(2)s.  Runs
# for real in the emulated arm64 guest (make check-pmu); elsewhere skips
# with the reason.  jq only: the guest has no python.

load helpers

UA=/proc/sys/kernel/perf_user_access

setup() {
	needs_backend linux
	P=$BATS_TEST_TMPDIR/p.json
	[ -x "$PMU_BUILD/bench-rdpmc" ] || fail "no $PMU_BUILD/bench-rdpmc (make builds it)"
}

teardown() {
	if [ -n "${UA_WAS:-}" ]; then echo "$UA_WAS" >"$UA"; fi
}

# user_access V: set kernel.perf_user_access to V for this test (restored
# in teardown); skips where it cannot
user_access() {
	[ -e "$UA" ] || skip "no $UA: not arm64, or a kernel before 5.17 (x86's gate is the core PMU's sysfs file rdpmc)"
	[ "$(id -u)" -eq 0 ] || skip "setting $UA needs root"
	UA_WAS=$(cat "$UA")
	echo "$1" >"$UA" || fail "cannot write $1 to $UA"
}

rdpmc_row() {
	pmurec --probe --json | jq -c '.capabilities[] | select(.name == "rdpmc")'
}

@test "perf_user_access=0: rdpmc unavailable, the reason names the setting, the remedy sets it" {
	needs_hw_pmu
	user_access 0
	run rdpmc_row
	assert_success
	echo "$output" | jq -e '.status == "unavailable"'
	echo "$output" | jq -e '.reason | contains("/proc/sys/kernel/perf_user_access: 0")'
	echo "$output" | jq -e '.remedy | contains("kernel.perf_user_access=1")'
	# and the user-space read refuses rather than give the page's offset as a count
	run bench-rdpmc --agree instructions 1000
	assert_failure 3
	assert_output --partial "unavailable"
	assert_output --partial "perf_user_access is 0"
}

# agree EVENT N TOL: bench-rdpmc reads EVENT with read(2), from user space,
# then read(2) again, after a loop of N iterations: the user-space value
# lies between the two, the two are at most TOL apart, and the count
# covers the loop (N iterations are at least N instructions and cycles)
agree() {
	run bench-rdpmc --agree "$1" "$2"
	assert_success
	read -r r1 u r2 <<<"$output"
	[[ $r1 =~ ^[0-9]+$ && $u =~ ^[0-9]+$ && $r2 =~ ^[0-9]+$ ]] || fail "not three counts: $output"
	[ "$r1" -le "$u" ] && [ "$u" -le "$r2" ] || fail "$1: the user-space read $u is not between read(2)'s $r1 and $r2"
	[ $((r2 - r1)) -le "$3" ] || fail "$1: the two read(2)s are $((r2 - r1)) apart, over $3"
	[ "$u" -ge "$2" ] || fail "$1: $u counted for a loop of $2 iterations"
}

@test "rdpmc allowed: the probe says ok with the counter index, and user-space reads agree with read(2)" {
	needs_hw_pmu
	if [ -e "$UA" ]; then user_access 1; fi
	run rdpmc_row
	assert_success
	echo "$output" | jq -e '.status == "ok"' ||
		skip "rdpmc is unavailable here: $(echo "$output" | jq -r '.reason + " (remedy: " + .remedy + ")"')"
	echo "$output" | jq -e '.value | test("^cap_user_rdpmc and counter index [1-9][0-9]* on ")'
	if [ "$(uname -m)" = aarch64 ]; then
		echo "$output" | jq -e '.value | contains("asked with attr.config1 bit 1") and contains("perf_user_access: 1")'
	fi
	# Tolerance: between the two read(2)s run only the user-space halves
	# of a read(2) and one seqlock read, all counted user space only
	# (exclude_kernel): under the guest's -icount that is a fixed path of
	# about 70 instructions and as many cycles.  1,000 instructions and
	# 100,000 cycles (a cache-missing return from the kernel on real
	# hardware) bound it; a wrong counter or a lost offset is off by the
	# loop's 200,000 or falls outside the bracket.
	agree instructions 200000 1000
	agree cycles 200000 100000
}
