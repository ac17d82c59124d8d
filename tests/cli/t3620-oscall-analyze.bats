#!/usr/bin/env bats
# pmuanalyze's OS-event sections (analyze/oscall.c): system calls by
# incarnation x syscall x file, off-CPU intervals, the thread-time
# decomposition, the dominant cost naming the blocking syscall, file and
# program, A/B per syscall, the Chrome trace, --offcpu-folded; absence as a
# finding.  Bundles: mkfixture multiproc with the spec 1.7 streams added by
# t3620-osfix.py (sh fdatasyncs /tmp/x.db-journal 3 x 39.9 ms, blocked in D),
# and real recordings where the syscalls and sched collectors run.

load helpers

setup() {
	T=$BATS_TEST_TMPDIR
}

# os NAME [osfix options]: a multiproc bundle with the OS-event streams
os() {
	local b="$T/$1"
	shift
	mkfixture multiproc "$b" >/dev/null
	$PY "$BATS_TEST_DIRNAME/t3620-osfix.py" "$b" "$@"
	rebag "$b"
	echo "$b"
}

# q FILE EXPR: a Python expression over the report (d), its oscall (o)
q() {
	$PY - "$1" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
o = d.get("oscall", {})
print(eval(sys.argv[2]))
EOF
}

@test "system calls: incarnation x syscall x file, exact counts and times, percentiles labelled estimates" {
	b=$(os a)
	pmuanalyze --json "$b" >"$T/a.json"
	run q "$T/a.json" '[(r["program"], r["pid"], r["count"], r["total_ns"], r["max_ns"], r["file"]["path"], r["percentiles_estimate"]) for r in o["syscalls"]["rows"] if r["syscall"] == "fdatasync"]'
	assert_output "[('sh', 5000, 3, 119700000, 39900000, '/tmp/x.db-journal', True)]"
	# p50 from the histogram: within a bucket's width (12.5%) of the exact 39.9 ms
	run q "$T/a.json" '[abs(r["p50_ns"] - 39900000) <= 39900000 / 8 for r in o["syscalls"]["rows"] if r["syscall"] == "fdatasync"]'
	assert_output "[True]"
	run q "$T/a.json" '[(r["errors"], r["file"]) for r in o["syscalls"]["rows"] if r["syscall"] == "openat" and r["program"] == "ls"]'
	assert_output "[({'ENOENT': 1}, None)]"
	run q "$T/a.json" '[r.get("bytes") for r in o["syscalls"]["rows"] if r["syscall"] == "write"], o["syscalls"]["errors"]'
	assert_output "([12288], [{'syscall': 'openat', 'error': 'ENOENT', 'count': 1}])"
	run q "$T/a.json" 'o["syscalls"]["stats"]["calls"], sum(r["count"] for r in o["syscalls"]["by_syscall"])'
	assert_output "(13, 13)"
	run schema_check "$T/a.json"
	assert_output "schema errors: 0"
}

@test "text, CSV and HTML carry the section; p50 columns are marked as estimates" {
	b=$(os a)
	run pmuanalyze "$b"
	assert_success
	assert_output --partial "p50/p90/p99 marked ~ are estimates"
	assert_output --regexp "sh \(5000\) +fdatasync +/tmp/x.db-journal +3 +119.7 ms"
	assert_output --partial "errors: openat ENOENT x1"
	run pmuanalyze --csv "$b"
	assert_line 'syscall,"sh",i1,5000,fdatasync,"/tmp/x.db-journal",3,119700000,39900000,39900000,39900000,39900000,39900000,0,'
	assert_line "offcpu_state,D,3,119640000,119625000,15000"
	pmuanalyze --html "$T/a.html" "$b" >/dev/null
	grep -q '<section id="oscall">' "$T/a.html"
	grep -q '<td>/tmp/x.db-journal</td>' "$T/a.html"
}

