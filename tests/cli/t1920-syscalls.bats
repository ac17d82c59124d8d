#!/usr/bin/env bats
# The syscalls collector (spec 1.7, section 23): real processes on the real
# kernel, recorded with pmurec --mode full, compared with strace on the same
# commands in the same test.  Every bundle is checked by pmuvalidate.

load helpers

setup() {
	needs_backend linux
	B=$BATS_TEST_TMPDIR/s.bundle
	Y=$B/data/collectors/syscalls
	C=$B/data/cohort.jsonl
	T=$BATS_TEST_TMPDIR
}

# rec ARGS...: pmurec --mode full -o $B ARGS; skip (with the collector's own
# reason) where the syscalls collector cannot run here
rec() {
	run pmurec --mode full -o "$B" "$@"
	local st
	st=$(jq -r 'select(.event == "final") | .status' "$Y/lifecycle.jsonl" 2>/dev/null)
	if [ "$st" = unavailable ]; then
		skip "syscalls collector unavailable: $(jq -r 'select(.event == "final") | .reason' "$Y/lifecycle.jsonl")"
	fi
	assert_success
}

checked() {
	run pmuvalidate "$B"
	assert_success
}

# calls JQ-FILTER: the call records the filter selects, compact, one a line
calls() {
	jq -c "select(.type == \"call\") | select($1)" "$Y/syscalls.jsonl"
}

# inc_of EXE: the incarnation that exec'd EXE (a path ending in /EXE)
inc_of() {
	jq -r --arg e "/$1" 'select(.type == "exec" and (.path | endswith($e))) | .inc' "$C"
}

# strace_count LOG NAME: the calls column of strace -c's line for NAME
strace_count() {
	awk -v n="$2" '$NF == n { print $4 }' "$1"
}

@test "done when: cat and a forked writer, every open, write and fsync with its process, path and exact duration" {
	cd "$T"
	rec -- sh -c "cat /etc/hostname > $T/x; writer $T/y"
	child=$(echo "$output" | grep -E '^[0-9]+$' | head -1)
	[ -n "$child" ] || fail "writer printed no child pid: $output"
	checked
	# the child's open of y: in the child's incarnation, path from the dentry
	run calls ".syscall == \"openat\" and .path == \"$T/y\""
	assert_success
	[ "${#lines[@]}" -eq 1 ] || fail "expected one openat of $T/y: $output"
	open=${lines[0]}
	[ "$(jq .pid <<<"$open")" = "$child" ] || fail "the openat is not the child's ($child): $open"
	[ "$(jq -r .path_source <<<"$open")" = dentry ]
	inc=$(jq -r .inc <<<"$open")
	dev=$(jq -r .dev <<<"$open")
	ino=$(jq -r .ino <<<"$open")
	[ "$ino" = "$(stat -c %i "$T/y")" ] || fail "inode $ino is not y's $(stat -c %i "$T/y")"
	# three writes of 4096, an fsync and a close on that file, in that incarnation
	[ "$(calls ".inc == \"$inc\" and .dev == \"$dev\" and .ino == $ino and .dur_ns > 0 and .t_ns > .dur_ns" | wc -l)" -eq 6 ]
	run jq -r .syscall <<<"$(calls ".inc == \"$inc\" and .dev == \"$dev\" and .ino == $ino")"
	assert_output "$(printf 'openat\nwrite\nwrite\nwrite\nfsync\nclose')"
	[ "$(calls ".inc == \"$inc\" and .syscall == \"write\" and .ino == $ino and .bytes == 4096" | wc -l)" -eq 3 ]
	# cat's stdout is x (the shell's redirection, inherited): its fd 1 is
	# x's inode, and it moved the file's bytes
	cinc=$(inc_of cat)
	[ -n "$cinc" ] || fail "no cat incarnation in cohort.jsonl"
	[ "$(calls ".inc == \"$cinc\" and .syscall == \"openat\" and .path == \"/etc/hostname\" and .fd >= 0" | wc -l)" -eq 1 ]
	xi=$(stat -c %i "$T/x")
	[ "$(calls ".inc == \"$cinc\" and .fd == 1 and .ino == $xi" | wc -l)" -ge 1 ] ||
		fail "no call of cat on x (inode $xi) through fd 1: $(calls ".inc == \"$cinc\"")"
	[ "$(calls ".inc == \"$cinc\" and .bytes == $(stat -c %s /etc/hostname)" | wc -l)" -eq 1 ]
	# the statistics: the same calls, with the path the raw records knew
	run jq -r "select(.type == \"stat\" and .inc == \"$inc\" and .syscall == \"write\" and .ino == $ino) | \"\(.count) \(.bytes) \(.path)\"" "$Y/syscall-stats.jsonl"
	assert_output "3 12288 $T/y"
}

