#!/usr/bin/env bats
# pmuanalyze's runtime-evidence section (analyze/runtime.c): phases cut at
# the marks with per-phase metrics, the span tree by name path, the GC pause
# table per incarnation x runtime x kind, allocation hot sites as labelled
# estimates, the probes stream in the Chrome trace; absence as a finding.
# Bundles: `mkfixture runtime` (pmu-example, python3.11 and java under sh,
# the answers known from fixtures/mkfixture.c), a sampled fixture with the
# streams added by t3630-rtfix.py, and real recordings of pmu-example.

load helpers

setup() {
	T=$BATS_TEST_TMPDIR
}

# q FILE EXPR: a Python expression over the report (d) and its runtime (r)
q() {
	$PY - "$1" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
r = d.get("runtime", {})
print(eval(sys.argv[2]))
EOF
}

# rt NAME [rtfix options]: a sampled bundle with the runtime streams of t3630-rtfix.py
rt() {
	local b="$T/$1"
	shift
	mkfixture sampled "$b" >/dev/null
	$PY "$BATS_TEST_DIRNAME/t3630-rtfix.py" "$b" "$@"
	rebag "$b"
	echo "$b"
}

@test "mkfixture runtime: span tree by name path, exact counts, totals and percentiles" {
	b=$(mk f runtime)
	pmuanalyze --json "$b" >"$T/a.json"
	run q "$T/a.json" '[(p["path"], p["depth"], p["count"], p["total_ns"], p["p50_ns"], p["p90_ns"], p["max_ns"], p["percentiles_exact"]) for p in r["spans"]["paths"]]'
	assert_output "[('request', 1, 100, 230000000, 2300000, 2300000, 2300000, True), ('request>work', 2, 100, 199495000, 1994900, 1998900, 1999900, True)]"
	run q "$T/a.json" '[(n["name"], n["count"]) for n in r["spans"]["names"]], r["spans"]["sources"], r["spans"]["unresolved_paths"]'
	assert_output "([('request', 100), ('work', 100)], {'usdt': 200, 'ctl': 0}, 0)"
	run schema_check "$T/a.json"
	assert_output "schema errors: 0"
}

@test "mkfixture runtime: GC pauses per incarnation x runtime x kind, three runtimes, share of the incarnation's wall" {
	b=$(mk f runtime)
	pmuanalyze --json "$b" >"$T/a.json"
	run q "$T/a.json" 'sorted((g["program"], g["runtime"], g["kind"], g["count"]) for g in r["gc"]["rows"])'
	assert_output "[('java', 'hotspot', 'minor', 3), ('java', 'hotspot', 'pool', 3), ('pmu-example', 'pmu', 'young', 2), ('python3.11', 'python', 'gen0', 4), ('python3.11', 'python', 'gen1', 1), ('python3.11', 'python', 'gen2', 1)]"
	run q "$T/a.json" '[(g["total_ns"], g["p50_ns"], g["p99_ns"], g["max_ns"], round(g["share_percent"], 3), g["inc_wall_ns"]) for g in r["gc"]["rows"] if g["runtime"] == "pmu"]'
	assert_output "[(8600000, 4300000, 4300000, 4300000, 1.66, 518000000)]"
	# the pool pauses name their pool; the table is every gc record, the
	# pauses only whole ones (a pool's record is a view of a minor pause)
	run q "$T/a.json" '[g["pool"] for g in r["gc"]["rows"] if g["kind"] == "pool"], r["gc"]["pauses"], sum(g["count"] for g in r["gc"]["rows"])'
	assert_output "(['G1 Young Generation/G1 Eden Space'], 11, 14)"
}

@test "mkfixture runtime: phases at the marks, and the JVM's startup kept apart at vm__init__end" {
	b=$(mk f runtime)
	pmuanalyze --json "$b" >"$T/a.json"
	run q "$T/a.json" '[(p["name"], p["spans_completed"], p["gc"]["pauses"], p["alloc"]["estimate"]) for p in r["phases"]["phases"]]'
	assert_output "[('startup', 0, 0, True), ('warmup', 20, 0, True), ('steady', 180, 11, True)]"
	# the phases partition the spans, the pauses and the allocation estimate
	run q "$T/a.json" 'sum(p["spans_completed"] for p in r["phases"]["phases"]) == 200, sum(p["alloc"]["est_bytes"] for p in r["phases"]["phases"]) == r["alloc"]["est_bytes"]'
	assert_output "(True, True)"
	run q "$T/a.json" '[(i["program"], i.get("startup_end_source"), [(p["name"], p["gc"]["pauses"]) for p in i["phases"]]) for i in r["phases"]["incarnations"]]'
	assert_output "[('pmu-example', 'pmu:mark', [('startup', 0), ('warmup', 0), ('steady', 2)]), ('java', 'hotspot:vm__init__end', [('startup', 0), ('steady', 3)])]"
	# absent streams are said, never 0
	run q "$T/a.json" 'r["phases"]["phases"][0]["syscalls"]["status"], r["phases"]["phases"][0]["cpu_samples"]["status"]'
	assert_output "('not-recorded', 'ok')"
}