@test "off-CPU: by state, by syscall in progress, chains; --offcpu-folded weights by ns waited" {
	b=$(os a)
	pmuanalyze --json --offcpu-folded "$T/off.folded" "$b" >"$T/a.json"
	run q "$T/a.json" '[(s["state"], s["intervals"], s["wait_ns"]) for s in o["offcpu"]["by_state"]]'
	assert_output "[('S', 2, 157590000), ('D', 3, 119625000)]"
	run q "$T/a.json" '[(s["syscall"], s["wait_ns"]) for s in o["offcpu"]["by_syscall"]]'
	assert_output "[('fdatasync', 119625000), ('clock_nanosleep', 108890000), ('wait4', 48700000)]"
	run q "$T/a.json" '[(c["program"], c["chain"], c["syscall"]) for c in o["offcpu"]["chains"]]'
	assert_output "[('sh', '0x401234 0x401100 0x400f00', 'fdatasync')]"
	# outermost frame first, the syscall as the leaf, ns waited as the weight
	run sort "$T/off.folded"
	assert_output "sh;0x400f00;0x401100;0x401234;[fdatasync] 119625000
sh;[wait4] 48700000
sleep;[clock_nanosleep] 108890000"
}

@test "off-CPU without chains says why; --offcpu-folded of a bundle without sched fails with the reason" {
	b=$(os a --no-chains)
	pmuanalyze --json "$b" >"$T/a.json"
	run q "$T/a.json" 'o["offcpu"]["chains"], "call-graph fp" in o["offcpu"]["chains_reason"]'
	assert_output "(None, True)"
	b=$(mk m multiproc)
	run pmuanalyze --offcpu-folded "$T/x.folded" "$b"
	assert_failure 2
	assert_output --partial "--offcpu-folded: the bundle has no sched stream (the sched collector was not requested)"
	[ ! -e "$T/x.folded" ]
}

@test "thread time: on-CPU + runqueue + sleeping + blocked + other + unobserved per thread, waits by syscall and file" {
	b=$(os a)
	pmuanalyze --json "$b" >"$T/a.json"
	run q "$T/a.json" 'all(x["thread_ns"] == sum(x[k] for k in ("on_cpu_ns","runq_ns","sleep_ns","blocked_ns","other_ns","unobserved_ns")) for x in o["decomposition"]["incarnations"] + o["decomposition"]["thread_list"] + [o["decomposition"]["cohort"]])'
	assert_output "True"
	# the fdatasync intervals joined with the same tid's raw calls get the file;
	# wait4 (not a raw call) keeps the syscall in progress, no file
	run q "$T/a.json" '[(w["syscall"], w["file"] and w["file"]["path"], w["blocked_ns"], w["sleep_ns"]) for x in o["decomposition"]["incarnations"] if x["inc"] == "i1" for w in x["waits"]]'
	assert_output "[('fdatasync', '/tmp/x.db-journal', 119625000, 0), ('wait4', None, 0, 48700000)]"
	run q "$T/a.json" 'o["decomposition"]["joined_intervals"], o["decomposition"]["wait_unattributed_ns"]'
	assert_output "(3, 17998000)"
}

@test "dominant cost: the time in a blocking call names the syscall, the file and the program, and what is unattributed" {
	b=$(os a)
	pmuanalyze --json "$b" >"$T/a.json"
	run q "$T/a.json" 'd["dominant_cost"]["level"], d["dominant_cost"]["blocked"]["calls"]'
	assert_output "('blocked', 3)"
	run pmuanalyze "$b"
	assert_output --regexp "dominant cost: sh \(1 process\) was in fdatasync on /tmp/x.db-journal 63% of wall time: 3 calls, 119.7 ms in them, p50 ~[0-9.]+ ms \(estimate from the histogram\); off the CPU in it: blocked 119.6 ms \(63% of wall\), runnable waiting for a CPU 15.0 us \(0%\); of the cohort's off-CPU waits 18.0 ms \(6%\) are in no recorded interval"
}

@test "absence is a finding: no streams, the sections say why and nothing else changes" {
	b=$(mk m multiproc)
	pmuanalyze --json "$b" >"$T/m.json"
	run q "$T/m.json" 'o["status"], o["syscalls"]["status"], o["offcpu"]["status"], o["offcpu"]["reason"], o["decomposition"]["status"], o["blocked"]'
	assert_output "('absent', 'empty', 'not-requested', 'the sched collector was not requested', 'unavailable', None)"
	run q "$T/m.json" 'd["dominant_cost"]["level"], d["wall_time"]["would_attribute"]'
	assert_output "('off-cpu', 'the syscalls collector recorded evidence, but this pmuanalyze does not attribute off-CPU time from it yet')"
	run schema_check "$T/m.json"
	assert_output "schema errors: 0"
	b=$(mk s minimal)
	pmuanalyze --json "$b" >"$T/s.json"
	run q "$T/s.json" 'o["syscalls"]["status"], o["syscalls"]["remedy"]'
	assert_output "('not-recorded', 'record with pmurec --mode full (pmu 1.7 or later)')"
	run pmuanalyze "$b"
	assert_line "system calls: not-recorded: this recording has no syscalls collector (recorded before spec 1.7, or not in mode full); remedy: record with pmurec --mode full (pmu 1.7 or later)"
	run schema_check "$T/s.json"
	assert_output "schema errors: 0"
}