@test "dd bs=512 count=20000: exactly as many read and write calls as strace counts" {
	rec -- dd if=/dev/zero of=/dev/null bs=512 count=20000
	checked
	strace -f -c -o "$T/st" -e trace=read,write dd if=/dev/zero of=/dev/null bs=512 count=20000 2>/dev/null
	sr=$(strace_count "$T/st" read)
	sw=$(strace_count "$T/st" write)
	[ "$sr" -ge 20000 ] && [ "$sw" -ge 20000 ] || fail "strace counted read $sr write $sw"
	run jq -s '[.[] | select(.type == "call" and .syscall == "read")] | length' "$Y/syscalls.jsonl"
	assert_output "$sr"
	run jq -s '[.[] | select(.type == "call" and .syscall == "write")] | length' "$Y/syscalls.jsonl"
	assert_output "$sw"
	# and the statistics agree with the raw records
	run jq -s '[.[] | select(.type == "stat" and .syscall == "read") | .count] | add' "$Y/syscall-stats.jsonl"
	assert_output "$sr"
	run jq -s '[.[] | select(.type == "stat" and .syscall == "write") | .count] | add' "$Y/syscall-stats.jsonl"
	assert_output "$sw"
	# 20000 reads of 512 bytes from /dev/zero, on its inode
	zi=$(stat -L -c %i /dev/zero)
	[ "$(calls ".syscall == \"read\" and .ino == $zi and .bytes == 512" | wc -l)" -eq 20000 ]
}

@test "cat /etc/hostname: its openat of the path in the cat incarnation, and its read on that file, as strace sees them" {
	rec -- sh -c 'cat /etc/hostname >/dev/null; true'
	checked
	strace -f -o "$T/st" -e trace=openat,read,copy_file_range,sendfile,splice cat /etc/hostname >/dev/null
	# the call strace shows cat moving the file's bytes with, on the fd it opened
	sfd=$(sed -n 's/.*openat(AT_FDCWD, "\/etc\/hostname".*= \([0-9]*\)$/\1/p' "$T/st")
	scall=$(grep -oE "(read|copy_file_range|sendfile|splice)\($sfd, " "$T/st" | head -1 | cut -d'(' -f1)
	[ -n "$scall" ] || fail "strace shows no read of /etc/hostname: $(cat "$T/st")"
	cinc=$(inc_of cat)
	run calls ".inc == \"$cinc\" and .syscall == \"openat\" and .path == \"/etc/hostname\""
	[ "${#lines[@]}" -eq 1 ] || fail "expected one openat of /etc/hostname in $cinc: $output"
	hi=$(jq .ino <<<"${lines[0]}")
	[ "$hi" = "$(stat -c %i /etc/hostname)" ]
	size=$(stat -c %s /etc/hostname)
	[ "$(calls ".inc == \"$cinc\" and .syscall == \"$scall\" and .ino == $hi and .bytes == $size" | wc -l)" -eq 1 ] ||
		fail "no $scall of $size bytes on /etc/hostname: $(calls ".inc == \"$cinc\" and .ino == $hi")"
	# the shell that ran cat has no openat of it
	[ "$(calls ".inc != \"$cinc\" and .path == \"/etc/hostname\"" | wc -l)" -eq 0 ]
}