@test "mkfixture runtime: allocation sites and live at exit are labelled estimates" {
	b=$(mk f runtime)
	pmuanalyze --json "$b" >"$T/a.json"
	run q "$T/a.json" 'r["alloc"]["estimate"], all(s["estimate"] is True for s in r["alloc"]["sites"]), all(i["estimate"] is True for i in r["alloc"]["incarnations"]), r["alloc"]["summary"]["estimate"]'
	assert_output "(True, True, True, True)"
	# the sites' estimates sum to the stream's, and their shares to 100%
	run q "$T/a.json" 'sum(s["est_bytes"] for s in r["alloc"]["sites"]) == r["alloc"]["est_bytes"] == r["alloc"]["summary"]["est_bytes"], round(sum(s["share_percent"] for s in r["alloc"]["sites"]))'
	assert_output "(True, 100)"
	run q "$T/a.json" '[(i["program"], i["live_samples"], i["live_est_bytes"]) for i in r["alloc"]["incarnations"] if i["inc"] == "i2"]'
	assert_output "[('pmu-example', 1, 524416)]"
	# pmu:alloc's own counts are exact, and said so
	run q "$T/a.json" '[a["estimate"] for a in r["probes"]["allocs_reported"]]'
	refute_output --partial "True"
}

@test "text, CSV and HTML carry the section; estimates are marked ~" {
	b=$(mk f runtime)
	run pmuanalyze "$b"
	assert_success
	assert_output --regexp "span tree \(exact; 200 via probes, 0 via the control channel\)"
	assert_output --regexp "    request>work +100 +199.5 ms +2.0 ms +2.0 ms +2.0 ms"
	assert_output --regexp "pmu-example \(9001\) +pmu +young +2 +8.6 ms"
	assert_output --regexp "allocation hot sites \(~ estimates from 17 samples"
	assert_output --regexp "java \(pid 9005, i4\), its own phases from its start \(startup-end from hotspot:vm__init__end\)"
	assert_output --partial "syscalls: not-recorded"
	pmuanalyze --csv "$b" >"$T/a.csv"
	grep -q '^span_path,"request>work",100,199495000,' "$T/a.csv"
	grep -q '^gc,"pmu-example",i2,9001,pmu,"young","",2,8600000,' "$T/a.csv"
	grep -q '^section,site,frames,samples,est_bytes_estimate' "$T/a.csv"
	pmuanalyze --html "$T/a.html" "$b" >/dev/null
	grep -q '<section id="runtime">' "$T/a.html"
	grep -q '<td>request&gt;work</td>' "$T/a.html"
	grep -q 'bytes~' "$T/a.html"
}

@test "Chrome trace: the probes stream's spans, GC pauses and marks on their threads" {
	b=$(mk f runtime)
	pmuanalyze --trace "$T/t.json" "$b" >/dev/null
	run $PY - "$T/t.json" "$b" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
assert sorted(d) == ["displayTimeUnit", "otherData", "traceEvents"]
assert all(e["ts"] >= 0 for e in ev if "ts" in e)
sp = [e for e in ev if e.get("cat") == "span"]
gc = [e for e in ev if e.get("cat") == "gc"]
mk = [e for e in ev if e.get("cat") == "mark"]
# cross-thread spans: drawn on the thread that began them, the end thread in args
req = [e for e in sp if e["name"] == "request"]
print(len(sp), len(req), len({e["args"]["end_tid"] for e in req}), {e["tid"] for e in req})
print(len(gc), sorted({e["name"] for e in gc}))
print(sorted((e["name"], e["ph"], e["s"], e["args"]["source"]) for e in mk))
# every child nests in its parent in time
byid = {e["args"]["id"]: e for e in sp}
print(all(byid[e["args"]["parent"]]["ts"] <= e["ts"] for e in sp if "parent" in e["args"]))
EOF
	assert_output "200 100 2 {9001}
14 ['GC hotspot minor', 'GC hotspot pool', 'GC pmu young', 'GC python gen0', 'GC python gen1', 'GC python gen2']
[('startup-end', 'i', 't', 'hotspot:vm__init__end'), ('startup-end', 'i', 't', 'pmu:mark'), ('warmup-end', 'i', 't', 'pmu:mark')]
True"
}

