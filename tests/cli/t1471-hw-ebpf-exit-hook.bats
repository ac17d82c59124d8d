#!/usr/bin/env bats
# The eBPF follower's exit hook, per kernel (docs/ebpf-follower.md, Limits):
# Linux 6.16+ passes group_dead to sched_process_exit; before that (the
# arm64 guest's Debian 6.1) a kprobe on taskstats_exit(tsk, group_dead)
# stands in, chosen by trying the attach.  These run on any kernel (no PMU
# needed); in the guest they prove the pre-6.16 path on a real 6.1 kernel.
# jq only: the guest has no python.

load helpers

setup() {
	needs_backend linux
}

# dump ARGS...: bpf-follow-dump's JSON lines into $BATS_TEST_TMPDIR/d.jsonl
dump() {
	run bpf-follow-dump "$@"
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/d.jsonl"
}

stats() {
	jq -c 'select(.kind == "stats")' "$BATS_TEST_TMPDIR/d.jsonl"
}

# the kprobe hook, or skip saying why it cannot attach here
needs_exit_kprobe() {
	run bpf-follow-dump --exit-kprobe --load-only
	[ "$status" -eq 0 ] || skip "the kprobe exit hook cannot attach on this kernel: $(jq -r .reason <<<"$output")"
}

@test "the follower attaches on this kernel and names its exit hook" {
	needs_ebpf
	dump -- sh -c 'sh -c "exit 3"; exit 5'
	[ "$status" -eq 0 ]
	local want=kprobe
	# sched_process_exit(task, group_dead): Linux 6.16 and later
	IFS=. read -r maj min _ <<<"$(uname -r)"
	[ "$maj" -gt 6 ] || { [ "$maj" -eq 6 ] && [ "${min%%[!0-9]*}" -ge 16 ]; } && want=tracepoint
	run jq -r 'select(.kind == "stats") | .exit_hook | split(" ")[0]' "$BATS_TEST_TMPDIR/d.jsonl"
	assert_output "$want"
	# exec, fork, exec and two exits, each its group's last with its status; nothing lost
	run jq -r 'select(.kind == "exit") | "\(.group_dead) \(.status)"' "$BATS_TEST_TMPDIR/d.jsonl"
	assert_output $'true 3\ntrue 5'
	run jq -r '"\(.assigned) \(.delivered) \(.dropped) \(.map_fail) \(.malformed) \(.root_status)"' <<<"$(stats)"
	assert_output "5 5 0 0 0 1280"
}

@test "kprobe exit hook: one exit per thread, group_dead on the last only, the group's status" {
	needs_ebpf
	needs_exit_kprobe
	dump --exit-kprobe -- "$PMU_BUILD/spin-threads" 3 50
	[ "$status" -eq 0 ]
	jq -e 'select(.kind == "stats") | .exit_hook | startswith("kprobe taskstats_exit")' "$BATS_TEST_TMPDIR/d.jsonl"
	# the leader and 3 threads: 4 exits, one group_dead, which carries the
	# group's status (not always the last record: a thread's last switch
	# may come after the group's last exit)
	run jq -s -r '[.[] | select(.kind == "exit")] | "\(length) \([.[] | select(.group_dead)] | length) \([.[] | select(.group_dead)][0].group_status)"' \
		"$BATS_TEST_TMPDIR/d.jsonl"
	assert_output "4 1 0"
}

# de_thread() swaps the exec'ing thread's tid with the old leader's while
# the leader is still exiting; every thread's exit must still come, once
@test "kprobe exit hook: 20 execs from threads that are not the leader, every thread's exit, nothing lost" {
	needs_ebpf
	needs_exit_kprobe
	dump --exit-kprobe -- "$PMU_BUILD/thread-exec" -n 20 sh -c 'exit 4'
	[ "$status" -eq 0 ]
	# 21 execs; per non-leader exec the old leader and the idle thread exit
	# (40), then the last sh: one group_dead exit, status 4
	run jq -s -r '[.[] | select(.kind == "exit")] as $x
		| "\([.[] | select(.kind == "exec")] | length) \($x | length) \([$x[] | select(.group_dead)] | length) \([$x[] | select(.group_dead)][0].status)"' \
		"$BATS_TEST_TMPDIR/d.jsonl"
	assert_output "21 41 1 4"
	run jq -r '"\(.assigned == .delivered) \(.dropped) \(.map_fail) \(.malformed) \(.gaps)"' <<<"$(stats)"
	assert_output "true 0 0 0 0"
}