@test "writer --fds: ENOENT counted, rename keeps identity, dup2 onto stdout, fds across exec with and without CLOEXEC, one pipe between two children" {
	export TMPDIR=$T
	rec -- writer --fds
	checked
	winc=$(jq -r 'select(.type == "exec" and (.path | endswith("/writer"))) | .inc' "$C")
	# ENOENT: the raw call and the statistics' errno row
	run calls ".inc == \"$winc\" and .syscall == \"openat\" and .error == \"ENOENT\" and .path == \"/nonexistent/pmu-writer\""
	[ "${#lines[@]}" -eq 1 ] || fail "no ENOENT openat: $output"
	run jq -s "[.[] | select(.type == \"stat\" and .inc == \"$winc\" and .syscall == \"openat\" and .errno == 2)] | .[0].count >= 1" "$Y/syscall-stats.jsonl"
	assert_output true
	# renamed while open: the open of a, the rename a -> b, the write on the same inode
	o=$(calls ".inc == \"$winc\" and .syscall == \"openat\" and (.path | test(\"pmu-writer-a\"))")
	ino=$(jq .ino <<<"$o")
	[ -n "$ino" ] && [ "$ino" != null ] || fail "no openat of pmu-writer-a: $(calls ".inc == \"$winc\"")"
	fd=$(jq .fd <<<"$o")
	[ "$(calls ".syscall == \"rename\" and (.path | test(\"pmu-writer-a\")) and (.path2 | test(\"pmu-writer-b\"))" | wc -l)" -eq 1 ]
	[ "$(calls ".syscall == \"write\" and .fd == $fd and .ino == $ino and .bytes == 8" | wc -l)" -eq 1 ]
	# dup2 onto stdout, then a write on fd 1 lands in the same file
	[ "$(calls ".syscall == \"dup2\" and .fd == $fd and .newfd == 1 and .ino == $ino" | wc -l)" -eq 1 ]
	[ "$(calls ".syscall == \"write\" and .fd == 1 and .ino == $ino and .bytes == 11" | wc -l)" -eq 1 ]
	# the kept fd crossed fork and exec: cat opens it through /proc/self/fd
	# and reads the 19 bytes from that inode
	cats=$(jq -r 'select(.type == "exec" and (.path | endswith("/cat"))) | .inc' "$C" | head -1)
	run calls ".inc == \"$cats\" and .syscall == \"openat\" and .ino == $ino and .path_source == \"dentry\" and (.path | test(\"pmu-writer-b\"))"
	[ "${#lines[@]}" -eq 1 ] || fail "cat did not open the kept fd's file: $(calls ".inc == \"$cats\"")"
	[ "$(calls ".inc == \"$cats\" and .syscall == \"read\" and .ino == $ino and .bytes == 19" | wc -l)" -eq 1 ]
	# one pipe: pipe's fds, echo's write on its stdout, cat's read on its stdin
	p=$(calls ".inc == \"$winc\" and (.syscall == \"pipe\" or .syscall == \"pipe2\")")
	pino=$(jq .ino <<<"$p")
	[ "$(jq -r .ftype <<<"$p")" = fifo ] && [ "$(jq .fd2 <<<"$p")" != null ] || fail "pipe record: $p"
	einc=$(inc_of echo)
	[ "$(calls ".inc == \"$einc\" and .syscall == \"write\" and .fd == 1 and .ino == $pino and .bytes == 17" | wc -l)" -eq 1 ]
	rinc=$(jq -r 'select(.type == "exec" and (.path | endswith("/cat"))) | .inc' "$C" | tail -1)
	[ "$(calls ".inc == \"$rinc\" and .syscall == \"read\" and .fd == 0 and .ino == $pino and .bytes == 17" | wc -l)" -eq 1 ]
}

