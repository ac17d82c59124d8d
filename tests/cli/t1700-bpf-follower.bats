#!/usr/bin/env bats
# The eBPF follower's kernel side and loader (backends/linux/bpf/,
# backends/linux/follow_bpf.c), driven for real by bpf-follow-dump: the
# command runs behind a barrier, every fork, exec and exit of its cohort
# arrives with a sequence number, and the checks are in bpf_follow_check.py.

load helpers

LOOP='i=0; while [ $i -lt 2000 ]; do /bin/true; i=$((i+1)); done'

setup() {
	needs_backend linux
	DUMP=$PMU_BUILD/bpf-follow-dump
	CHECK="$PY $BATS_TEST_DIRNAME/bpf_follow_check.py"
	OUT=$BATS_TEST_TMPDIR/out.jsonl
}

# needs_follower: skip unless the follower opens here (root, BTF, built)
needs_follower() {
	[ "$(id -u)" -eq 0 ] || skip "needs root (CAP_BPF and CAP_PERFMON) to load BPF programs"
	[ -r /sys/kernel/btf/vmlinux ] || skip "the kernel has no BTF (/sys/kernel/btf/vmlinux)"
	run "$DUMP" --load-only
	if [ "$status" -eq 3 ]; then
		skip "the ebpf follower is unavailable: $output"
	fi
	assert_success
}

@test "a 2,000-process loop: every fork, exec and exit, no seq gap, no drop" {
	needs_follower
	"$DUMP" -- sh -c "$LOOP" >"$OUT"
	run $CHECK cohort "$OUT" --procs 2000 --exe /bin/true --execs 2000
	assert_success
	assert_output --regexp '^ok records [0-9]+ forks 2000 execs 2000 group_exits 2001 '
}

@test "8 parallel 250-process loops: every fork, exec and exit, on both CPUs, no gap" {
	needs_follower
	local cpus=2
	[ "$(nproc)" -ge 2 ] || cpus=1
	"$DUMP" -- sh -c 'for j in 1 2 3 4 5 6 7 8; do
		( i=0; while [ $i -lt 250 ]; do /bin/true; i=$((i+1)); done ) & done; wait' >"$OUT"
	run $CHECK cohort "$OUT" --procs 2008 --exe /bin/true --execs 2000 --cpus "$cpus"
	assert_success
	assert_output --regexp '^ok records [0-9]+ forks 2008 execs 2000 group_exits 2009 '
}

@test "a short command: the root's exit is in the stream every time (30 runs)" {
	needs_follower
	local k
	for k in $(seq 30); do
		"$DUMP" -- /bin/true >"$OUT"
		run $CHECK cohort "$OUT" --exe /bin/true --execs 1
		assert_success
		assert_output --regexp '^ok records 2 forks 0 execs 1 group_exits 1 '
	done
}

@test "an orphan that outlives the root is followed to its exit" {
	needs_follower
	"$DUMP" -- sh -c '(sleep 0.3; /bin/true) & exit 0' >"$OUT"
	run $CHECK cohort "$OUT" --procs 2 --exe /bin/true --execs 1
	assert_success
	run $PY -c 'import json,sys
recs = [json.loads(l) for l in open(sys.argv[1])]
root = recs[0]["tgid"]
ex = [r for r in recs if r["kind"] == "exit" and r["group_dead"]]
print("root exits before the last", ex[0]["tgid"] == root or any(r["tgid"] == root for r in ex[:-1]))' "$OUT"
	assert_output "root exits before the last True"
}

@test "a one-page ring drops records, each counted, and the seq gaps equal the drops" {
	needs_follower
	"$DUMP" --ring "$(getconf PAGESIZE)" --interval 200 --sleep -- sh -c "$LOOP" >"$OUT"
	run $CHECK drops "$OUT"
	assert_success
	assert_output --regexp '^ok assigned 6002 delivered [0-9]+ dropped [1-9][0-9]* missing [1-9]'
}

@test "start times equal /proc/PID/stat field 22" {
	needs_follower
	local f=$BATS_TEST_TMPDIR/starts
	"$DUMP" -- sh -c "echo \$\$ \$(cut -d' ' -f22 /proc/\$\$/stat) >$f
		sleep 0.2 & echo \$! \$(cut -d' ' -f22 /proc/\$!/stat) >>$f; wait" >"$OUT"
	run $CHECK starts "$OUT" "$f"
	assert_success
	assert_output "ok 2 start times equal /proc field 22"
}

@test "a CPU spinner's sum_exec_runtime agrees with /proc utime+stime (2 ticks + 5%)" {
	needs_follower
	local f=$BATS_TEST_TMPDIR/cpu
	"$DUMP" -- sh -c "i=0; while [ \$i -lt 400000 ]; do i=\$((i+1)); done
		cut -d' ' -f14,15 /proc/\$\$/stat >$f" >"$OUT"
	run $CHECK spin "$OUT" "$f" 5
	assert_success
	assert_line ok
}

@test "exit codes and signals of each process and of the root" {
	needs_follower
	"$DUMP" -- sh -c '(exit 7); sh -c "kill -TERM \$\$"; sh -c "kill -SEGV \$\$"; exit 5' >"$OUT" 2>/dev/null
	run $CHECK exits "$OUT"
	assert_success
	assert_line --index 0 --regexp '^exit [0-9]+ status 7$'
	assert_line --index 1 --regexp '^exit [0-9]+ signal 15$'
	assert_line --index 2 --regexp '^exit [0-9]+ signal 11$'
	assert_line --index 3 --regexp '^exit [0-9]+ status 5$'
	assert_line --index 4 --regexp '^root [0-9]+ wait 1280 group_status 1280$'
}

