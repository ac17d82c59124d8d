#!/usr/bin/env bats
# pmuanalyze's profile section (bundle-spec section 22): the samples of a
# real recording of tests/helpers/hot.c (hot_loop with mix() inlined,
# lib_work in libhot.so, child_loop in a forked child), symbolized from the
# bundle by build-id: the top functions with file:line and 95% intervals,
# the inline chain, the dominant cost's sentence, JSON, CSV, A/B by build-id
# and symbol, a stale binary, retained binaries, and a bundle without
# samples.

load helpers

# The line of hot.c that calls mix() inside hot_loop, and mix()'s lines.
hot_src() { echo "$BATS_TEST_DIRNAME/../helpers/hot.c"; }
call_line() { grep -n 'x = mix(x, i);' "$(hot_src)" | cut -d: -f1; }

setup_file() {
	[ "$(cat "$PMU_BUILD/backend" 2>/dev/null)" = linux ] || return 0
	F=$BATS_FILE_TMPDIR
	# the workload in a directory of its own, so that it can be deleted
	# and rebuilt (its libhot.so is found by rpath $ORIGIN)
	mkdir -p "$F/bin"
	cp "$PMU_BUILD/hot" "$PMU_BUILD/libhot.so" "$F/bin/"
	pmurec --mode full -o "$F/s.bundle" -- "$F/bin/hot" 400 child >"$F/s.out" 2>&1 || true
	pmurec --mode full -o "$F/s2.bundle" -- "$F/bin/hot" 400 child >"$F/s2.out" 2>&1 || true
}

setup() {
	# the fixture's tests read a written bundle: any backend
	[[ $BATS_TEST_DESCRIPTION == fixture:* ]] || needs_backend linux
	T=$BATS_TEST_TMPDIR
	F=$BATS_FILE_TMPDIR
}

# sampled BUNDLE: skip unless the recording sampled (with its reason)
sampled() {
	[ -s "$1/data/collectors/sampling/samples.jsonl" ] ||
		skip "no samples: $(grep -o '"reason":"[^"]*' "$1/data/collectors/sampling/lifecycle.jsonl" 2>/dev/null |
			head -1) $(cat "${1%.bundle}.out" 2>/dev/null | tail -2)"
}

# q FILE EXPR: a Python expression over the --json report d (p: its profile,
# h: program hot's profile)
q() {
	$PY -c 'import json,sys
d = json.load(open(sys.argv[1]))
p = d.get("profile", {})
h = ([x for x in p.get("programs", []) if x["program"] == "hot"] or [None])[0]
print(eval("(" + sys.argv[2] + "\n)"))' "$1" "$2"
}

@test "the recorded bundle is valid" {
	sampled "$F/s.bundle"
	run pmuvalidate "$F/s.bundle"
	assert_success
}

@test "program hot: the top self function is hot_loop, at hot.c's line that calls mix(), with a 95% interval" {
	sampled "$F/s.bundle"
	run pmuanalyze "$F/s.bundle"
	assert_success
	assert_line --regexp '^profile \(repetition 1; (cpu-clock|cycles) at 999 Hz, call chains fp; '
	assert_line --regexp '^  program hot: [0-9]+ samples, 2 processes with samples$'
	# the first row under program hot's "self" heading
	first=$(printf '%s\n' "$output" | sed -n '/^  program hot:/,$p' | sed -n '3p')
	[[ $first =~ ^\ +hot_loop\ +[0-9]+\ +[0-9.]+%\ \[\ *[0-9.]+%\ \.\.\ +[0-9.]+%\]\ +hot\.c:([0-9]+)$ ]] ||
		fail "the first self row is not hot_loop at hot.c:LINE with an interval: '$first'"
	[ "${BASH_REMATCH[1]}" = "$(call_line)" ] || fail "hot_loop at hot.c:${BASH_REMATCH[1]}, not $(call_line)"
}

@test "the inline chain: mix at its own line, inlined into hot_loop at the call" {
	sampled "$F/s.bundle"
	run pmuanalyze "$F/s.bundle"
	assert_success
	assert_line --regexp "^ +inline: mix \(hot\.c:(29|30|31|32)\) inlined into hot_loop \(hot\.c:$(call_line)\)$"
	assert_line --regexp "^    hottest line: hot\.c:(29|30|31|32), [0-9]+ samples, .*: mix \(hot\.c:[0-9]+\) inlined into hot_loop \(hot\.c:$(call_line)\)$"
}

