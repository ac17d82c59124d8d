#!/usr/bin/env bats
# The probes collector (spec 1.8, section 24): USDT probes of real programs
# on the real kernel (pmu-example's pmu provider, python3.11's and OpenJDK
# 17's own probes), recorded with pmurec --mode full.

load helpers

setup() {
	needs_backend linux
	B=$BATS_TEST_TMPDIR/p.bundle
	P=$B/data/collectors/probes
}

# rec ARGS...: pmurec --mode full -o $B ARGS; skip (with the collector's own
# reason) where the probes collector cannot attach here
rec() {
	run pmurec --mode full -o "$B" "$@"
	assert_success
	local st
	st=$(jq -r 'select(.event == "final") | .status' "$P/lifecycle.jsonl")
	case $st in
	unavailable) skip "probes collector unavailable: $(jq -r 'select(.event == "final") | .reason' "$P/lifecycle.jsonl")" ;;
	esac
}

# the records of TYPE in the probes stream, compact
recs() {
	jq -c --arg t "$1" 'select(.type == $t)' "$P/probes.jsonl"
}

# a background pmu-example of a test that failed half-way is not left running
teardown() {
	[ -z "${bg_pid:-}" ] || kill -9 "$bg_pid" 2>/dev/null || true
}

@test "pmu-example, 1000 requests: spans across threads, marks, 20 GC pauses, exact allocs; the bundle validates" {
	rec -- pmu-example --requests 1000
	assert_output --partial "pmu-example: requests=1000 allocations=17000 bytes=65792000"
	run pmuvalidate "$B"
	assert_success
	run jq -r 'select(.event == "final") | .status' "$P/lifecycle.jsonl"
	assert_output ok
	# every request is a span begun on the main thread and ended on a worker,
	# its child "work" begun and ended on the worker
	run jq -s '[.[] | select(.type == "span")] | [length, ([.[] | select(.tid != .end_tid)] | length),
		([.[] | select(.name == "request" and .tid == .pid)] | length), ([.[] | select(.via == "usdt")] | length)]' -c "$P/probes.jsonl"
	assert_output "[2000,1000,1000,2000]"
	# each child's parent is a request span of the same incarnation, begun on another thread
	run jq -s '[.[] | select(.type == "span")] | (map({key: (.inc + "/" + .id), value: .}) | from_entries) as $by |
		[.[] | select(.parent) | $by[.inc + "/" + .parent] as $p | ($p != null and $p.name == "request" and $p.tid != .tid
		and $p.begin_ns <= .begin_ns and .end_ns <= $p.end_ns)] | [length, all]' -c "$P/probes.jsonl"
	assert_output "[1000,true]"
	run jq -r 'select(.type == "mark") | "\(.name) \(.source) \(.via)"' "$P/probes.jsonl"
	assert_output "startup-end pmu:mark usdt
warmup-end pmu:mark usdt"
	run jq -r 'select(.type == "gc") | "\(.runtime) \(.kind) \(.source) \(.dur_ns == .t_ns - .begin_ns)"' "$P/probes.jsonl"
	assert_equal "${#lines[@]}" 20
	assert_equal "$(printf '%s\n' "${lines[@]}" | sort -u)" "pmu young pmu:gc_begin true"
	# pmu:alloc summed in the kernel: exactly what the program printed
	run jq -r 'select(.type == "allocs") | "\(.count) \(.bytes)"' "$P/probes.jsonl"
	assert_output "17000 65792000"
	run jq -r 'select(.type == "runtime") | "\(.name) \(.abi)"' "$P/probes.jsonl"
	assert_output "pmu-example 1"
	run jq -r 'select(.type == "summary") | "\(.probes) \(.attached) \(.unmatched) \(.unended) \(.lost) \(.malformed) \(.unattributed)"' "$P/probes.jsonl"
	assert_output "7 7 0 0 0 0 0"
	run jq -r 'select(.type == "probe") | "\(.provider):\(.name) \(.role) \(.attached) \(.hits)"' "$P/probes.jsonl"
	assert_line "pmu:span_begin span_begin true 2000"
	assert_line "pmu:alloc alloc true 17000"
	assert_line "pmu:gc_end gc_end true 20"
}