@test "no runtime streams: each part says not recorded and how to record it" {
	b=$(mk m multiproc)
	pmuanalyze --json "$b" >"$T/m.json"
	run q "$T/m.json" 'r["probes"]["status"], r["alloc"]["status"], r["gc"]["status"], r["alloc"]["remedy"]'
	assert_output "('not-recorded', 'not-recorded', 'not-recorded', 'record with pmurec --alloc (or --alloc-sample BYTES)')"
	run q "$T/m.json" '[(p["name"], p["alloc"]["status"], "est_bytes" in p["alloc"]) for p in r["phases"]["phases"]]'
	# its one mark, warmup-end, cuts the run: warmup from the start, then steady
	assert_output "[('warmup', 'not-recorded', False), ('steady', 'not-recorded', False)]"
	run schema_check "$T/m.json"
	assert_output "schema errors: 0"
	run pmuanalyze "$b"
	assert_output --partial "allocations: not-recorded: not recorded: this recording has no alloc collector"
}

@test "a collector that was not requested or unavailable: its status and reason, not an empty table" {
	b=$(rt s --no-alloc)
	pmuanalyze --json "$b" >"$T/s.json"
	run q "$T/s.json" 'r["alloc"]["status"], r["alloc"]["reason"], r["phases"]["phases"][0]["alloc"]["status"]'
	assert_output "('not-requested', 'not recorded: the alloc collector was not requested', 'not-requested')"
	# the probes collector unavailable: its own reason and remedy
	b=$(mk u runtime)
	rm "$b/data/collectors/probes/probes.jsonl"
	$PY - "$b/data/collectors/probes/lifecycle.jsonl" <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
out = [lines[0], lines[1]]
t = json.loads(lines[1])["t_ns"]
out.append(json.dumps({"type": "lifecycle", "t_ns": t + 1, "event": "final", "status": "unavailable",
                       "reason": "no probes of providers pmu, python or hotspot in /bin/true or the 1 objects it loads",
                       "remedy": "build with include/pmu/probe.h, or name --probe"}, separators=(",", ":")))
open(sys.argv[1], "w").write("\n".join(out) + "\n")
EOF
	rebag "$b"
	pmuanalyze --allow-invalid --json "$b" >"$T/u.json"
	run q "$T/u.json" 'r["probes"]["status"], r["gc"]["status"], r["gc"]["reason"][:21], r["spans"]["status"]'
	assert_output "('unavailable', 'unavailable', 'no probes of provider', 'none')"
	run pmuanalyze --allow-invalid "$b"
	assert_output --partial "GC pauses: unavailable: no probes of providers pmu, python or hotspot in /bin/true"
}

@test "t3630-rtfix bundle: exact GC percentiles over unequal pauses, and the hand-computed estimates" {
	b=$(rt s)
	pmuanalyze --json "$b" >"$T/s.json"
	# pauses 1, 2, 3, 4 ms: nearest-rank p50 2 ms, p90 and p99 4 ms
	run q "$T/s.json" '[(g["count"], g["total_ns"], g["min_ns"], g["p50_ns"], g["p90_ns"], g["p99_ns"]) for g in r["gc"]["rows"]]'
	assert_output "[(4, 10000000, 1000000, 2000000, 4000000, 4000000)]"
	# 6 samples of 4096 bytes at hot_loop's chain: 6 x round(4096 / (1 - exp(-4096/524288)))
	run q "$T/s.json" '[(s["samples"], s["est_bytes"]) for s in r["alloc"]["sites"]][0]'
	assert_output "(6, $($PY -c 'import math; print(6 * round(4096 / (1 - math.exp(-4096 / 524288))))'))"
	# cut at +50 ms and +80 ms of i1's start: one GC pause (1 ms) in startup
	run q "$T/s.json" '[(p["name"], p["wall_ns"], p["gc"]["pauses"], p["gc"]["total_ns"]) for p in r["phases"]["phases"]][:2]'
	assert_output "[('startup', 50000000, 1, 1000000), ('warmup', 30000000, 1, 2000000)]"
}

