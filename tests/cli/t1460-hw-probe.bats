#!/usr/bin/env bats
# The capability probe against a real PMU (issue 15): the CPU's identity
# per architecture, the core PMU by name, its counters measured (the
# largest group of hardware events scheduled whole), the generic events it
# implements, sampling and branch stacks.  Runs for real in the emulated
# arm64 guest (make check-pmu; armv8_pmuv3, QEMU's PMUv3 model); where no
# PMU exists each test skips with the probe's reason.  jq only: the guest
# has no python.

load helpers

# one probe for the file: under the guest's emulation each pmurec run
# costs seconds, and nothing these tests read changes between them
setup_file() {
	if [ "$(cat "$PMU_BUILD/backend" 2>/dev/null)" = linux ]; then
		pmurec --probe --json >"$BATS_FILE_TMPDIR/p.json"
	fi
}

setup() {
	needs_backend linux
	P=$BATS_FILE_TMPDIR/p.json
}

# hw_pmu: needs_hw_pmu's skip (its reason starts "no hardware PMU"), read
# from the file's probe instead of a probe per test
hw_pmu() {
	local st
	st=$(jq -r '.capabilities[] | select(.name == "hardware-events") | "\(.status)\t\(.reason // "")"' "$P")
	[ "${st%%$'\t'*}" = ok ] || skip "no hardware PMU: ${st#*$'\t'}"
}

# row NAME: the capability row NAME of the probe, compact JSON
row() {
	jq -c --arg n "$1" '.capabilities[] | select(.name == $n)' "$P"
}

@test "cpu-identity: x86's vendor/family/model/stepping, aarch64's MIDR fields; otherwise unavailable with why" {
	run row cpu-identity
	assert_success
	r=$output
	case $(uname -m) in
	x86_64 | i686)
		echo "$r" | jq -e '.status == "ok" and (.value | test("^\\S+ family \\S+ model \\S+ stepping \\S+$"))' ;;
	aarch64)
		echo "$r" | jq -e '.status == "ok" and (.value | test("^implementer 0x[0-9a-f]{2} \\(.+\\) part 0x[0-9a-f]{3} variant 0x[0-9a-f] revision [0-9]+"))'
		# the register from sysfs, when the kernel exports it, agrees with the fields
		if m=$(cat /sys/devices/system/cpu/cpu0/regs/identification/midr_el1 2>/dev/null); then
			part=$(printf '0x%03x' $(((m >> 4) & 0xfff)))
			impl=$(printf '0x%02x' $(((m >> 24) & 0xff)))
			echo "$r" | jq -e --arg p "$part" --arg i "$impl" '.value | contains("implementer " + $i) and contains("part " + $p)'
		fi
		# no model name in /proc/cpuinfo there: host.cpu names the implementer and part
		jq -e '.host.cpu | test("implementer 0x[0-9a-f]{2} part 0x[0-9a-f]{3}$")' "$P" ;;
	*)
		echo "$r" | jq -e '.status == "unavailable" and (.reason | length > 0) and (.remedy | length > 0)' ;;
	esac
}

@test "core-pmu names the PMU that counts cycles (aarch64: armv8_pmuv3 or a named Arm core PMU)" {
	hw_pmu
	run row core-pmu
	echo "$output" | jq -e '.status == "ok"'
	pmus=$(echo "$output" | jq -r .value)
	for p in $pmus; do
		[ -d "/sys/bus/event_source/devices/$p" ] || fail "core-pmu names $p, which is not under /sys/bus/event_source/devices"
	done
	if [ "$(uname -m)" = aarch64 ]; then
		[[ " $pmus" == *" armv8_"* || " $pmus" == *" armv9_"* ]] || fail "no Arm core PMU in '$pmus'"
	fi
	# every PMU listed has the core PMU's mark: named cpu, or a cpus file
	for p in $pmus; do
		[ "$p" = cpu ] || [ -e "/sys/bus/event_source/devices/$p/cpus" ] || fail "$p has no cpus file"
	done
}

