#!/usr/bin/env bats
# The two followers behind one contract: pmurec --follower ptrace and
# --follower ebpf record the same cohort (incarnations, parents, exec
# chains, exits, threads; CPU time within the stated tolerance) of the same
# commands, the bundle says which follower ran and why, loss is counted and
# rejected, and without privilege the ptrace follower runs and says so.

load helpers

setup() {
	needs_backend linux
}


# diff_cohorts PTRACE.bundle EBPF.bundle CPU(true|false): "same" or the differences
diff_cohorts() {
	jq -n -r --slurpfile p "$1/data/cohort.jsonl" --slurpfile e "$2/data/cohort.jsonl" --argjson cpu "$3" \
		-f "$BATS_TEST_DIRNAME/followers_diff.jq"
}

# both [--cpu-tolerance] CMD...: record CMD with each follower, validate
# both, compare with followers_diff.jq (jq, not python: these cases run in
# the arm64 guest too, where there is no python)
both() {
	local opt=$1
	shift
	run pmurec --follower ptrace -o p.bundle -- "$@"
	local rp=$status
	run pmurec --follower ebpf -o e.bundle -- "$@"
	assert_equal "$status" "$rp"
	run pmuvalidate -q p.bundle
	assert_success
	run pmuvalidate -q e.bundle
	assert_success
	grep -q '"evidence":"ptrace follower' p.bundle/data/collectors/cohort/lifecycle.jsonl
	grep -q '"evidence":"ebpf follower' e.bundle/data/collectors/cohort/lifecycle.jsonl
	run diff_cohorts p.bundle e.bundle "$([ "$opt" = --cpu-tolerance ] && echo true || echo false)"
	assert_output same
}

@test "same cohort: a tree of shells with exit codes and a signal" {
	needs_ebpf
	cd "$BATS_TEST_TMPDIR"
	both "" sh -c 'true; sh -c "exit 7"; sh -c "kill -9 \$\$"; (sleep 0.01; exit 3) & wait; exit 5'
}

@test "same cohort: an exec chain stays one incarnation" {
	needs_ebpf
	cd "$BATS_TEST_TMPDIR"
	both "" sh -c 'exec sh -c "exec sh -c true"'
}

@test "same cohort: a multi-threaded process, and CPU time within the tolerance" {
	needs_ebpf
	cd "$BATS_TEST_TMPDIR"
	both --cpu-tolerance "$PMU_BUILD/spin-threads" 3 200
}

@test "same cohort: exec from a thread that is not the leader" {
	needs_ebpf
	cd "$BATS_TEST_TMPDIR"
	both "" "$PMU_BUILD/thread-exec" sh -c 'exit 4'
}

# Each non-leader exec swaps the exec'ing thread's tid with the old
# leader's while that leader is still exiting (de_thread(), exchange_tids());
# the leader's last switch may come after the swap, about one exec in a
# hundred here.  Sixty in a row in one process: every thread's exit record
# arrives, under the tid it exited with, so all the totals are there.
@test "60 execs from threads that are not the leader: every thread's exit, nothing lost or malformed" {
	needs_ebpf
	cd "$BATS_TEST_TMPDIR"
	run pmurec --follower ebpf -o e.bundle -- "$PMU_BUILD/thread-exec" -n 60 sh -c 'exit 4'
	assert_failure 4
	run pmuvalidate e.bundle
	assert_success
	run $PY -c '
import sys; sys.path.insert(0, "'"$BATS_TEST_DIRNAME"'")
import cohort_doc
incs = cohort_doc.load("e.bundle/data/cohort.jsonl")["incarnations"]
i = incs[0]
ok = sorted(f for f, st in i["resources"]["fields"].items() if st["status"] == "ok")
bad = [st.get("reason") for st in i["resources"]["fields"].values() if st["status"] != "ok"]
print(len(incs), len(i["exec"]), i["exit"]["kind"], i["exit"].get("code"), len(i["tids"]), len(ok), bad[:1])'
	# one process: 60 thread-exec and sh; the first thread and two more per
	# exec; the nine totals summed over every thread's exit
	assert_output "1 61 exited 4 121 9 []"
	run grep -o '"event":"\(drop\|malformed\)".*' e.bundle/data/collectors/cohort/lifecycle.jsonl
	assert_output ""
}

@test "same cohort: a child that outlives its parent is followed to its end" {
	needs_ebpf
	cd "$BATS_TEST_TMPDIR"
	both "" sh -c '(sleep 0.2; exit 2) & exit 0'
}

@test "same cohort: make -j2 of a small C project" {
	needs_ebpf
	command -v make >/dev/null && command -v cc >/dev/null || skip "make and cc are needed"
	P=$BATS_TEST_TMPDIR/proj
	mkdir -p "$P"
	printf 'int f(void) { return 1; }\n' >"$P/a.c"
	printf 'int f(void);\nint main(void) { return f() - 1; }\n' >"$P/b.c"
	printf 'prog: a.o b.o\n\t$(CC) -o $@ a.o b.o\n' >"$P/Makefile"
	cd "$P"
	run pmurec --follower ptrace -o p.bundle -- make -j2
	assert_success
	make clean >/dev/null 2>&1 || rm -f a.o b.o prog
	rm -f a.o b.o prog
	run pmurec -o e.bundle -- make -j2
	assert_success
	run pmuvalidate -q e.bundle
	assert_success
	# as root, the default follows with eBPF
	grep -q '"evidence":"ebpf follower (auto: ' e.bundle/data/collectors/cohort/lifecycle.jsonl
	run diff_cohorts p.bundle e.bundle false
	assert_output same
}

