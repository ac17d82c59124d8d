#!/usr/bin/env bats
# make BPF=0 (the Linux backend without its eBPF objects, as on a host with
# no clang, bpftool or libbpf): it builds under -Werror, and what it cannot
# collect is unavailable with the reason, the bundle valid.  (sched.c's
# build without eBPF once failed on unused functions, unseen.)

load helpers

setup_file() {
	NB="$BATS_FILE_TMPDIR/nobpf"
	export NB
	# only beside a Linux build (a stub run skips every test below)
	[ "$(cat "$PMU_BUILD/backend" 2>/dev/null)" = linux ] || return 0
	# a make of its own, not the calling make check's (its MAKEFLAGS,
	# jobserver and SANITIZE); the output kept for a failure's message
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$BATS_TEST_DIRNAME/../.." -j2 BACKEND=linux BPF=0 BUILD="$NB" all \
		>"$BATS_FILE_TMPDIR/build.log" 2>&1 3>&- ||
		echo "make BPF=0 failed" >"$BATS_FILE_TMPDIR/build.failed"
}

setup() {
	needs_backend linux
	[ ! -e "$BATS_FILE_TMPDIR/build.failed" ] || fail "make BPF=0 failed: $(grep -E 'error|Error' "$BATS_FILE_TMPDIR/build.log" | head -5)"
}

@test "make BPF=0 builds pmurec, pmuvalidate and pmuanalyze under -Werror" {
	for t in pmurec pmuvalidate pmuanalyze; do
		[ -x "$NB/$t" ] || fail "no $NB/$t"
	done
	run grep -c 'warning:' "$BATS_FILE_TMPDIR/build.log"
	assert_output 0
}

@test "recorded with --mode full: the eBPF collectors unavailable, saying it was built without eBPF; the bundle valid" {
	run "$NB/pmurec" --mode full -o "$BATS_TEST_TMPDIR/b.bundle" -- true
	assert_success
	C="$BATS_TEST_TMPDIR/b.bundle/data/collectors"
	for c in sched syscalls probes; do
		run jq -r 'select(.event == "final") | "\(.status) \(.reason) \(.remedy != null)"' "$C/$c/lifecycle.jsonl"
		assert_output --regexp "^unavailable .*built without eBPF: disabled with BPF=0;.* true$"
	done
	run "$NB/pmuvalidate" "$BATS_TEST_TMPDIR/b.bundle"
	assert_success
}

@test "--list-probes: cannot attach, built without eBPF" {
	run "$NB/pmurec" --list-probes "$PMU_BUILD/pmu-example"
	assert_success
	assert_line "cannot attach: this pmurec was built without eBPF (disabled with BPF=0;); remedy: install clang, bpftool and libbpf-dev (and a kernel with BTF), then rebuild pmu"
}