@test "PMUREC_PROBES=pmu while the probes listen: the control channel carries no spans" {
	rec -- pmu-example --requests 100 --quiet
	run jq -s '[.[] | select(.type == "span" or .type == "mark")] | length' "$B/data/spans.jsonl"
	assert_output 0
	run jq -s '[.[] | select(.type == "span")] | length' "$P/probes.jsonl"
	assert_output 200
	# pmurec's own environment does not keep it after the command's start:
	# the probes collector unsets it at open
	run jq -r 'select(.type == "config") | .providers' "$P/probes.jsonl"
	assert_output pmu
}

@test "unprivileged: unavailable with the remedy, spans through the control channel, the bundle valid" {
	nobody_setup
	run as_nobody "$PMU_BUILD/pmurec" --mode full -o "$W/u.bundle" -- "$PMU_BUILD/pmu-example" --requests 100 --quiet
	assert_success
	run jq -r 'select(.event == "final") | "\(.status)|\(.reason)|\(.remedy)"' "$W/u.bundle/data/collectors/probes/lifecycle.jsonl"
	assert_output --partial "unavailable|"
	assert_output --partial "CAP_BPF"
	assert_output --partial "control channel"
	[ ! -e "$W/u.bundle/data/collectors/probes/probes.jsonl" ] || fail "an unavailable collector wrote a stream"
	run jq -s '[.[] | select(.type == "span")] | length' "$W/u.bundle/data/spans.jsonl"
	assert_output 200
	run jq -r 'select(.type == "mark") | .name' "$W/u.bundle/data/spans.jsonl"
	assert_output "startup-end
warmup-end"
	run pmuvalidate "$W/u.bundle"
	assert_success
	nobody_teardown
}

@test "/bin/true carries no probes: unavailable, saying so, and the bundle valid" {
	run pmurec --mode full -o "$B" -- /bin/true
	assert_success
	run jq -r 'select(.event == "final") | "\(.status)|\(.reason)|\(.remedy)"' "$P/lifecycle.jsonl"
	[[ $output == *CAP_BPF* || $output == *BTF* ]] && skip "probes collector unavailable: $output"
	assert_output --partial "unavailable|no probes of providers pmu, python or hotspot in '/usr/bin/true'"
	assert_output --partial "--probe PROVIDER:NAME"
	run pmuvalidate "$B"
	assert_success
}

@test "--probe nosuch:probe: failed, naming it, and the bundle invalid" {
	run pmurec --mode full --probe nosuch:probe -o "$B" -- /bin/true
	assert_failure
	assert_output --partial "collector 'probes' failed"
	run jq -r 'select(.event == "final") | "\(.status)|\(.reason)"' "$P/lifecycle.jsonl"
	[ "${output%%|*}" != unavailable ] || skip "probes collector unavailable: ${output#*|}"
	assert_output --partial "failed|--probe nosuch:probe: not found"
	run pmuvalidate "$B"
	assert_failure
}

@test "--probe python:function__entry: raw hits with their arguments" {
	[ -x /usr/bin/python3.11 ] || skip "no /usr/bin/python3.11"
	printf 'def f(x):\n    return x + 1\ns = 0\nfor i in range(100):\n    s = f(s)\nprint(s)\n' >"$BATS_TEST_TMPDIR/f.py"
	rec --probe python:function__entry -- /usr/bin/python3.11 "$BATS_TEST_TMPDIR/f.py"
	run jq -r 'select(.type == "probe" and .name == "function__entry") | "\(.role) \(.semaphore) \(.attached) \(.hits > 0)"' "$P/probes.jsonl"
	assert_output "raw true true true"
	run jq -s '[.[] | select(.type == "hit" and .provider == "python" and .name == "function__entry" and .nargs == 3
		and (.args | split(" ") | length) == 3)] | length > 0' "$P/probes.jsonl"
	assert_output true
	run jq -r 'select(.type == "config") | .requested' "$P/probes.jsonl"
	assert_output python:function__entry
}