@test "an unavailable sched collector: the off-CPU section gives its reason and remedy" {
	b=$(os a --no-sched)
	printf '%s\n' '{"type":"header","spec":"1.8","stream":"lifecycle","units":{"t_ns":"ns","count":"count"}}' \
		'{"type":"lifecycle","t_ns":1000000100,"event":"requested"}' \
		'{"type":"lifecycle","t_ns":1000000110,"event":"probed","status":"unavailable","reason":"no CAP_BPF","remedy":"run pmurec as root"}' \
		'{"type":"lifecycle","t_ns":1000000120,"event":"final","status":"unavailable","reason":"no CAP_BPF","remedy":"run pmurec as root"}' \
		>"$b/data/collectors/sched/lifecycle.jsonl"
	$PY - "$b/data/run.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
for c in r["collectors"]:
    if c["name"] == "sched":
        c["requested"] = True
json.dump(r, open(sys.argv[1], "w"), indent=2)
EOF
	rebag "$b"
	pmuanalyze --json "$b" >"$T/u.json"
	run q "$T/u.json" 'o["syscalls"]["status"], o["offcpu"]["status"], o["offcpu"]["reason"], o["offcpu"]["remedy"], o["decomposition"]["status"]'
	assert_output "('ok', 'unavailable', 'no CAP_BPF', 'run pmurec as root', 'unavailable')"
	run pmuanalyze "$b"
	assert_line "off-CPU: unavailable: no CAP_BPF; remedy: run pmurec as root"
	run schema_check "$T/u.json"
	assert_output "schema errors: 0"
}

@test "A/B: per-syscall differences, largest change in time first" {
	a=$(os a)
	b=$(os b --calls 6)
	pmuanalyze --json "$a" "$b" >"$T/c.json"
	run q "$T/c.json" '[(r["syscall"], r["count_a"], r["count_b"], r["count_delta"], r["presence"]) for r in d["comparison"]["syscalls"]["rows"] if r["syscall"] == "fdatasync"]'
	assert_output "[('fdatasync', 3, 6, 3, 'both')]"
	run schema_check "$T/c.json"
	assert_output "schema errors: 0"
	run pmuanalyze "$a" "$b"
	assert_output --partial "fdatasync          calls 3 -> 6 (+3)"
	run pmuanalyze --csv "$a" "$b"
	assert_line --regexp '^syscall_comparison,fdatasync,both,3,6,3,119700000,119400000,-300000,[0-9]+,[0-9]+,0$'
	m=$(mk m multiproc)
	pmuanalyze --json "$a" "$m" >"$T/c2.json"
	run q "$T/c2.json" 'd["comparison"]["syscalls"]["status"], d["comparison"]["syscalls"]["reason"]'
	assert_output "('unavailable', \"no system calls to compare: A's syscalls section is ok, B's empty\")"
}

@test "Chrome trace: raw syscalls and off-CPU intervals on each thread's track" {
	b=$(os a)
	pmuanalyze --trace "$T/t.json" "$b" >/dev/null
	run $PY - "$T/t.json" <<'EOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
sc = [e for e in ev if e.get("cat") == "syscall"]
off = [e for e in ev if e.get("cat") == "off-cpu"]
fs = [e for e in sc if e["name"] == "fdatasync"]
print(len(sc), len(off), len(fs), fs[0]["tid"], fs[0]["args"]["dur_ns"], round(fs[0]["dur"] * 1000))
d = [e for e in off if e["name"] == "off-CPU D"]
# each D interval lies inside an fdatasync on the same thread
print(all(any(f["ts"] <= x["ts"] and x["ts"] + x["dur"] <= f["ts"] + f["dur"] for f in fs) for x in d), len(d))
EOF
	assert_output "9 5 3 5000 39900000 39900000
True 3"
}