@test "lib_work is named in libhot.so, child_loop is the child incarnation's, hot_loop the parent's" {
	sampled "$F/s.bundle"
	pmuanalyze --json "$F/s.bundle" >"$T/s.json"
	run q "$T/s.json" '[(r["function"], r["object"].split("/")[-1], r["file"].split("/")[-1]) for r in h["self"] if r["function"] == "lib_work"]'
	assert_output "[('lib_work', 'libhot.so', 'hotlib.c')]"
	# the root (the parent) and its forked child, by the cohort
	root=$($PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print([i["id"] for i in d["cohort"] if not i.get("parent")][0])' "$T/s.json")
	run q "$T/s.json" 'sorted((x["inc"] == "'"$root"'", x["self"][0]["function"]) for x in h["incarnations"])'
	assert_output "[(False, 'child_loop'), (True, 'hot_loop')]"
	run pmuanalyze "$F/s.bundle"
	assert_line --regexp '^    process [^ ]+ \(pid [0-9]+, hot\): [0-9]+ samples$'
	assert_line --regexp '^        child_loop +[0-9]+ +[0-9.]+% \[ *[0-9.]+% \.\. +[0-9.]+%\] +hot\.c:[0-9]+$'
}

@test "JSON: the same top function, shares inside their intervals, estimates labelled, the schema holds" {
	sampled "$F/s.bundle"
	pmuanalyze --json "$F/s.bundle" >"$T/s.json"
	run schema_check "$T/s.json"
	assert_output "schema errors: 0"
	run q "$T/s.json" 'p["status"], p["estimate"], h["self"][0]["function"], h["self"][0]["symbol"], h["self"][0]["status"], h["self"][0]["line"]'
	assert_output "('ok', True, 'hot_loop', 'hot_loop', 'ok', $(call_line))"
	run q "$T/s.json" 'all(r["ci_low_percent"] <= r["share_percent"] <= r["ci_high_percent"] and r["ci_high_percent"] - r["ci_low_percent"] > 0 for x in p["programs"] for k in ("self", "inclusive") for r in x[k])'
	assert_output True
	# the interval is Wilson's score interval (z = 1.96), computed here apart
	run $PY -c 'import json,sys,math
d = json.load(open(sys.argv[1]))
h = [x for x in d["profile"]["programs"] if x["program"] == "hot"][0]
r, n, z = h["self"][0], h["samples"], 1.959963984540054
k = r["samples"]; ph = k / n; den = 1 + z*z/n
c = (ph + z*z/(2*n)) / den; w = z * math.sqrt(ph*(1-ph)/n + z*z/(4*n*n)) / den
print(abs(100*(c-w) - r["ci_low_percent"]) < 1e-6, abs(100*(c+w) - r["ci_high_percent"]) < 1e-6, abs(100*k/n - r["share_percent"]) < 1e-9)' "$T/s.json"
	assert_output "True True True"
	# self shares of a scope add up to its samples; inclusive counts each
	# function once per sample, so none exceeds the scope's samples
	run q "$T/s.json" 'sum(r["samples"] for r in h["self"]) == h["samples"] or not h["self_complete"], max(r["samples"] for r in h["inclusive"]) <= h["samples"]'
	assert_output "(True, True)"
	run q "$T/s.json" '"mix (hot.c:" in h["self"][0]["inline_chain"] and h["self"][0]["inline_chain"].endswith("inlined into hot_loop (hot.c:'"$(call_line)"')")'
	assert_output True
	# callers: hot_loop is called from run
	run q "$T/s.json" '[c["function"] for x in h["callers_callees"] if x["function"] == "hot_loop" for c in x["callers"]][:1]'
	assert_output "['run']"
}

@test "accounting: the aggregated samples are the stream's, and loss and throttling are stated with numbers" {
	sampled "$F/s.bundle"
	pmuanalyze --json "$F/s.bundle" >"$T/s.json"
	n=$(grep -c '^{"type":"sample"' "$F/s.bundle/data/collectors/sampling/samples.jsonl")
	run q "$T/s.json" 'p["accounting"]["samples"], p["accounting"]["summary_samples"]'
	assert_output "($n, $n)"
	run pmuanalyze "$F/s.bundle"
	assert_line --regexp "^  accounted: $n samples of the cohort, [0-9]+ unattributed \(of no cohort process, left out\), [0-9]+ lost \(ring full\), [0-9]+ lost samples, [0-9]+ throttles, [0-9]+ chains cut"
}

@test "the dominant cost names the function, its line and its share with an interval" {
	sampled "$F/s.bundle"
	pmuanalyze --json "$F/s.bundle" >"$T/s.json"
	run q "$T/s.json" 'd["dominant_cost"]["profile"]["function"], d["dominant_cost"]["profile"]["estimate"]'
	assert_output "('hot_loop', True)"
	run pmuanalyze "$F/s.bundle"
	assert_line --regexp "^dominant cost: .*; within hot, [0-9]+% ± [0-9]+% of its [0-9]+ samples in \`hot_loop\` \(hot\.c:$(call_line)\)"
}

@test "the wall-time decomposition splits the on-CPU time by function: estimates with intervals, from the samples" {
	sampled "$F/s.bundle"
	pmuanalyze --json "$F/s.bundle" >"$T/s.json"
	# the top function is hot_loop; est_ns is on_cpu_ns x its share of the
	# cohort's samples, inside its interval's bounds; labelled estimates
	run q "$T/s.json" '[(f["function"], f["estimate"],
	  abs(f["est_ns"] - d["wall_time"]["on_cpu_ns"] * f["samples"] / d["profile"]["accounting"]["samples"]) <= 1,
	  f["est_low_ns"] <= f["est_ns"] <= f["est_high_ns"], f["ci_low_percent"] <= f["share_percent"] <= f["ci_high_percent"])
	  for f in d["wall_time"]["on_cpu_by_code"]["functions"]][0], d["wall_time"]["on_cpu_by_code"]["share_of_time"]'
	assert_output "(('hot_loop', True, True, True, True), True)"
	run q "$T/s.json" 'sorted(f["function"] for f in d["wall_time"]["on_cpu_by_code"]["functions"][:3])'
	assert_output "['child_loop', 'hot_loop', 'lib_work']"
	run pmuanalyze "$F/s.bundle"
	assert_line --regexp "^  by code      ~[0-9.]+ m?s hot_loop in hot \([0-9]+% \[[0-9]+%\.\.[0-9]+%\]\), "
	assert_line --regexp "^               estimates: each function's share of [0-9]+ cpu-clock samples .* times the on-CPU time"
	# functions without DWARF (named from the symbol table: no file, no
	# line) are listed without them, and the report keeps its schema
	mkdir -p "$T/bin"
	cp "$PMU_BUILD/libhot.so" "$T/bin/"
	strip --strip-debug -o "$T/bin/hot" "$PMU_BUILD/hot"
	pmurec --mode full -o "$T/nd.bundle" -- "$T/bin/hot" 300
	pmuanalyze --json "$T/nd.bundle" >"$T/nd.json"
	run q "$T/nd.json" '[(f["function"], "file" in f, "line" in f) for f in d["wall_time"]["on_cpu_by_code"]["functions"]][0]'
	assert_output "('hot_loop', False, False)"
	run schema_check "$T/nd.json"
	assert_output "schema errors: 0"
	# a bundle recorded without sampling has no such split
	pmurec --mode none -o "$T/l.bundle" -- true
	pmuanalyze --json "$T/l.bundle" >"$T/l.json" || true
	run q "$T/l.json" '"on_cpu_by_code" in d.get("wall_time", {})'
	assert_output False
}