@test "python3.11, GC-heavy, two incarnations: gc records of runtime python, gen0..gen2, per incarnation" {
	[ -x /usr/bin/python3.11 ] || skip "no /usr/bin/python3.11"
	cat >"$BATS_TEST_TMPDIR/gc.py" <<'EOF'
import gc, subprocess, sys
class N:
    def __init__(s): s.me = s
for i in range(100000):
    N()
gc.collect()
if len(sys.argv) < 2:
    subprocess.run([sys.executable, sys.argv[0], "child"], check=True)
EOF
	rec -- /usr/bin/python3.11 "$BATS_TEST_TMPDIR/gc.py"
	run pmuvalidate "$B"
	assert_success
	run jq -r 'select(.type == "gc") | "\(.runtime) \(.source)"' "$P/probes.jsonl"
	assert_equal "$(printf '%s\n' "${lines[@]}" | sort -u)" "python python:gc__start"
	run jq -r 'select(.type == "gc") | .kind' "$P/probes.jsonl"
	assert_equal "$(printf '%s\n' "${lines[@]}" | sort -u | tr '\n' ' ')" "gen0 gen1 gen2 "
	# two incarnations, each with its own pauses, gen2 (gc.collect()) in each
	run jq -r 'select(.type == "gc" and .kind == "gen2") | .inc' "$P/probes.jsonl"
	assert_equal "$(printf '%s\n' "${lines[@]}" | sort -u | wc -l)" 2
	run jq -s '[.[] | select(.type == "gc") | .collected] | add > 100000' "$P/probes.jsonl"
	assert_output true
}

@test "java (OpenJDK 17, -Xmx64m): hotspot GC pauses and the startup-end mark at vm__init__end" {
	command -v javac >/dev/null || skip "no javac"
	J=$BATS_TEST_TMPDIR/j
	mkdir -p "$J"
	cat >"$J/Alloc.java" <<'EOF'
public class Alloc {
    public static void main(String[] a) {
        java.util.List<byte[]> keep = new java.util.ArrayList<>();
        long sum = 0;
        for (int i = 0; i < 300000; i++) {
            byte[] b = new byte[1024];
            sum += b.length;
            if (i % 100 == 0) keep.add(b);
            if (keep.size() > 1000) keep.clear();
        }
        System.out.println("sum=" + sum);
    }
}
EOF
	javac -d "$J" "$J/Alloc.java"
	# the default flags: gc__begin/end, the pool probes, vm__init__end and the
	# thread and compile probes fire without -XX:+ExtendedDTraceProbes
	rec -- java -Xmx64m -cp "$J" Alloc
	assert_output --partial "sum=307200000"
	run pmuvalidate "$B"
	assert_success
	run jq -r 'select(.type == "mark") | "\(.name) \(.source)"' "$P/probes.jsonl"
	assert_output "startup-end hotspot:vm__init__end"
	run jq -s '[.[] | select(.type == "gc" and .runtime == "hotspot" and .kind != "pool")] | length > 0' "$P/probes.jsonl"
	assert_output true
	# per-pool pauses name the manager and the pool
	run jq -s '[.[] | select(.type == "gc" and .kind == "pool" and (.pool | test("/")))] | length > 0' "$P/probes.jsonl"
	assert_output true
	# GC pauses come after startup
	run jq -s '([.[] | select(.type == "mark")][0].t_ns) as $m | [.[] | select(.type == "gc" and .kind != "pool") | .begin_ns > $m] | all' "$P/probes.jsonl"
	assert_output true
	run jq -s '[.[] | select(.type == "jit" and .runtime == "hotspot" and (.method | test("\\.")))] | length > 0' "$P/probes.jsonl"
	assert_output true
}

@test "a pmu-example outside the cohort adds nothing" {
	pmu-example --requests 100000 --quiet 2>/dev/null 3>&- &
	bg=$! bg_pid=$!
	rec -- pmu-example --requests 100 --quiet
	kill "$bg" 2>/dev/null || true
	wait "$bg" 2>/dev/null || true
	pid=$(jq -r 'select(.type == "runtime") | .pid' "$P/probes.jsonl")
	[ -n "$pid" ] && [ "$pid" != "$bg" ] || fail "runtime records: $(recs runtime)"
	run jq -s --argjson p "$pid" '[.[] | select(.pid != null and .pid != $p)] | length' "$P/probes.jsonl"
	assert_output 0
	run jq -r 'select(.type == "summary") | "\(.spans) \(.gcs) \(.marks) \(.unattributed)"' "$P/probes.jsonl"
	assert_output "200 2 2 0"
	run jq -r 'select(.type == "allocs") | .count' "$P/probes.jsonl"
	assert_output 1700
}

