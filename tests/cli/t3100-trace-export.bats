#!/usr/bin/env bats
# pmuanalyze --trace FILE: one repetition of a bundle as a Chrome trace
# (Trace Event Format, JSON object form) beside the usual report.

load helpers

setup() {
	cd "$BATS_TEST_TMPDIR"
	out=$BATS_TEST_TMPDIR/trace.json
}

# tpy CODE TRACE BUNDLE [K]: run the Python statements CODE with d (the
# trace), ev (its events), X (its complete events), run and inc (run.json
# and the incarnations of repetition K, default 1, of the directory BUNDLE:
# from cohort.jsonl, or cohort.json before spec 1.3) and us(ns) (a time of
# the bundle in trace microseconds).
tpy() {
	$PY - "$2" "$3" "${4:-1}" <<EOF
import json, sys
sys.path.insert(0, "$BATS_TEST_DIRNAME")
import cohort_doc
d = json.load(open(sys.argv[1]))
k = int(sys.argv[3])
base = sys.argv[2] + "/data/" + ("repeats/%d/" % k if k > 1 else "")
run = json.load(open(base + "run.json"))
try:
    inc = json.load(open(base + "cohort.json"))["incarnations"]
except FileNotFoundError:
    inc = cohort_doc.load(base + "cohort.jsonl")["incarnations"]
ev = d["traceEvents"]
X = [e for e in ev if e["ph"] == "X"]
def us(ns):
    return (ns - run["start_ns"]) / 1000
$1
EOF
}

# the checks every trace passes: the object form, times never negative,
# each incarnation's lifetime an X event on its main thread with the
# incarnation's pid, start and duration
lifetimes='
assert sorted(d) == ["displayTimeUnit", "otherData", "traceEvents"], sorted(d)
assert d["displayTimeUnit"] == "ns"
assert all(e["ts"] >= 0 for e in ev if "ts" in e), [e for e in ev if e.get("ts", 0) < 0]
for i in inc:
    p = [e for e in X if e["cat"] == "process" and e["pid"] == i["pid"]]
    assert len(p) == 1, (i["id"], p)
    e = p[0]
    assert e["tid"] == i["pid"] and e["name"] == "%s (%s)" % (i["comm"], i["id"]), e
    assert e["ts"] == us(i["start_ns"]), (e["ts"], us(i["start_ns"]))
    assert e["dur"] == (i["end_ns"] - i["start_ns"]) / 1000, (e["dur"], i)
    assert e["args"]["exit"] == i["exit"]["kind"] and e["args"].get("code") == i["exit"].get("code"), e
print(len(inc), "lifetimes ok")
'

@test "--trace writes a trace and stdout still carries the report" {
	b=$(mk b multiproc)
	run pmuanalyze --trace "$out" "$b"
	assert_success
	assert_line "process tree (3 incarnations)"
	assert_line --regexp "^dominant cost: .*process 'ls'"
	refute_output --partial traceEvents
	run tpy 'o = d["otherData"]
print(o["run_id"], o["argv"], o["repetition"], "CLOCK_MONOTONIC" in o["clock"])' "$out" "$b"
	assert_success
	assert_output "0f1e2d3c4b5a69788796a5b4c3d2e1f0 ['sh', '-c', 'ls / >/dev/null; sleep 0.1 & wait'] 1 True"
}

@test "every incarnation is a process whose lifetime and exit are an X event on its main thread" {
	b=$(mk b multiproc)
	run pmuanalyze --trace "$out" "$b"
	assert_success
	run tpy "$lifetimes"'
for e in X:
    if e["cat"] == "process":
        print(e["name"], e["pid"], e["tid"], e["ts"], e["dur"], e["args"]["exit"], e["args"]["code"])' "$out" "$b"
	assert_success
	assert_line "3 lifetimes ok"
	assert_line "sh (i1) 5000 5000 1 189999 exited 0"
	assert_line "ls (i2) 5001 5001 2000 7000 exited 0"
	assert_line "sleep (i3) 5002 5002 10000 110000 exited 0"
}