@test "CSV: the profile's rankings and accounting" {
	sampled "$F/s.bundle"
	run pmuanalyze --csv "$F/s.bundle"
	assert_success
	assert_line --regexp '^profile_accounting,ok,[0-9]+,'
	assert_line --regexp "^profile,hot,,self,1,hot_loop,hot_loop,[^,]*/hot,[0-9a-f]+,ok,,[^,]*hot\.c,$(call_line),[0-9]+,[0-9]+,[0-9.]+,[0-9.]+,[0-9.]+,true$"
}

@test "A/B of two recordings: functions matched by build-id and symbol, with an interval for the difference" {
	sampled "$F/s.bundle"
	sampled "$F/s2.bundle"
	pmuanalyze --json "$F/s.bundle" "$F/s2.bundle" >"$T/ab.json" || true
	run schema_check "$T/ab.json"
	assert_output "schema errors: 0"
	run $PY -c 'import json,sys
d = json.load(open(sys.argv[1]))["comparison"]["profile"]
h = [x for x in d["programs"] if x["program"] == "hot"][0]
f = [x for x in h["functions"] if x["function"] == "hot_loop"][0]
print(d["status"], f["verdict_code"] in ("higher", "lower", "no-significant-difference"),
      f["ci_low_points"] <= f["delta_points"] <= f["ci_high_points"], f["build_id"] is not None)' "$T/ab.json"
	assert_output "ok True True True"
	# the interval is Newcombe's hybrid score interval, computed here apart
	run $PY -c 'import json,sys,math
z = 1.959963984540054
def wilson(k, n):
    p = k / n; den = 1 + z*z/n; c = (p + z*z/(2*n)) / den; w = z * math.sqrt(p*(1-p)/n + z*z/(4*n*n)) / den
    return p, c - w, c + w
d = json.load(open(sys.argv[1]))["comparison"]["profile"]
h = [x for x in d["programs"] if x["program"] == "hot"][0]
f = [x for x in h["functions"] if x["function"] == "hot_loop"][0]
p1, l1, u1 = wilson(f["a_samples"], h["a_samples"]); p2, l2, u2 = wilson(f["b_samples"], h["b_samples"])
lo = p2 - p1 - math.sqrt((p2-l2)**2 + (u1-p1)**2); hi = p2 - p1 + math.sqrt((u2-p2)**2 + (p1-l1)**2)
print(abs(100*lo - f["ci_low_points"]) < 1e-6, abs(100*hi - f["ci_high_points"]) < 1e-6)' "$T/ab.json"
	assert_output "True True"
	run pmuanalyze "$F/s.bundle" "$F/s2.bundle"
	assert_line --regexp '^    hot_loop +A +[0-9.]+%  B +[0-9.]+%  (no significant difference|higher in B|lower in B)'
	run pmuanalyze --csv "$F/s.bundle" "$F/s2.bundle"
	assert_line --regexp '^profile_comparison,hot,hot_loop,hot_loop,[0-9a-f]+,[0-9]+,[0-9.]+,[0-9]+,[0-9.]+,-?[0-9.]+,-?[0-9.]+,-?[0-9.]+,(higher|lower|no-significant-difference),.*,true$'
}