@test "pmu-counters: the largest group scheduled whole, measured, with why one more does not fit" {
	hw_pmu
	run row pmu-counters
	echo "$output" | jq -e '.status == "ok"'
	v=$(echo "$output" | jq -r .value)
	n=${v%%:*}
	[[ $n =~ ^[0-9]+$ ]] || fail "pmu-counters does not start with a count: $v"
	# cycles and at least one more event at once (every PMU pmu supports
	# has a cycle counter and one general-purpose counter); 32 is the
	# probe's bound
	[ "$n" -ge 2 ] && [ "$n" -le 32 ] || fail "pmu-counters $n is out of 2..32: $v"
	[[ $v == *"cycles and $((n - 1)) instructions"* ]] || fail "the group's make-up is not said: $v"
	[[ $v == *"a group of $((n + 1)) "* || $n -eq 32 ]] || fail "why a group of $((n + 1)) does not fit is not said: $v"
}

@test "pmu-events: cycles and instructions count; the generic events the PMU lacks are named, not left out" {
	hw_pmu
	run row pmu-events
	echo "$output" | jq -e '.status == "ok"'
	v=$(echo "$output" | jq -r .value)
	[[ $v == *" counts: cycles instructions"* ]] || fail "cycles and instructions not counted: $v"
	# each of the ten generic hardware events is either counted or named as not
	for e in cycles instructions cache-references cache-misses branches branch-misses bus-cycles \
		stalled-cycles-frontend stalled-cycles-backend ref-cycles; do
		[[ $v == *" $e"* ]] || fail "$e is neither counted nor refused: $v"
	done
}

@test "pmu-sampling and pmu-branch-stack: opened, or unavailable with why and what to do" {
	hw_pmu
	for n in pmu-sampling pmu-branch-stack; do
		row $n | jq -e '.status == "ok" or (.status == "unavailable" and (.reason | length > 0) and (.remedy | length > 0))'
	done
	# the PMUv3 model raises overflow interrupts: sampling opens there
	if [ "$(uname -m)" = aarch64 ]; then
		row pmu-sampling | jq -e '.status == "ok"'
	fi
}

@test "a bundle recorded here carries the PMU rows (brought back to the host for pmuvalidate in the guest)" {
	hw_pmu
	B=$BATS_TEST_TMPDIR/probe.bundle
	run pmurec -m none -o "$B" -- true
	assert_success
	for n in core-pmu pmu-counters pmu-events pmu-sampling pmu-branch-stack rdpmc cpu-identity; do
		jq -e --arg n "$n" '[.capabilities[] | select(.name == $n)] | length == 1' "$B/data/capabilities.json"
	done
	run pmuvalidate "$B"
	assert_success
	if [ -d /out ] && [ -w /out ]; then
		mkdir -p /out/bundles && rm -rf /out/bundles/probe.bundle && cp -a "$B" /out/bundles/probe.bundle
	fi
}

@test "unprivileged where perf_event_paranoid forbids it: the PMU rows say refused and how to allow it, not 'no PMU'" {
	hw_pmu
	nobody_setup
	[ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 3 ] ||
		skip "perf_event_paranoid is $(cat /proc/sys/kernel/perf_event_paranoid) here: unprivileged counting is allowed (the guest's Debian kernel has 3)"
	run as_nobody "$PMU_BUILD/pmurec" --probe --json
	nobody_teardown
	assert_success
	echo "$output" >"$BATS_TEST_TMPDIR/n.json"
	jq -e '.capabilities[] | select(.name == "hardware-events") | .status == "unavailable" and
		(.reason | contains("Permission denied") and (contains("no hardware PMU") | not)) and
		(.remedy | contains("perf_event_paranoid"))' "$BATS_TEST_TMPDIR/n.json"
	# the core PMU is still named: it is there, only refused
	jq -e '.capabilities[] | select(.name == "core-pmu") | .status == "ok"' "$BATS_TEST_TMPDIR/n.json"
	for n in pmu-counters pmu-events rdpmc; do
		jq -e --arg n $n '.capabilities[] | select(.name == $n) | .status == "unavailable" and (.reason | contains("Permission denied"))' \
			"$BATS_TEST_TMPDIR/n.json"
	done
}