@test "pmu-example recorded: the span tree from whichever path delivered the spans, phases at its marks" {
	needs_backend linux
	[ -x "$PMU_BUILD/pmu-example" ] || skip "build/pmu-example is not built"
	pmurec --mode full -o "$T/r.bundle" -- "$PMU_BUILD/pmu-example" --requests 200 --quiet 2>"$T/err" ||
		{ cat "$T/err"; false; }
	pmuanalyze --json "$T/r.bundle" >"$T/r.json"
	# every request and its child, through the probes (usdt) or the control channel (ctl)
	run q "$T/r.json" '[(p["path"], p["count"]) for p in r["spans"]["paths"]], sum(r["spans"]["sources"].values())'
	assert_output "([('request', 200), ('request>work', 200)], 400)"
	run q "$T/r.json" '[p["name"] for p in r["phases"]["phases"]], sum(p["spans_completed"] for p in r["phases"]["phases"])'
	assert_output "(['startup', 'warmup', 'steady'], 400)"
	# GC pauses: from the probes when the collector ran, else its reason
	run q "$T/r.json" 'r["gc"]["status"] == "ok" and r["gc"]["pauses"] == 4 or (r["gc"]["status"] != "ok" and len(r["gc"]["reason"]) > 0)'
	assert_output "True"
	run schema_check "$T/r.json"
	assert_output "schema errors: 0"
	pmuanalyze --trace "$T/t.json" "$T/r.bundle" >/dev/null
	run $PY -c 'import json,sys; ev=json.load(open(sys.argv[1]))["traceEvents"]; print(len([e for e in ev if e.get("cat") == "span"]), len([e for e in ev if e.get("cat") == "mark"]))' "$T/t.json"
	assert_output "400 2"
}

@test "pmu-example recorded with --alloc: the allocation estimate against the program's own count" {
	needs_backend linux
	[ -x "$PMU_BUILD/pmu-example" ] || skip "build/pmu-example is not built"
	pmurec --mode full --alloc-sample 65536 -o "$T/a.bundle" -- "$PMU_BUILD/pmu-example" --requests 1000 --quiet \
		2>"$T/err" || { cat "$T/err"; false; }
	pmuanalyze --json "$T/a.bundle" >"$T/a.json"
	st=$(q "$T/a.json" 'r["alloc"]["status"]')
	if [ "$st" != ok ]; then
		skip "the alloc collector did not record here: $(q "$T/a.json" 'r["alloc"]["status"] + ": " + r["alloc"]["reason"]')"
	fi
	# 1000 requests: 65792000 bytes (pmu-example's own count); at one sample
	# per 64 KiB that is ~1000 samples, whose sum is within 20% of the truth
	# with a wide margin (the relative error of ~1000 samples is ~3%)
	run q "$T/a.json" 'abs(r["alloc"]["est_bytes"] - 65792000) <= 0.2 * 65792000, all(s["estimate"] for s in r["alloc"]["sites"])'
	assert_output "(True, True)"
	run q "$T/a.json" '[s["site"] for s in r["alloc"]["sites"]][:2]'
	assert_output --partial "alloc_blocks"
	run schema_check "$T/a.json"
	assert_output "schema errors: 0"
}

@test "A/B: spans by name and GC pauses by runtime x kind side by side; nothing to compare is said" {
	a=$(mk a runtime)
	b=$(mk b runtime)
	# B's pmu-example paused twice as long in its first young GC
	$PY - "$b/data/collectors/probes/probes.jsonl" <<'EOF2'
import json, sys
out, done = [], False
for l in open(sys.argv[1]).read().splitlines():
    r = json.loads(l)
    if r.get("type") == "gc" and r["runtime"] == "pmu" and not done:
        r["begin_ns"] -= r["dur_ns"]
        r["dur_ns"] *= 2
        done = True
    out.append(json.dumps(r, separators=(",", ":")))
open(sys.argv[1], "w").write("\n".join(out) + "\n")
EOF2
	rebag "$b"
	pmuanalyze --json "$a" "$b" >"$T/c.json"
	run q "$T/c.json" '[(g["runtime"], g["kind"], g["count_a"], g["count_b"], g["total_ns_b"] - g["total_ns_a"]) for g in d["comparison"]["runtime"]["gc"] if g["runtime"] == "pmu"]'
	assert_output "[('pmu', 'young', 2, 2, 4300000)]"
	run q "$T/c.json" '[(s["name"], s["presence"], s["count_a"], s["count_b"]) for s in d["comparison"]["runtime"]["spans"]], d["comparison"]["runtime"]["alloc"]["estimate"]'
	assert_output "([('request', 'both', 100, 100), ('work', 'both', 100, 100)], True)"
	run schema_check "$T/c.json"
	assert_output "schema errors: 0"
	run pmuanalyze "$a" "$b"
	assert_output --regexp "GC pmu young +pauses 2 -> 2, total 8.600 ms -> 12.900 ms"
	m=$(mk m minimal)
	n=$(mk n minimal)
	pmuanalyze --json "$m" "$n" >"$T/m.json"
	run q "$T/m.json" 'd["comparison"]["runtime"]["status"], d["comparison"]["runtime"]["reason"][:44]'
	assert_output "('unavailable', 'no spans, GC pauses or allocations on either')"
}