@test "A/B against a rebuilt binary: same name, another build-id: a verdict, never a difference" {
	sampled "$F/s.bundle"
	command -v cc >/dev/null || skip "cc is needed to rebuild the workload"
	mkdir -p "$T/bin"
	cp "$F/bin/libhot.so" "$T/bin/"
	sed 's/^int main(/int pmu_rebuilt(void) { return 1; }\nint main(/' "$(hot_src)" >"$T/hot.c"
	cc -std=gnu11 -g -O2 -fno-omit-frame-pointer -Wl,--build-id -o "$T/bin/hot" "$T/hot.c" -L"$T/bin" -lhot \
		-Wl,-rpath,'$ORIGIN'
	run pmurec --mode full -o "$T/r.bundle" -- "$T/bin/hot" 200
	sampled "$T/r.bundle"
	pmuanalyze --json --force "$F/s.bundle" "$T/r.bundle" >"$T/ab.json" || true
	run $PY -c 'import json,sys
d = json.load(open(sys.argv[1]))["comparison"]["profile"]
h = [x for x in d["programs"] if x["program"] == "hot"][0]
for f in h["functions"]:
    if f["function"] == "hot_loop":
        print(f["verdict_code"], "delta_points" in f, "another build" in f["verdict"])' "$T/ab.json"
	assert_output "only-a False True
only-b False True"
}

@test "a rebuilt binary at the recorded path is reported stale, never named" {
	command -v cc >/dev/null || skip "cc is needed to rebuild the workload"
	mkdir -p "$T/bin"
	cp "$PMU_BUILD/hot" "$PMU_BUILD/libhot.so" "$T/bin/"
	run pmurec --mode full -o "$T/st.bundle" -- "$T/bin/hot" 200
	sampled "$T/st.bundle"
	[ ! -d "$T/st.bundle/data/build-id" ] || skip "the recording retained binaries without --retain-binaries"
	sed 's/^int main(/int pmu_rebuilt(void) { return 1; }\nint main(/' "$(hot_src)" >"$T/hot.c"
	cc -std=gnu11 -g -O2 -fno-omit-frame-pointer -Wl,--build-id -o "$T/bin/hot" "$T/hot.c" -L"$T/bin" -lhot \
		-Wl,-rpath,'$ORIGIN'
	pmuanalyze --json "$T/st.bundle" >"$T/st.json"
	run q "$T/st.json" '[r["function"] for x in p["programs"] for r in x["self"] if r.get("symbol") in ("hot_loop", "child_loop", "main", "run")]'
	assert_output "[]"
	run q "$T/st.json" 'sorted({(u["function"], u["status"], u["reason"]) for u in p["unsymbolized"] if u.get("object", "").endswith("/hot")})'
	assert_output "[('[unknown] in hot', 'stale', 'stale binary (build-id mismatch)')]"
	# libhot.so did not change: lib_work is still named
	run q "$T/st.json" 'any(r["function"] == "lib_work" for x in p["programs"] for r in x["self"])'
	assert_output True
	run pmuanalyze "$T/st.bundle"
	assert_line --regexp '^      \[unknown\] in hot +[0-9]+ +[0-9.]+% \[ *[0-9.]+% \.\. +[0-9.]+%\]  \(stale binary \(build-id mismatch\)'
	refute_output --partial 'hot_loop'
}