@test "memory stays flat: 300000 raw calls" {
	b=$(os big)
	$PY - "$b" <<'EOF'
import json, sys
p = sys.argv[1] + "/data/collectors"
# many short reads of one file by sh between 1150 ms and 1180 ms, each with an off interval
lines = open(p + "/syscalls/syscalls.jsonl").read().splitlines()
head, rest = lines[:3], lines[3:]
calls = [json.loads(l) for l in rest if '"type":"call"' in l]
summ = json.loads(rest[-1])
n = 300000
seq = len(calls)
big = []
for k in range(n):
    t = 1150000000 + k * 100
    seq += 1
    big.append({"type": "call", "t_ns": t + 50, "dur_ns": 50, "seq": seq, "inc": "i1", "pid": 5000, "tid": 5000,
                "syscall": "read", "nr": 0, "ret": 1, "bytes": 1, "fd": 3, "dev": "8:1", "ino": 42, "ftype": "reg",
                "args": "0x0 0x0 0x0 0x0 0x0 0x0"})
allc = sorted(calls + big, key=lambda r: r["t_ns"])
for i, r in enumerate(allc):
    r["seq"] = i + 1
summ["calls"] = len(allc)
summ["seq_end"] = len(allc)
with open(p + "/syscalls/syscalls.jsonl", "w") as f:
    f.write("\n".join(head) + "\n")
    for r in allc:
        f.write(json.dumps(r, separators=(",", ":")) + "\n")
    f.write(json.dumps(summ, separators=(",", ":")) + "\n")
# the statistics hold them too
st = open(p + "/syscalls/syscall-stats.jsonl").read().splitlines()
ss = json.loads(st[-1])
ss["stats"] += 1
ss["calls"] += n
with open(p + "/syscalls/syscall-stats.jsonl", "w") as f:
    f.write("\n".join(st[:-1]) + "\n")
    f.write(json.dumps({"type": "stat", "inc": "i1", "pid": 5000, "syscall": "read", "nr": 0, "dev": "8:1",
                        "ino": 42, "ftype": "reg", "path": "/tmp/x.db-journal", "count": n, "total_ns": 50 * n,
                        "min_ns": 50, "max_ns": 50, "bytes": n, "hist": "28:%d" % n}, separators=(",", ":")) + "\n")
    f.write(json.dumps(ss, separators=(",", ":")) + "\n")
EOF
	rebag "$b"
	/usr/bin/time -f '%M' -o "$T/rss" pmuanalyze --json "$b" >"$T/big.json"
	run q "$T/big.json" 'o["syscalls"]["raw"]["calls"]'
	assert_output "300009"
	rss_under "$(cat "$T/rss")" 65536
}

@test "mkfixture oscall: the writer's fdatasync is the dominant cost, not the shell's wait for it" {
	b=$(mk o oscall)
	pmuanalyze --json "$b" >"$T/o.json"
	run q "$T/o.json" 'd["dominant_cost"]["level"], o["blocked"]["program"], o["blocked"]["syscall"], o["blocked"]["file"]["path"], o["blocked"]["calls"]'
	assert_output "('blocked', 'writer', 'fdatasync', '/var/tmp/y', 3)"
	run pmuanalyze "$b"
	assert_output --regexp "dominant cost: writer \(1 process\) was in fdatasync on /var/tmp/y [0-9]+% of wall time: 3 calls, [0-9.]+ ms in them, p50 ~"
	run schema_check "$T/o.json"
	assert_output "schema errors: 0"
}

@test "mkfixture oscall: calls seen only leaving the kernel are listed apart, without a duration" {
	b=$(mk o oscall)
	pmuanalyze --json "$b" >"$T/u.json"
	run q "$T/u.json" 'o["syscalls"]["stats"]["unentered"], o["syscalls"]["unentered"], o["syscalls"]["stats"]["calls"]'
	assert_output "(1, [{'syscall': 'read', 'calls': 1}], 38)"
	run pmuanalyze "$b"
	assert_line --regexp "^  1 more calls without a duration \(calls seen only leaving the kernel.*\): read x1$"
	run schema_check "$T/u.json"
	assert_output "schema errors: 0"
}

@test "mkfixture oscall --loss, tolerated: the loss is reported in the section and in what was not measured" {
	b=$(mk o oscall)
	rm -rf "$b"
	mkfixture oscall "$b" --loss --tolerate-loss >/dev/null
	pmuanalyze --json "$b" >"$T/l.json"
	run q "$T/l.json" 'o["syscalls"]["raw"]["lost"], o["syscalls"]["stats"]["lost"], o["offcpu"]["lost"]'
	assert_output "(3, 1, 1)"
	run pmuanalyze "$b"
	assert_output --partial "system calls and off-CPU intervals (loss) degraded     3 raw call records lost, 1 calls in no statistic, 1 scheduling records lost"
	assert_output --partial "raw call records (the I/O family), truncated 0, lost 3"
}