@test "processes and threads are named by metadata events" {
	b=$(mk b multiproc)
	run pmuanalyze --trace "$out" "$b"
	assert_success
	run tpy 'M = [e for e in ev if e["ph"] == "M"]
print(sorted((e["pid"], e["args"]["name"]) for e in M if e["name"] == "process_name"))
print(sorted((e["pid"], e["tid"], e["args"]["name"]) for e in M if e["name"] == "thread_name"))' "$out" "$b"
	assert_success
	assert_line "[(5000, 'sh (i1)'), (5001, 'ls (i2)'), (5002, 'sleep (i3)')]"
	assert_line "[(5000, 5000, 'sh'), (5000, 5003, 'sh'), (5001, 5001, 'ls'), (5002, 5002, 'sleep')]"
}

@test "each exec is a process-scoped instant with its path" {
	b=$(mk b multiproc)
	run pmuanalyze --trace "$out" "$b"
	assert_success
	run tpy 'print(sorted((e["pid"], e["ts"], e["s"], e["args"]["path"]) for e in ev if e["ph"] == "i" and e["name"] == "exec"))' "$out" "$b"
	assert_success
	assert_output "[(5000, 1.1, 'p', '/bin/sh'), (5001, 2000.1, 'p', '/usr/bin/ls'), (5002, 10000.1, 'p', '/usr/bin/sleep')]"
}

@test "spans are X events on their threads and marks are thread instants" {
	b=$(mk b multiproc)
	run pmuanalyze --trace "$out" "$b"
	assert_success
	run tpy 'for e in X:
    if e["cat"] == "span":
        print(e["name"], e["pid"], e["tid"], e["ts"], e["dur"], e["args"]["id"], e["args"].get("parent", "-"))
for e in ev:
    if e["ph"] == "i" and e.get("cat") == "mark":
        print("mark", e["name"], e["s"], e["pid"], e["tid"], e["ts"])' "$out" "$b"
	assert_success
	assert_line "list 5000 5000 2000 7500 s2 s1"
	assert_line "wait 5000 5003 10000 111000 s3 s1"
	assert_line "script 5000 5000 1500 148500 s1 -"
	assert_line "mark warmup-end t 5000 5000 9600"
	assert_equal "${#lines[@]}" 4
}

@test "a live recording is traced with its real pids, lifetimes and execs" {
	needs_backend linux
	run pmurec -o r.bundle -- sh -c 'sleep 0.05 & ls / >/dev/null; wait'
	assert_success
	run pmuanalyze --trace "$out" r.bundle
	assert_success
	assert_line "process tree (3 incarnations)"
	run tpy "$lifetimes"'
end = us(run["end_ns"])
assert all(e["ts"] + e.get("dur", 0) <= end for e in ev if "ts" in e)
ex = sorted((e["pid"], e["args"]["path"]) for e in ev if e["ph"] == "i" and e["name"] == "exec")
assert ex == sorted((i["pid"], x["path"]) for i in inc for x in i["exec"]), ex
print(sorted(i["comm"] for i in inc), len(ex))' "$out" r.bundle
	assert_success
	assert_line "3 lifetimes ok"
	assert_line "['ls', 'sh', 'sleep'] 3"
}