@test "memory stays bounded: 301000 spans, past the span index's bound, with their overflow counted" {
	b=$(mk big runtime)
	# java (i4, tid 9005) runs 1000 batches of 300 ticks each from 2.0 s
	$PY - "$b" <<'EOF2'
import json, sys
p = sys.argv[1] + "/data/collectors/probes/probes.jsonl"
lines = open(p).read().splitlines()
head, recs = lines[0], [json.loads(l) for l in lines[1:]]
new = []
nid = 10**9
t = 2000000000
for b in range(1000):
    bid = nid; nid += 1
    b0 = t
    for k in range(300):
        a = t + 100
        z = a + 1000 + (k % 7) * 100
        new.append({"type": "span", "t_ns": z, "id": str(nid), "parent": str(bid), "inc": "i4", "pid": 9005, "tid": 9005,
                    "end_tid": 9005, "name": "tick", "begin_ns": a, "end_ns": z, "via": "usdt"})
        nid += 1
        t = z
    t += 100
    new.append({"type": "span", "t_ns": t, "id": str(bid), "inc": "i4", "pid": 9005, "tid": 9005, "end_tid": 9005,
                "name": "batch", "begin_ns": b0, "end_ns": t, "via": "usdt"})
    t += 100
tail = [r for r in recs if r["type"] in ("probe", "summary")]
body = [r for r in recs if r["type"] not in ("probe", "summary")]
ordered = [r for r in body if r["type"] == "config"] + sorted([r for r in body if r["type"] != "config"] + new, key=lambda r: r["t_ns"])
for r in tail:
    if r["type"] == "summary":
        r["spans"] += len(new)
        r["hits"] += 2 * len(new)
    if r["type"] == "probe" and r["name"] in ("span_begin", "span_end"):
        r["hits"] += len(new)
with open(p, "w") as f:
    f.write(head + "\n")
    for r in ordered + tail:
        f.write(json.dumps(r, separators=(",", ":")) + "\n")
recs = [json.loads(l) for l in open(p).read().splitlines()[1:]]
h = sum(r["hits"] for r in recs if r["type"] == "probe")
L = open(p).read().splitlines()
out = [L[0]]
for l in L[1:]:
    r = json.loads(l)
    if r["type"] == "summary":
        r["hits"] = h
    out.append(json.dumps(r, separators=(",", ":")))
open(p, "w").write("\n".join(out) + "\n")
EOF2
	rebag "$b"
	/usr/bin/time -f '%M' -o "$T/rss" pmuanalyze --json "$b" >"$T/big.json"
	run q "$T/big.json" 'sorted((p["path"], p["count"]) for p in r["spans"]["paths"]), r["table_overflow"]["spans_indexed"], r["spans"]["unresolved_paths"]'
	assert_output "([('?>tick', 39000), ('batch', 1000), ('batch>tick', 261000), ('request', 100), ('request>work', 100)], 39056, 39000)"
	# every duration kept: the percentiles are exact
	run q "$T/big.json" '[(n["name"], n["count"], n["p50_ns"], n["p90_ns"], n["max_ns"], n["percentiles_exact"]) for n in r["spans"]["names"] if n["name"] == "tick"]'
	assert_output "[('tick', 300000, 1300, 1600, 1600, True)]"
	rss_under "$(cat "$T/rss")" 65536
}

@test "mkfixture runtime --loss, tolerated: the loss is in the section and in what was not measured" {
	b="$T/l"
	mkfixture runtime "$b" --loss --tolerate-loss >/dev/null
	pmuanalyze --json "$b" >"$T/l.json"
	run q "$T/l.json" 'r["probes"]["lost"]["reserve"], r["alloc"]["lost"]["reserve"], [x["status"] for x in d["not_measured"] if x["what"] == "runtime evidence (loss)"]'
	assert_output "(3, 2, ['degraded'])"
	run pmuanalyze "$b"
	assert_output --partial "lost: 2 samples (ring 2, pending 0, live map 0, channel 0): the estimates are lower bounds"
	assert_output --partial "2 samples dropped, in no estimate"
	run schema_check "$T/l.json"
	assert_output "schema errors: 0"
}