# ---- real recordings: the syscalls and sched collectors of this host ----------------

# needs_os: pmurec's syscalls and sched collectors record here, else skip
# with the reason their lifecycle gives
needs_os() {
	needs_backend linux
	[ "$(id -u)" -eq 0 ] || skip "the syscalls and sched collectors need root (CAP_BPF and CAP_PERFMON)"
	pmurec --mode full -o "$T/probe.bundle" -- true >/dev/null 2>&1 || skip "pmurec --mode full failed here"
	for c in syscalls sched; do
		f="$T/probe.bundle/data/collectors/$c/lifecycle.jsonl"
		grep -q '"event":"final","status":"ok"' "$f" 2>/dev/null ||
			skip "the $c collector does not record here: $(grep -o '"reason":"[^"]*' "$f" 2>/dev/null | head -1)"
	done
}

@test "real: a workload in fdatasync on a disk file: the dominant cost names fdatasync, the file and sync-writes" {
	needs_os
	mkdir -p /var/tmp/pmu-t3620
	f=$(mktemp /var/tmp/pmu-t3620/f.XXXXXX)
	pmurec --mode full -o "$T/s.bundle" -- sync-writes "$f" 200 >/dev/null
	pmuanalyze --json "$T/s.bundle" >"$T/s.json"
	rm -f "$f"
	run q "$T/s.json" '[(r["count"], r["file"]["path"]) for r in o["syscalls"]["rows"] if r["syscall"] == "fdatasync" and r["program"] == "sync-writes" and r["file"]]'
	assert_output "[(200, '$f')]"
	run schema_check "$T/s.json"
	assert_output "schema errors: 0"
	# chains (full mode records fp chains): the libc wrapper is named from the bundle
	run q "$T/s.json" 'o["offcpu"]["chains"] is None or any("fdatasync" in (c["frames"] or "") for c in o["offcpu"]["chains"] if c["syscall"] == "fdatasync")'
	assert_output "True"
	run q "$T/s.json" 'd["dominant_cost"]["level"]'
	[ "$output" = blocked ] || skip "fdatasync did not dominate the wall time on this host's disk: $(q "$T/s.json" 'd["dominant_cost"]["statement"]')"
	run pmuanalyze "$T/s.bundle"
	assert_output --regexp "dominant cost: sync-writes \(1 process\) was in fdatasync on $f [0-9]+% of wall time: 200 calls, [0-9.]+ m?s in them, p50 ~[0-9.]+ [mu]?s \(estimate from the histogram\); off the CPU in it: blocked"
}

@test "real: every open, write and fsync of the done-when command is attributed to its process and path" {
	needs_os
	rm -f /tmp/pmu-t3620-x /tmp/pmu-t3620-y
	pmurec --mode full -o "$T/io.bundle" -- sh -c "cat /etc/hostname > /tmp/pmu-t3620-x; writer /tmp/pmu-t3620-y" >"$T/out"
	pmuanalyze --json "$T/io.bundle" >"$T/io.json"
	wpid=$(tail -1 "$T/out")
	run q "$T/io.json" 'sorted({(r["program"], r["syscall"], r["count"]) for r in o["syscalls"]["rows"] if r["file"] and r["file"]["path"] == "/tmp/pmu-t3620-y"})'
	assert_output --partial "('writer', 'fsync', 1)"
	assert_output --partial "('writer', 'write', 3)"
	run q "$T/io.json" '[r["pid"] for r in o["syscalls"]["rows"] if r["syscall"] == "fsync" and r["file"] and r["file"]["path"] == "/tmp/pmu-t3620-y"]'
	assert_output "[$wpid]"
	# cat opens /etc/hostname and reads it (read, or copy_file_range in newer coreutils)
	run q "$T/io.json" 'sorted({(r["program"], r["syscall"] if r["syscall"] not in ("read", "copy_file_range", "sendfile", "splice") else "data") for r in o["syscalls"]["rows"] if r["file"] and r["file"]["path"] == "/etc/hostname"})'
	assert_output "[('cat', 'close'), ('cat', 'data'), ('cat', 'openat')]"
	rm -f /tmp/pmu-t3620-x /tmp/pmu-t3620-y
}