@test "an fd with O_CLOEXEC does not reach the exec'd program, one without does" {
	rec -- python3 -c '
import os
a = os.open("/etc/hostname", os.O_RDONLY)   # non-inheritable: O_CLOEXEC (PEP 446)
b = os.open("/etc/hostname", os.O_RDONLY)
os.set_inheritable(b, True)
os.execv("/bin/sh", ["sh", "-c", "cat /proc/self/fd/%d >/dev/null 2>&1; cat /proc/self/fd/%d >/dev/null" % (a, b)])'
	checked
	n=0
	for c in $(jq -r 'select(.type == "exec" and (.path | endswith("/cat"))) | .inc' "$C"); do
		jq -c --arg i "$c" 'select(.type == "call" and .inc == $i and .syscall == "openat" and (.path // "" | test("^/proc/self/fd/|^/etc/hostname$")))' "$Y/syscalls.jsonl" >>"$T/opens"
		n=$((n + 1))
	done
	[ "$n" -eq 2 ] || fail "expected two cat incarnations, got $n"
	# the first cat: ENOENT on /proc/self/fd/A; the second: /etc/hostname, resolved from the dentry
	run jq -r 'if .error then .error else .path_source + " " + .path end' "$T/opens"
	assert_output "$(printf 'ENOENT\ndentry /etc/hostname')"
}

@test "ioctl on a pty: the request decoded by name" {
	command -v script >/dev/null || skip "script (util-linux) is not installed"
	rec -- script -qc 'stty size' /dev/null
	checked
	sinc=$(inc_of stty)
	run jq -r --arg i "$sinc" 'select(.type == "call" and .inc == $i and .syscall == "ioctl" and .ftype == "chr" and .ret == 0) | .request_name' "$Y/syscalls.jsonl"
	assert_success
	assert_line TIOCGWINSZ
	assert_line TCGETS
}

@test "a process outside the cohort doing the same calls changes no cohort count" {
	writer --loop 200000 &
	bg=$!
	rec -- writer --loop 1000
	kill "$bg" 2>/dev/null || true
	wait "$bg" 2>/dev/null || true
	checked
	winc=$(inc_of writer)
	run jq -s --arg i "$winc" '[.[] | select(.type == "call" and .inc == $i and .syscall == "openat" and .path == "/etc/hostname")] | length' "$Y/syscalls.jsonl"
	assert_output 1000
	run jq -s --arg i "$winc" '[.[] | select(.type == "stat" and .inc == $i and .syscall == "read" and .path == "/etc/hostname") | .count] | add' "$Y/syscall-stats.jsonl"
	assert_output 1000
	# nothing of the outsider's pid
	run jq -s --argjson p "$bg" '[.[] | select(.pid == $p)] | length' "$Y/syscalls.jsonl" "$Y/syscall-stats.jsonl"
	assert_output 0
}

@test "a tiny ring under a syscall storm: counted loss, a rejected bundle; with --allow-loss valid and reported" {
	run pmurec --mode full --syscall-ring-kb 4 -o "$B" -- writer --loop 20000
	st=$(jq -r 'select(.event == "final") | .status' "$Y/lifecycle.jsonl" 2>/dev/null)
	[ "$st" != unavailable ] || skip "syscalls collector unavailable: $(jq -r 'select(.event == "final") | .reason' "$Y/lifecycle.jsonl")"
	assert_failure
	assert_output --partial "system calls lost"
	run jq -s '[.[] | select(.type == "loss") | .lost] | add > 0' "$Y/syscalls.jsonl"
	assert_output true
	# the proof: every sequence number is a record written or a lost reserve
	run jq -s '(.[] | select(.type == "summary")) as $s | ([.[] | select(.type == "loss" and .what == "reserve") | .lost] | add) as $l | $s.seq_end == $s.calls + $s.unattributed + $s.truncated + $l and $s.lost > 0' "$Y/syscalls.jsonl"
	assert_output true
	run pmuvalidate "$B"
	assert_failure
	assert_output --partial LOSS
	rm -rf "$B"
	run pmurec --mode full --syscall-ring-kb 4 --allow-loss -o "$B" -- writer --loop 20000
	assert_success
	run pmuvalidate "$B"
	assert_success
	assert_output --partial LOSS
	run jq -r 'select(.event == "drop") | .count > 0' "$Y/lifecycle.jsonl"
	assert_output true
}