@test "an image exec'd later (python3.11 runs pmu-example): its pmu probes are attached then, attached_ns saying from when" {
	[ -x /usr/bin/python3.11 ] || skip "no /usr/bin/python3.11"
	rec -- /usr/bin/python3.11 -c "import subprocess; subprocess.run(['$PMU_BUILD/pmu-example', '--requests', '300', '--quiet'], check=True)"
	# python's probes at open, pmu-example's at its exec: later
	run jq -s '([.[] | select(.type == "probe" and .provider == "python")][0].attached_ns) as $a |
		[.[] | select(.type == "probe" and .provider == "pmu") | .attached and .attached_ns > $a] | [length, all]' -c "$P/probes.jsonl"
	assert_output "[7,true]"
	run jq -s '[.[] | select(.type == "span" and .via == "usdt")] | length > 0' "$P/probes.jsonl"
	assert_output true
	# what began before the attach and ended after is an unmatched end, never a span
	run jq -s '[.[] | select(.type == "probe" and .name == "span_begin")][0].attached_ns as $a |
		[.[] | select(.type == "span") | .begin_ns >= $a] | all' "$P/probes.jsonl"
	assert_output true
}

# kill_run: pmurec --mode full -o $B -- pmu-example (endless), its root
# killed (by pid) a second after its exec; the number of unended records
kill_run() {
	rm -rf "$B"
	pmurec --mode full -o "$B" -- pmu-example --requests 100000000 --quiet 2>/dev/null 3>&- &
	local rp=$! root=
	for _ in $(seq 100); do
		root=$(pgrep -P "$rp" -x pmu-example) && break
		sleep 0.1
	done
	[ -n "$root" ] || { kill "$rp"; fail "pmu-example did not start under pmurec"; }
	sleep 1
	kill -KILL "$root"
	wait "$rp" || true
}

@test "pmu-example killed in mid-request: what it left open is unended at its end, and the bundle validates" {
	# killed between two requests it leaves nothing open: up to 3 tries
	for try in 1 2 3; do
		kill_run
		st=$(jq -r 'select(.event == "final") | .status' "$P/lifecycle.jsonl")
		[ "$st" != unavailable ] || skip "probes collector unavailable: $(jq -r 'select(.event == "final") | .reason' "$P/lifecycle.jsonl")"
		n=$(jq -r 'select(.type == "summary") | .unended' "$P/probes.jsonl")
		[ "$n" -gt 0 ] && break
	done
	[ "$n" -gt 0 ] || fail "3 kills, no unended record"
	lost=$(jq -r 'select(.type == "summary") | .lost' "$P/probes.jsonl")
	[ "$lost" = 0 ] || skip "$lost hits lost on this loaded host: the bundle is invalid for that"
	run pmuvalidate "$B"
	assert_success
	inc=$(jq -r 'select(.type == "runtime") | .inc' "$P/probes.jsonl")
	end=$(jq -r --arg i "$inc" 'select(.type == "end" and .inc == $i) | .end_ns' "$B/data/cohort.jsonl")
	# at its end as the follower reported it (no earlier than the last record
	# written when that report came), begun before it, a span or a GC pause
	run jq -s --arg i "$inc" --argjson e "$end" '[.[] | select(.type == "unended")] |
		[length, all(.inc == $i and (.what == "span" or .what == "gc") and .t_ns >= $e and .begin_ns <= $e)]' -c "$P/probes.jsonl"
	assert_output "[$n,true]"
	run jq -s --argjson e "$end" '[.[] | select(.type == "span" and .end_ns > $e)] | length' "$P/probes.jsonl"
	assert_output 0
}

@test "--pid: a running pmu-example's probes attached from now, its spans recorded, the bundle valid" {
	pmu-example --requests 100000000 --quiet 2>/dev/null 3>&- &
	pid=$! bg_pid=$!
	sleep 0.5
	# 3 s of it, then the cohort is stopped (SIGTERM)
	rec --max-duration 3000 --pid "$pid"
	kill "$pid" 2>/dev/null || true
	wait "$pid" || true
	run pmuvalidate "$B"
	assert_success
	run jq -r 'select(.type == "probe") | "\(.binary == "'"$PMU_BUILD"'/pmu-example") \(.attached)"' "$P/probes.jsonl"
	assert_equal "$(printf '%s\n' "${lines[@]}" | sort -u)" "true true"
	run jq -s --argjson p "$pid" '[.[] | select(.type == "span")] | [length > 0, all(.pid == $p)]' -c "$P/probes.jsonl"
	assert_output "[true,true]" || fail "$(recs summary)"
}