@test "8 parallel 250-process loops on both CPUs: every incarnation, no loss" {
	needs_ebpf
	cd "$BATS_TEST_TMPDIR"
	loop='i=0; while [ $i -lt 250 ]; do /bin/true; i=$((i+1)); done'
	run pmurec --follower ebpf -o e.bundle -- sh -c "for k in 1 2 3 4 5 6 7 8; do sh -c '$loop' & done; wait"
	assert_success
	# not -q: a failure shows which checks failed
	run pmuvalidate e.bundle
	assert_success
	run $PY -c '
import sys; sys.path.insert(0, "'"$BATS_TEST_DIRNAME"'")
import cohort_doc
incs = cohort_doc.load("e.bundle/data/cohort.jsonl")["incarnations"]
true = [i for i in incs if [e["path"] for e in i["exec"]] == ["/usr/bin/true"]]
ended = all(i["exit"]["kind"] == "exited" for i in incs)
print(len(incs), len(true), ended)'
	# the root, 8 loops and their 2,000 true
	assert_output "2009 2000 True"
	# no drop record (one would say what was lost, and on which CPU)
	run grep -o '"event":"drop".*' e.bundle/data/collectors/cohort/lifecycle.jsonl
	assert_output ""
}

@test "a tiny ring: the loss is counted, said, and the bundle is rejected" {
	needs_ebpf
	cd "$BATS_TEST_TMPDIR"
	# the command stops the recorder (its parent) while it forks: nothing
	# drains the one-page ring, which must overflow
	loop='kill -STOP $PPID; i=0; while [ $i -lt 200 ]; do /bin/true; i=$((i+1)); done; kill -CONT $PPID'
	PMUREC_TEST_RING_BYTES=4096 run pmurec --follower ebpf -o t.bundle -- sh -c "$loop"
	assert_output --partial "the eBPF follower lost"
	run grep -o '"event":"drop","count":[0-9]*' t.bundle/data/collectors/cohort/lifecycle.jsonl
	assert_output --regexp '"count":[1-9]'
	run pmuvalidate t.bundle
	assert_failure 1
	assert_output --partial LOSS
}

@test "as nobody the ptrace follower runs, and the bundle says why not eBPF" {
	nobody_setup
	run as_nobody "$PMU_BUILD/pmurec" -o "$W/n.bundle" -- sh -c 'true; true'
	assert_success
	run grep -o '"evidence":"[^"]*' "$W/n.bundle/data/collectors/cohort/lifecycle.jsonl"
	nobody_teardown
	assert_output --partial 'ptrace follower (auto: the eBPF follower is unavailable ('
	assert_output --partial 'ptrace follows instead'
}

@test "pmuanalyze of an eBPF bundle names the dominant process by its counted task-clock, else by CPU time at exit, and says so" {
	needs_ebpf
	cd "$BATS_TEST_TMPDIR"
	# one busy program of one process (a second sh would make 'sh' a
	# program of 2 processes, which the dominant cost then names)
	run pmurec --follower ebpf -o e.bundle -- sh -c 'awk "BEGIN { for (i = 0; i < 2000000; i++) s += i }"; true'
	assert_success
	run pmuanalyze e.bundle
	assert_success
	# the follower counts task-clock per thread (per-cpu-switch, spec 1.5)
	# (light mode samples at 99 Hz: the sentence may end with where in awk the samples fell)
	assert_line --regexp "^dominant cost: (.*; on CPU \([0-9]+% of wall\): )?process 'awk' \(pid [0-9]+, incarnation i2\) spent [0-9]+% of the cohort's CPU \(task-clock [0-9.]+ of [0-9.]+ ms, exact counts\)(; within awk, .* samples .*)?$"
	# without task-clock among the events, the totals at exit
	run pmurec --follower ebpf -e page-faults -o e2.bundle -- sh -c 'awk "BEGIN { for (i = 0; i < 2000000; i++) s += i }"; true'
	assert_success
	run pmuanalyze e2.bundle
	assert_success
	assert_line --regexp "^dominant cost: (.*; on CPU \([0-9]+% of wall\): )?process 'awk' \(pid [0-9]+, incarnation i2\) spent [0-9]+% of the cohort's CPU time \(user \+ system [0-9.]+ of [0-9.]+ ms, from each process's totals at exit: no task-clock was counted per process\)(; within awk, .* samples .*)?$"
}

@test "in a PID namespace of its own the eBPF follower is unavailable with the reason, and auto takes ptrace" {
	needs_ebpf
	command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
	cd "$BATS_TEST_TMPDIR"
	run timeout 60 unshare --pid --fork --mount-proc "$PMU_BUILD/pmurec" -o ns.bundle -- sh -c 'exit 4'
	assert_failure 4
	run grep -o '"evidence":"[^"]*' ns.bundle/data/collectors/cohort/lifecycle.jsonl
	assert_output --partial 'ptrace follower (auto: the eBPF follower is unavailable (pmurec runs in a PID namespace other than the initial one'
	run timeout 60 unshare --pid --fork --mount-proc "$PMU_BUILD/pmurec" --follower ebpf -o ne.bundle -- sh -c 'exit 4'
	assert_failure 4
	run pmuvalidate ne.bundle
	assert_success
	run grep -o '"reason":"the eBPF follower: pmurec runs in a PID namespace[^"]*' ne.bundle/data/collectors/cohort/lifecycle.jsonl
	assert_success
}
