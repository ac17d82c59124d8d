#!/usr/bin/env bats
# make check-pmu fails loudly, with the reason, when the guest does not boot
# or does not answer in time (run by tests/pmu/check on the host, after the
# guest's own run, with its cached packages and image).

bats_load_library bats-support 2>/dev/null || load /usr/lib/bats/bats-support/load
bats_load_library bats-assert 2>/dev/null || load /usr/lib/bats/bats-assert/load
top="$BATS_TEST_DIRNAME/../.."

setup() {
	[ -f "$ARM64/initrd.cpio" ] || fail "no guest image in $ARM64 (tests/pmu/check builds it first)"
	# a scratch ARM64 that shares the packages and the image
	A="$BATS_TEST_TMPDIR/arm64"
	mkdir -p "$A"
	ln -s "$(cd "$ARM64" && pwd)/root" "$A/root"
	ln -s "$(cd "$ARM64" && pwd)/initrd.cpio" "$A/initrd.cpio"
}

@test "a kernel that does not boot: the run fails within its boot bound, saying so" {
	head -c 65536 /dev/urandom >"$BATS_TEST_TMPDIR/not-a-kernel"
	SECONDS=0
	ARM64=$A PMU_GUEST_KERNEL="$BATS_TEST_TMPDIR/not-a-kernel" PMU_GUEST_BOOT_TIMEOUT=10 \
		run "$top/scripts/pmu-guest" run true
	assert_failure
	assert_output --partial "the guest did not boot within 10 s"
	[ "$SECONDS" -lt 60 ] || fail "took $SECONDS s to give up"
	! pgrep -f "$A/boot.cpio" || fail "qemu-system-aarch64 outlived the run"
}

@test "a guest that does not answer in time: the run fails at its time bound, saying so" {
	ARM64=$A PMU_GUEST_TIMEOUT=30 run "$top/scripts/pmu-guest" run 'while :; do :; done'
	assert_failure
	assert_output --partial "the guest did not finish within 30 s"
	! pgrep -f "$A/boot.cpio" || fail "qemu-system-aarch64 outlived the run"
}
