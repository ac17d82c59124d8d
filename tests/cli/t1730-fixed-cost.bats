#!/usr/bin/env bats
# What pmurec -- true pays before and after the command (docs/fixed-cost.md),
# seen through strace(1): one syncfs(2) for the whole staged bag instead of an
# fsync(2) per file and directory, the command created in the cohort's cgroup
# (clone3 CLONE_INTO_CGROUP) instead of moved there, /proc/cpuinfo read once,
# SHA-256 without the set-up of an OpenSSL provider, libarchive loaded only
# for archives.
# The bench (bench/fixed) holds the time; these hold the mechanisms.

load helpers

setup() {
	needs_backend linux
	command -v strace >/dev/null || skip "strace is not installed"
	B=$BATS_TEST_TMPDIR/r.bundle
	TRUE=$(command -v true)
	# LeakSanitizer cannot run under ptrace (strace): in a sanitized build
	# (make check SANITIZE=...) these runs check the mechanisms only; every
	# other test keeps leak detection
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
}

# count NAME FILE: how many calls strace -c counted for syscall NAME
count() {
	awk -v n="$1" '$NF == n {c = $4} END {print c + 0}' "$2"
}

# cgroup_setup: skip unless pmurec can make a cohort cgroup here
cgroup_setup() {
	[ "$(id -u)" -eq 0 ] || skip "needs root to create cgroups"
	findmnt -n -t cgroup2 >/dev/null 2>&1 || skip "no cgroup2 hierarchy is mounted"
	grep -q '^0::/' /proc/self/cgroup || skip "this process has no cgroup v2 path"
}

# scope_used BUNDLE: the cohort scope the counting collector used
scope_used() {
	sed -n 's/.*"type":"scope".*"used":"\([a-z]*\)".*/\1/p' "$1/data/collectors/counting/counts.jsonl"
}

@test "a directory bundle is made durable by one syncfs, then the parent's fsync" {
	# not -f: the recorder's own calls (its ptrace of the command still works)
	run strace -qq -c -o "$BATS_TEST_TMPDIR/sc" -e trace=fsync,fdatasync,syncfs pmurec -o "$B" -- "$TRUE"
	assert_success
	[ "$(count syncfs "$BATS_TEST_TMPDIR/sc")" -eq 1 ]
	[ "$(count fsync "$BATS_TEST_TMPDIR/sc")" -eq 1 ]
	[ "$(count fdatasync "$BATS_TEST_TMPDIR/sc")" -eq 0 ]
	run pmuvalidate "$B"
	assert_success
}

@test "an archive bundle syncs the archive and the parent only" {
	run strace -qq -c -o "$BATS_TEST_TMPDIR/sc" -e trace=fsync,fdatasync,syncfs \
		pmurec -o "$BATS_TEST_TMPDIR/r.tar.gz" -- "$TRUE"
	assert_success
	[ "$(count syncfs "$BATS_TEST_TMPDIR/sc")" -eq 0 ]
	[ "$(count fsync "$BATS_TEST_TMPDIR/sc")" -eq 2 ]
	run pmuvalidate "$BATS_TEST_TMPDIR/r.tar.gz"
	assert_success
}

@test "the command is created in the cohort's cgroup, never moved there" {
	cgroup_setup
	run strace -qq -o "$BATS_TEST_TMPDIR/st" -e trace=clone,clone3,openat pmurec -o "$B" -- "$TRUE"
	assert_success
	[ "$(scope_used "$B")" = cgroup ]
	grep -q 'clone3(.*CLONE_INTO_CGROUP' "$BATS_TEST_TMPDIR/st"
	# the leaf's cgroup.procs is read to see the command there, never written
	run grep 'cgroup.procs", O_WRONLY' "$BATS_TEST_TMPDIR/st"
	assert_failure
	run pmuvalidate "$B"
	assert_success
}

@test "where clone3 is refused, the command is moved into the cgroup before it runs" {
	cgroup_setup
	run strace -qq -o "$BATS_TEST_TMPDIR/st" -e trace=clone,clone3,openat,write -e inject=clone3:error=ENOSYS \
		pmurec -o "$B" -- "$TRUE"
	assert_success
	[ "$(scope_used "$B")" = cgroup ]
	grep -q 'cgroup.procs", O_WRONLY' "$BATS_TEST_TMPDIR/st"
	run pmuvalidate "$B"
	assert_success
}

@test "the capability probe reads /proc/cpuinfo once" {
	run strace -qq -o "$BATS_TEST_TMPDIR/st" -e trace=openat pmurec -m none -o "$B" -- "$TRUE"
	assert_success
	[ "$(grep -c '"/proc/cpuinfo"' "$BATS_TEST_TMPDIR/st")" -eq 1 ]
	# and what the one read gives is all there: the model and the identity
	run $PY -c 'import json,re,sys
d=json.load(open(sys.argv[1]))
row=[c for c in d["capabilities"] if c["name"]=="cpu-identity"][0]
# x86: vendor family model stepping; aarch64: the MIDR fields (no model name there: host.cpu says them)
ok=row["status"]=="ok" and re.search(r"( family \S+ model \S+ stepping \S+$|^implementer 0x\S+ .* part 0x\S+ variant)",row["value"]) and d["host"].get("cpu")
sys.exit(0 if ok or (row["status"]=="unavailable" and row["reason"]) else 1)' "$B/data/capabilities.json"
	assert_success
}

@test "hashing sets up no OpenSSL provider: openssl.cnf is never read" {
	run strace -qq -f -o "$BATS_TEST_TMPDIR/st" -e trace=openat pmurec -m none -o "$B" -- "$TRUE"
	assert_success
	run grep -c 'openssl\.cnf' "$BATS_TEST_TMPDIR/st"
	assert_output 0
	run strace -qq -o "$BATS_TEST_TMPDIR/st" -e trace=openat pmuvalidate "$B"
	assert_success
	run grep -c 'openssl\.cnf' "$BATS_TEST_TMPDIR/st"
	assert_output 0
}

@test "libarchive is loaded only for an archive bundle" {
	run strace -qq -o "$BATS_TEST_TMPDIR/st" -e trace=openat pmurec -m none -o "$B" -- "$TRUE"
	assert_success
	run grep -c 'libarchive\.so' "$BATS_TEST_TMPDIR/st"
	assert_output 0
	run strace -qq -o "$BATS_TEST_TMPDIR/st" -e trace=openat pmurec -m none -o "$BATS_TEST_TMPDIR/r.tar.zst" -- "$TRUE"
	assert_success
	grep -q 'libarchive\.so.*= [0-9]' "$BATS_TEST_TMPDIR/st"
	run pmuvalidate "$BATS_TEST_TMPDIR/r.tar.zst"
	assert_success
	run strace -qq -o "$BATS_TEST_TMPDIR/st" -e trace=openat pmuvalidate "$B"
	assert_success
	run grep -c 'libarchive\.so' "$BATS_TEST_TMPDIR/st"
	assert_output 0
}