@test "a live recording's spans and marks sit on the threads that made them" {
	needs_backend linux
	run pmurec -o m.bundle -- env ASAN_OPTIONS=detect_leaks=0 "$PMU_BUILD/test-marker"
	assert_success
	run pmuanalyze --trace "$out" m.bundle
	assert_success
	run tpy "$lifetimes"'
i1 = inc[0]
S = sorted((e["name"], e["args"]["id"]) for e in X if e["cat"] == "span")
assert all(e["pid"] == i1["pid"] and e["tid"] in i1["tids"] and e["tid"] != i1["pid"] for e in X if e["cat"] == "span")
marks = [(e["name"], e["s"], e["tid"] == i1["pid"]) for e in ev if e.get("cat") == "mark"]
print(S)
print(marks)' "$out" m.bundle
	assert_success
	assert_line "1 lifetimes ok"
	assert_line "[('inner', 'i1:inner-a'), ('inner', 'i1:inner-b'), ('work', 'i1:work-a'), ('work', 'i1:work-b')]"
	assert_line "[('start', 't', True), ('warmup-end', 't', True)]"
}

@test "a repeated bundle is traced from its first repetition" {
	r=$(mk r repeated)
	run pmuanalyze --trace "$out" "$r"
	assert_success
	run tpy "$lifetimes"'
o = d["otherData"]
print(o["repetition"], o["repeat"], o["run_start_ns"])' "$out" "$r"
	assert_success
	assert_line "3 lifetimes ok"
	assert_line "1 2 1000000000"
}

# --trace-rep is optional in pmuanalyze; these two skip without it
@test "--trace-rep K traces repetition K" {
	pmuanalyze --help | grep -q -- --trace-rep || skip "this pmuanalyze has no --trace-rep"
	r=$(mk r repeated)
	run pmuanalyze --trace "$out" --trace-rep 2 "$r"
	assert_success
	run tpy "$lifetimes"'
o = d["otherData"]
print(o["repetition"], o["repeat"], o["run_start_ns"])' "$out" "$r" 2
	assert_success
	assert_line "3 lifetimes ok"
	assert_line "2 2 2000000000"
}

@test "--trace-rep past the bundle's repetitions is exit 2" {
	pmuanalyze --help | grep -q -- --trace-rep || skip "this pmuanalyze has no --trace-rep"
	r=$(mk r repeated)
	run pmuanalyze --trace "$out" --trace-rep 3 "$r"
	assert_failure 2
	assert_output --partial "no repetition 3"
	run pmuanalyze --trace "$out" --trace-rep 0 "$r"
	assert_failure 2
}

@test "an archive bundle is traced like a directory" {
	b=$(mk b.tar.gz multiproc)
	d=$(mk d multiproc)
	run pmuanalyze --trace "$out" "$b"
	assert_success
	run tpy "$lifetimes" "$out" "$d"
	assert_success
	assert_output "3 lifetimes ok"
}

@test "--trace with --json keeps stdout one JSON report" {
	b=$(mk b multiproc)
	pmuanalyze --json --trace "$out" "$b" >report.json
	run $PY -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["cohort"]), len(json.load(open(sys.argv[2]))["traceEvents"]) > 0)' report.json "$out"
	assert_success
	assert_output "3 True"
}

@test "an invalid bundle is refused (exit 1) and no trace is written" {
	b=$(mk b minimal)
	sed -i 's/"result": "complete"/"result": "interrupted"/' "$b/data/run.json"
	rebag "$b"
	run pmuanalyze --trace "$out" "$b"
	assert_failure 1
	[ ! -e "$out" ]
}

@test "a trace file that cannot be opened is exit 2" {
	b=$(mk b multiproc)
	run pmuanalyze --trace "$BATS_TEST_TMPDIR/no/such/dir/t.json" "$b"
	assert_failure 2
	assert_output --partial "no/such/dir/t.json"
}

# A private copy of /dev/full (char 1:7), never /dev/full itself: a tool
# that removes a trace it failed to write must not take a device with it.
@test "a trace that cannot be written (disk full) is exit 2" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to make a full device with mknod"
	mknod "$BATS_TEST_TMPDIR/full" c 1 7 2>/dev/null || skip "mknod is not permitted here"
	b=$(mk b multiproc)
	run pmuanalyze --trace "$BATS_TEST_TMPDIR/full" "$b"
	assert_failure 2
	assert_output --partial "No space left on device"
}