@test "--max-output-bytes bounds the call records, with a truncation record; the statistics are whole" {
	rec --max-output-bytes 200000 -- writer --loop 3000
	run jq -s '[.[] | select(.type == "truncation")] | length' "$Y/syscalls.jsonl"
	assert_output 1
	run jq -s '(.[] | select(.type == "summary")) | .truncated > 0' "$Y/syscalls.jsonl"
	assert_output true
	winc=$(inc_of writer)
	run jq -s --arg i "$winc" '[.[] | select(.type == "stat" and .inc == $i and .syscall == "openat" and .path == "/etc/hostname") | .count] | add' "$Y/syscall-stats.jsonl"
	assert_output 3000
}

@test "unprivileged: unavailable with the remedy, the bundle valid" {
	nobody_setup
	run as_nobody "$PMU_BUILD/pmurec" --mode full -o "$W/u.bundle" -- sh -c 'cat /etc/hostname >/dev/null'
	L=$W/u.bundle/data/collectors/syscalls/lifecycle.jsonl
	run jq -r 'select(.event == "final") | "\(.status)|\(.reason)|\(.remedy)"' "$L"
	assert_output --partial "unavailable|"
	assert_output --partial "CAP_BPF"
	assert_output --partial "run pmurec as root"
	run pmuvalidate "$W/u.bundle"
	assert_success
	nobody_teardown
}

@test "paths: resolved from the dentry chain for an open that succeeded, the argument joined to the cwd for one that failed" {
	mkdir -p "$T/d/a/b"
	rec -- sh -c "cd $T/d/a/b && touch ../rel && cat nonexist; true"
	checked
	run jq -r 'select(.type == "call" and .syscall == "openat" and (.path // "" | test("/rel$|nonexist$"))) | "\(.path_source) \(.path) \(.error // "ok")"' "$Y/syscalls.jsonl"
	assert_line "dentry $(cd "$T/d/a" && pwd -P)/rel ok"
	assert_line "argument+cwd $(cd "$T/d/a/b" && pwd -P)/nonexist ENOENT"
}

@test "attach (--pid): the running tree's calls, a signal-interrupted call named by the kernel's errno" {
	sh -c 'while :; do cat /etc/hostname >/dev/null; sleep 0.1; done' &
	loop=$!
	run pmurec --mode full --pid "$loop" --max-duration 1500 -o "$B"
	kill "$loop"
	wait "$loop" 2>/dev/null || true
	st=$(jq -r 'select(.event == "final") | .status' "$Y/lifecycle.jsonl" 2>/dev/null)
	[ "$st" != unavailable ] || skip "syscalls collector unavailable: $(jq -r 'select(.event == "final") | .reason' "$Y/lifecycle.jsonl")"
	checked
	# the cats started after the attach open the file; every errno has its name
	[ "$(calls '.syscall == "openat" and .path == "/etc/hostname" and .path_source == "dentry"' | wc -l)" -ge 2 ]
	run jq -s '[.[] | select(.errno and (.error | not))] | length' "$Y/syscalls.jsonl" "$Y/syscall-stats.jsonl"
	assert_output 0
}

# A call in flight when the programs attach has no entry: its exit is
# counted as unentered (no duration), as seccomp-refused calls are, and
# nothing else is (a fork child's return from clone is no call).
@test "attach (--pid): the call in flight at the attach is counted as unentered, without a duration" {
	sleep 3 &
	sl=$!
	run pmurec --mode full --pid "$sl" -o "$B"
	wait "$sl" 2>/dev/null || true
	st=$(jq -r 'select(.event == "final") | .status' "$Y/lifecycle.jsonl" 2>/dev/null)
	[ "$st" != unavailable ] || skip "syscalls collector unavailable: $(jq -r 'select(.event == "final") | .reason' "$Y/lifecycle.jsonl")"
	checked
	run jq -c 'select(.type == "unentered") | [.syscall, .count, has("total_ns")]' "$Y/syscall-stats.jsonl"
	assert_output '["clock_nanosleep",1,false]'
	run jq -s 'map(select(.type == "summary"))[0].unentered' "$Y/syscall-stats.jsonl"
	assert_output 1
}