@test "done when: --retain-binaries, the bundle copied elsewhere and the binaries deleted: still symbolized" {
	mkdir -p "$T/bin"
	cp "$PMU_BUILD/hot" "$PMU_BUILD/libhot.so" "$T/bin/"
	run pmurec --mode full --retain-binaries -o "$T/rt.bundle" -- "$T/bin/hot" 400
	sampled "$T/rt.bundle"
	[ -d "$T/rt.bundle/data/build-id" ] || skip "pmurec --retain-binaries retained nothing: $(grep -o '"type":"unretained"[^}]*' "$T/rt.bundle/data/collectors/sampling/maps.jsonl" | head -2)"
	mkdir "$T/elsewhere"
	cp -a "$T/rt.bundle" "$T/elsewhere/"
	rm -rf "$T/bin" "$T/rt.bundle"
	run pmuanalyze "$T/elsewhere/rt.bundle"
	assert_success
	assert_line --regexp "^      hot_loop +[0-9]+ +[0-9.]+% \[ *[0-9.]+% \.\. +[0-9.]+%\] +hot\.c:$(call_line)$"
	assert_line --regexp "^dominant cost: .*within hot, [0-9]+% ± [0-9]+% of its [0-9]+ samples in \`hot_loop\` \(hot\.c:$(call_line)\)"
	assert_line --regexp '^      lib_work +[0-9]+ '
}

@test "a bundle recorded without sampling (mode none) says why, from the collector's lifecycle" {
	run pmurec --mode none -o "$T/n.bundle" -- "$PMU_BUILD/hot" 5
	assert_success
	run pmuanalyze "$T/n.bundle"
	assert_success
	assert_line "profile: not-requested: sampling was not requested (mode none); record with pmurec --mode light (99 Hz, no call chains) or --mode full (999 Hz, call chains)"
	pmuanalyze --json "$T/n.bundle" >"$T/n.json"
	run q "$T/n.json" 'p["status"], "profile" in d["dominant_cost"]'
	assert_output "('not-requested', False)"
	run schema_check "$T/n.json"
	assert_output "schema errors: 0"
}

@test "a bundle of an older spec has no sampling collector: not recorded, and not listed as unmeasured" {
	b=$(mk old multiproc)
	pmuanalyze --json "$b" >"$T/o.json"
	run q "$T/o.json" 'p["status"], [m for m in d["not_measured"] if m["what"].startswith("profile")]'
	assert_output "('not-recorded', [])"
}

@test "call chains by DWARF unwinding of a binary without frame pointers: the same functions and callers" {
	run pmurec --mode full --call-graph dwarf -o "$T/d.bundle" -- "$PMU_BUILD/hot-nofp" 300
	sampled "$T/d.bundle"
	pmuanalyze --json "$T/d.bundle" >"$T/d.json"
	run $PY -c 'import json,sys
p = json.load(open(sys.argv[1]))["profile"]
h = p["programs"][0]
print(p["config"]["call_graph"], h["self"][0]["function"],
      [c["function"] for x in h["callers_callees"] if x["function"] == "hot_loop" for c in x["callers"]][:1],
      any(r["function"] == "main" for r in h["inclusive"]))' "$T/d.json"
	assert_output "dwarf hot_loop ['run'] True"
}