@test "an exec from a non-leader thread gives the old tid" {
	needs_follower
	"$DUMP" -- "$PMU_BUILD/thread-exec" /bin/true >"$OUT"
	run $PY - "$OUT" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
ex = [r for r in recs if r.get("kind") == "exec" and r["filename"] == "/bin/true"]
threads = {r["child_tid"] for r in recs if r.get("kind") == "fork" and r["thread"]}
assert len(ex) == 1, ex
e = ex[0]
print("exec tid==tgid", e["tid"] == e["tgid"], "old_tid is a thread", e["old_tid"] in threads,
      "old_tid!=tid", e["old_tid"] != e["tid"])
PY
	assert_success
	assert_output "exec tid==tgid True old_tid is a thread True old_tid!=tid True"
}

@test "threads: one exit per thread, the group's status and max RSS on the last only" {
	needs_follower
	"$DUMP" -- "$PMU_BUILD/spin-threads" 3 30 >"$OUT"
	run $PY - "$OUT" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
ex = [r for r in recs if r.get("kind") == "exit"]
last = [r for r in ex if r["group_dead"]]
assert len(last) == 1 and last[0] is ex[-1], ex
assert all("max_rss_bytes" not in r for r in ex[:-1])
spun = sorted(r["sum_exec_runtime_ns"] >= 30e6 for r in ex if r["tid"] != r["tgid"])
print("exits", len(ex), "spinners over 30 ms", spun.count(True), "rss", last[0]["max_rss_bytes"] > 0)
PY
	assert_success
	assert_output "exits 4 spinners over 30 ms 3 rss True"
}

@test "as nobody the follower is unavailable, says why, and the command never runs" {
	nobody_setup
	[ -r /sys/kernel/btf/vmlinux ] || skip "the kernel has no BTF (/sys/kernel/btf/vmlinux)"
	run as_nobody "$DUMP" -- sh -c "touch $W/ran"
	assert_failure 3
	assert_output --regexp '"avail":"(no-privilege|not-built)"'
	grep -q '"avail":"not-built"' <<<"$output" ||
		assert_output --partial 'lacks CAP_BPF and CAP_PERFMON'
	assert_output --partial '"remedy":"'
	[ ! -e "$W/ran" ]
}

@test "the record decoder refuses every malformed sample and accepts the seeds" {
	local seeds=$BATS_TEST_DIRNAME/../fuzz/corpus/bpfrec d=$BATS_TEST_TMPDIR
	run "$DUMP" --decode "$seeds"/fork "$seeds"/fork-thread "$seeds"/exec "$seeds"/exec-truncated \
		"$seeds"/exit-group "$seeds"/exit-thread "$seeds"/counts
	assert_success
	[ "$(grep -c ' ok ' <<<"$output")" -eq 7 ]
	# mutations: (name, seed, byte offset, new bytes as hex) or a cut length
	$PY - "$seeds" "$d" <<'PY'
import sys
seeds, d = sys.argv[1], sys.argv[2]
def put(name, seed, off=None, new=b"", cut=None):
    b = bytearray(open(f"{seeds}/{seed}", "rb").read())
    if cut is not None:
        b = b[:cut]
    else:
        b[off:off + len(new)] = new
    open(f"{d}/{name}", "wb").write(b)
put("short-header", "fork", cut=10)
put("short-body", "exec", cut=200)
put("seq0", "fork", 0, bytes(8))
put("kind9", "fork", 16, b"\x09\x00")
put("size-lies", "fork", 18, b"\x40\x00")
put("fork-flags", "fork", 40, b"\x80\x00\x00\x00")
put("fork-thread-lies", "fork", 40, b"\x01\x00\x00\x00")
put("exec-no-nul", "exec-truncated", 64 + 255, b"a")
put("exec-len-lies", "exec", 56, b"\x05\x00\x00\x00")
put("exit-group-on-thread", "exit-thread", 48, b"\x00\x05\x00\x00")
put("exit-comm-no-nul", "exit-group", 208, b"x" * 16)
put("counts-nev5", "counts", 32, b"\x05\x00\x00\x00")
put("counts-running-over-enabled", "counts", 112, b"\xff" * 7)
put("counts-unused-event", "counts", 32, b"\x01\x00\x00\x00")
PY
	run "$DUMP" --decode "$d"/short-header "$d"/short-body "$d"/seq0 "$d"/kind9 "$d"/size-lies \
		"$d"/fork-flags "$d"/fork-thread-lies "$d"/exec-no-nul "$d"/exec-len-lies \
		"$d"/exit-group-on-thread "$d"/exit-comm-no-nul "$d"/counts-nev5 "$d"/counts-running-over-enabled \
		"$d"/counts-unused-event
	assert_success
	refute_output --partial ' ok '
	[ "$(grep -c ' corrupt: ' <<<"$output")" -eq 14 ]
	assert_line --partial 'counts with no event or too many'
	assert_line --partial 'counts times disagree or an unused event counted'
	assert_line --partial 'exec filename not terminated at its length'
	assert_line --partial 'group fields on a thread that is not the last'
}

teardown() {
	nobody_teardown || :
}