@test "loss: a tiny ring at a high rate (--allow-loss): the loss is stated with numbers and the dominant cost is hedged" {
	run pmurec --mode full -F 20000 --sample-ring-kb 8 --allow-loss -o "$T/l.bundle" -- "$PMU_BUILD/hot" 300
	sampled "$T/l.bundle"
	lost=$($PY -c 'import json,sys
s = [json.loads(l) for l in open(sys.argv[1]) if "\"summary\"" in l][0]
print(s["lost_records"] + s["lost_samples"] + s["throttles"])' "$T/l.bundle/data/collectors/sampling/samples.jsonl")
	[ "$lost" -gt 0 ] || skip "the ring kept up at 20 kHz: no loss to report"
	pmuanalyze --json "$T/l.bundle" >"$T/l.json"
	run q "$T/l.json" 'p["accounting"]["lost_records"] + p["accounting"]["lost_samples"] + p["accounting"]["throttles"], "the shares may be skewed" in d["dominant_cost"]["profile"]["hedge"]'
	assert_output "($lost, True)"
	run pmuanalyze "$T/l.bundle"
	assert_line --regexp '^  accounted: [0-9]+ samples of the cohort, [0-9]+ unattributed .*, [0-9]+ lost \(ring full\), [0-9]+ lost samples, [0-9]+ throttles'
	assert_line --regexp '^dominant cost: .*within hot, .*\([0-9]+ records lost, [0-9]+ samples lost and [0-9]+ throttles in the recording: the shares may be skewed\)$'
}

@test "few samples: the dominant cost's share is said to be rough" {
	run pmurec --mode full -o "$T/few.bundle" -- "$PMU_BUILD/hot" 10
	sampled "$T/few.bundle"
	pmuanalyze --json "$T/few.bundle" >"$T/few.json"
	n=$(q "$T/few.json" 'h["samples"] if h else 0')
	[ "$n" -gt 0 ] || skip "no sample of program hot"
	[ "$n" -lt 50 ] || skip "hot 10 gave $n samples here, not fewer than 50"
	run q "$T/few.json" 'd["dominant_cost"]["profile"]["hedge"]'
	assert_output "only $n samples: a rough share"
	run pmuanalyze "$T/few.bundle"
	assert_line --regexp "^dominant cost: .*of its $n samples in .* \(only $n samples: a rough share\)$"
}

@test "repetitions: each repetition's samples aggregated (data/repeats/K/), its top function with an interval" {
	run pmurec --mode full --repeat 3 -o "$T/rep.bundle" -- "$PMU_BUILD/hot" 100 child
	sampled "$T/rep.bundle"
	[ -s "$T/rep.bundle/data/repeats/3/collectors/sampling/samples.jsonl" ] || skip "repetition 3 has no samples"
	pmuanalyze --json "$T/rep.bundle" >"$T/rep.json"
	n3=$(grep -c '^{"type":"sample"' "$T/rep.bundle/data/repeats/3/collectors/sampling/samples.jsonl")
	run q "$T/rep.json" '[(r["repetition"], r["samples"], r["programs"][0]["function"]) for r in p["repetitions"]][2]'
	assert_output "(3, $n3, 'hot_loop')"
	run schema_check "$T/rep.json"
	assert_output "schema errors: 0"
	run pmuanalyze "$T/rep.bundle"
	assert_line --regexp '^    3: hot hot_loop [0-9.]+% \[[0-9.]+% \.\. [0-9.]+%\] of [0-9]+$'
}

@test "unprivileged: user code profiled, and the kernel's absence said with its reason" {
	nobody_setup
	cp "$PMU_BUILD/hot" "$PMU_BUILD/libhot.so" "$W/"
	run as_nobody pmurec --mode full -o "$W/u.bundle" -- "$W/hot" 200
	sampled "$W/u.bundle"
	grep -q '"kernel":"excluded"' "$W/u.bundle/data/collectors/sampling/samples.jsonl" ||
		{ nobody_teardown; skip "kernel code was sampled without privileges (perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid))"; }
	run pmuanalyze "$W/u.bundle"
	nobody_teardown
	assert_success
	assert_line --regexp '^  kernel code not sampled: .+'
	assert_line --regexp '^      hot_loop +[0-9]+ '
	refute_output --partial '[kernel]'
}

@test "a sampled run too short for a sample: the section says so and what would help" {
	run pmurec --mode light -o "$T/t.bundle" -- true
	assert_success
	[ -s "$T/t.bundle/data/collectors/sampling/samples.jsonl" ] || skip "no samples stream (sampling unavailable here)"
	! grep -q '^{"type":"sample"' "$T/t.bundle/data/collectors/sampling/samples.jsonl" || skip "true took a sample"
	run pmuanalyze "$T/t.bundle"
	assert_success
	assert_line --regexp '^profile: empty: the samples stream holds no sample of the cohort; at 99 Hz a run with less than 10 ms of CPU time may take no sample: record with a higher pmurec -F, or a longer run$'
	refute_output --partial 'within true'
}

@test "fixture: mkfixture sampled: counts, intervals, unsymbolized frames with their reasons, a kernel function from ksym" {
	b=$(mk fx sampled)
	pmuanalyze --json "$b" >"$T/fx.json"
	run schema_check "$T/fx.json"
	assert_output "schema errors: 0"
	run q "$T/fx.json" 'p["accounting"]["samples"], p["accounting"]["unattributed"], h["samples"], h["processes_with_samples"]'
	assert_output "(21, 2, 21, 2)"
	# 17 of 21 samples innermost in hot, whose retained copy is unreadable
	run q "$T/fx.json" '[(r["function"], r["symbol"], r["status"], r["samples"], round(r["ci_low_percent"], 1), round(r["ci_high_percent"], 1)) for r in h["self"]][0]'
	assert_output "('[unknown] in hot', None, 'not-found', 17, 60.0, 92.3)"
	# libhot.so: not found, with why pmurec did not retain it
	run q "$T/fx.json" '[u["reason"] for u in p["unsymbolized"] if u["function"] == "[unknown] in libhot.so"][0].startswith("binary not found")'
	assert_output True
	# libc.so.6 at its recorded path has another build-id on any host that has one
	run q "$T/fx.json" '[u["reason"] for u in p["unsymbolized"] if u["function"] == "[unknown] in libc.so.6"][0]'
	if [ -e /usr/lib/x86_64-linux-gnu/libc.so.6 ]; then
		assert_output "stale binary (build-id mismatch)"
	else
		assert_output --regexp '^binary not found'
	fi
	# the kernel function named from the stream's ksym records
	run q "$T/fx.json" '[(r["function"], r["status"]) for r in h["self"] if r["status"] == "kernel"]'
	assert_output "[('clear_page_erms [kernel]', 'kernel')]"
	run pmuanalyze "$b"
	assert_success
	assert_line --regexp '^  not symbolized: 3 samples through \[unknown\] in libhot\.so \(3 innermost\): binary not found'
	refute_output --regexp 'hot_loop|lib_work|child_loop'
}

# many_addresses BUNDLE N: N more samples of incarnation i1, each at its
# own address, spread over the libc map (the stream edited: the bundle is then
# analyzed with --allow-invalid)
many_addresses() {
	$PY - "$1/data/collectors/sampling/samples.jsonl" "$2" <<'PYEOF'
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
maps = [json.loads(l) for l in open(path.replace("samples.jsonl", "maps.jsonl"))]
m = [x for x in maps if x.get("type") == "map" and x["inc"] == "i1" and "libc.so" in x["path"]][0]
start, step = int(m["start"], 16), (int(m["end"], 16) - int(m["start"], 16)) // n
lines = open(path).read().splitlines()
last = max(json.loads(l).get("t_ns", 0) for l in lines)
out = []
for l in lines:
    if json.loads(l)["type"] in ("ksym", "summary") and n:
        for i in range(n):
            a = "0x%x" % (start + step * i)
            out.append(json.dumps({"type": "sample", "t_ns": last, "inc": "i1", "pid": m["pid"], "tid": m["pid"],
                                   "cpu": 0, "ip": a, "kernel_ip": False, "period": 1, "chain": a, "kframes": 0,
                                   "chain_cut": False}, separators=(",", ":")))
        n = 0
    out.append(l)
open(path, "w").write("\n".join(out) + "\n")
PYEOF
}

@test "more distinct addresses than the first tables hold (6000 in libc): analyzed, and the names stay right" {
	sampled "$F/s.bundle"
	cp -a "$F/s.bundle" "$T/m.bundle"
	many_addresses "$T/m.bundle" 6000
	st=0
	timeout 120 pmuanalyze --allow-invalid --json "$T/m.bundle" >"$T/m.json" 2>"$T/m.err" || st=$?
	[ "$st" -ne 124 ] || fail "pmuanalyze did not finish in 120 s"
	pmuanalyze --json "$F/s.bundle" >"$T/s.json"
	hot=$(q "$T/s.json" '[(r["function"], r["samples"]) for r in h["self"] if r["function"] in ("hot_loop", "child_loop")]')
	run q "$T/m.json" 'p["distinct_addresses"] > 6000, [(r["function"], r["samples"]) for r in h["self"] if r["function"] in ("hot_loop", "child_loop")]'
	assert_output "(True, $hot)"
	run q "$T/m.json" 'sorted(set(r["function"] for r in h["inclusive"] if r["status"] == "ok") & {"hot_loop", "lib_work", "child_loop", "main"})'
	assert_output "['child_loop', 'hot_loop', 'lib_work', 'main']"
}

@test "a recorded path that names a FIFO (an untrusted maps stream): never opened to block, the frames not named" {
	sampled "$F/s.bundle"
	cp -a "$F/s.bundle" "$T/f.bundle"
	mkfifo "$T/fifo"
	sed -i "s|\"path\":\"[^\"]*/bin/hot\"|\"path\":\"$T/fifo\"|" "$T/f.bundle/data/collectors/sampling/maps.jsonl"
	grep -q fifo "$T/f.bundle/data/collectors/sampling/maps.jsonl" || fail "no map of hot to edit"
	st=0
	timeout 60 pmuanalyze --allow-invalid --json "$T/f.bundle" >"$T/f.json" 2>"$T/f.err" </dev/null || st=$?
	[ "$st" -ne 124 ] || fail "pmuanalyze blocked opening the FIFO"
	run q "$T/f.json" '[r["function"] for r in h["self"] if r["function"] in ("hot_loop", "child_loop")]'
	assert_output "[]"
}

@test "a non-PIE binary gone, its separate debug file on the host by build-id: still named (the debug file's segment offsets are not the binary's)" {
	command -v cc >/dev/null || skip "no C compiler (cc) to build a non-PIE binary"
	command -v objcopy >/dev/null || skip "no objcopy to split the debug file"
	mkdir -p "$T/np" "$T/dbg"
	cc -g -O2 -fno-omit-frame-pointer -no-pie -o "$T/np/hot" "$(hot_src)" -L"$PMU_BUILD" -lhot \
		-Wl,-rpath,"$PMU_BUILD" || skip "cc cannot link a non-PIE binary"
	bid=$(readelf -n "$T/np/hot" | awk '/Build ID/ { print $3 }')
	[ -n "$bid" ] || skip "the linker wrote no build-id"
	mkdir -p "$T/dbg/.build-id/${bid:0:2}"
	objcopy --only-keep-debug "$T/np/hot" "$T/dbg/.build-id/${bid:0:2}/${bid:2}.debug"
	pmurec --mode full -o "$T/np.bundle" -- "$T/np/hot" 300 >"$T/np.out" 2>&1 || true
	sampled "$T/np.bundle"
	rm "$T/np/hot"
	PMU_DEBUG_ROOT=$T/dbg pmuanalyze --json "$T/np.bundle" >"$T/np.json"
	run q "$T/np.json" '[(r["function"], r["status"]) for r in h["self"]][:1]'
	assert_output "[('hot_loop', 'ok')]"
}

@test "A/B: kernel functions carry the kernel's build-id and are never matched across two kernels by name alone" {
	sampled "$F/s.bundle"
	grep -q '"type":"kmap".*"build_id":"' "$F/s.bundle/data/collectors/sampling/maps.jsonl" ||
		skip "the recording has no kernel map with a build-id"
	pmuanalyze --json "$F/s.bundle" >"$T/k.json"
	kbid=$(grep -o '"type":"kmap".*' "$F/s.bundle/data/collectors/sampling/maps.jsonl" | grep -o '"build_id":"[0-9a-f]*' | cut -d'"' -f4)
	run q "$T/k.json" 'sorted(set(r.get("build_id") for r in h["self"] if r["status"] == "kernel" and r["symbol"]))'
	[ "$output" != "[]" ] || skip "no named kernel function sampled"
	assert_output "['$kbid']"
	# B: the same recording, said to run another kernel
	cp -a "$F/s.bundle" "$T/kb.bundle"
	sed -i "/\"type\":\"kmap\"/s/\"build_id\":\"$kbid\"/\"build_id\":\"00${kbid:2}\"/" \
		"$T/kb.bundle/data/collectors/sampling/maps.jsonl"
	pmuanalyze --allow-invalid --json "$F/s.bundle" "$T/kb.bundle" >"$T/kab.json" || true
	run $PY -c 'import json,sys
d = json.load(open(sys.argv[1]))["comparison"]["profile"]
h = [x for x in d["programs"] if x["program"] == "hot"][0]
k = [f for f in h["functions"] if f["function"].endswith(" [kernel]")]
u = [f for f in h["functions"] if f["function"] == "hot_loop"]
print(len(k) > 0, sorted(set(f["verdict_code"] for f in k)), u[0]["verdict_code"] == "no-significant-difference")' "$T/kab.json"
	assert_output "True ['only-a', 'only-b'] True"
}
