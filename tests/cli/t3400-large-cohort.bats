#!/usr/bin/env bats
# pmuanalyze on large cohorts: memory bounded whatever the cohort's size, the
# process listing bounded (--max-processes) and never silent about what it
# leaves out, every total over all incarnations.  The bundles are generated
# by t3400-gencohort.py (independent of pmu's writers) from a mkfixture
# bundle, in the cohort form of the spec mkfixture writes.

load helpers

GEN=$BATS_TEST_DIRNAME/t3400-gencohort.py

# big N: a bundle of N incarnations at $BATS_TEST_TMPDIR/big
big() {
	mkfixture minimal "$BATS_TEST_TMPDIR/big" >/dev/null
	$PY "$GEN" "$BATS_TEST_TMPDIR/big" "$1"
}

# expect REPORT.json: from the bundle's own cohort (read here, not by pmu),
# the sums of the resource totals over every incarnation, the omitted
# count and the omitted CPU time, each compared with the report's
expect() {
	$PY - "$BATS_TEST_TMPDIR/big" "$1" <<'EOF'
import json, os, sys
data = os.path.join(sys.argv[1], "data")
incs = {}
if os.path.exists(os.path.join(data, "cohort.jsonl")):
    for line in open(os.path.join(data, "cohort.jsonl")):
        r = json.loads(line)
        if r["type"] == "incarnation":
            incs[r["id"]] = {"resources": {}}
        elif r["type"] == "resource" and r["status"] == "ok":
            incs[r["inc"]]["resources"][r["field"]] = r[r["field"]]
else:
    incs = {i["id"]: i for i in json.load(open(os.path.join(data, "cohort.json")))["incarnations"]}
rep = json.load(open(sys.argv[2]))
m = rep["repetitions"]["runs"][0]["metrics"]
ok = True
for key, name in [("cpu_user_ns", "cpu_user"), ("cpu_system_ns", "cpu_system"), ("minor_faults", "minor_faults"),
                  ("read_bytes", "read_bytes"), ("write_bytes", "write_bytes")]:
    want = sum(i["resources"][key] for i in incs.values())
    if m[name]["value"] != want:
        print("total", name, m[name]["value"], "!=", want); ok = False
want = max(i["resources"]["max_rss_bytes"] for i in incs.values())
if m["max_rss"]["value"] != want:
    print("max_rss", m["max_rss"]["value"], "!=", want); ok = False
l = rep["cohort_listing"]
listed = {c["id"] for c in rep["cohort"]}
cpu = sum(i["resources"]["cpu_user_ns"] + i["resources"]["cpu_system_ns"] for k, i in incs.items() if k not in listed)
if (l["incarnations"], l["listed"], l["omitted"]) != (len(incs), len(listed), len(incs) - len(listed)):
    print("listing", l, len(incs), len(listed)); ok = False
if l["omitted"] and (l["omitted_cpu"]["value_ns"], l["omitted_cpu"]["measured"]) != (cpu, l["omitted"]):
    print("omitted cpu", l["omitted_cpu"], cpu); ok = False
print("expectations", "hold" if ok else "FAIL", len(incs), len(listed))
EOF
}

@test "a 100,000-incarnation bundle: text and --json in under 64 MiB, the omitted count exact, totals over all" {
	big 100000
	[ -e "$BATS_TEST_TMPDIR/big/data/cohort.jsonl" ] ||
		skip "mkfixture writes spec 1.2 or older: a cohort.json of 100,000 incarnations is over the document limit"
	run pmuvalidate -q "$BATS_TEST_TMPDIR/big"
	assert_success
	run /usr/bin/time -f %M -o "$BATS_TEST_TMPDIR/rss" pmuanalyze "$BATS_TEST_TMPDIR/big"
	assert_success
	assert_line "process tree (100000 incarnations)"
	assert_line --regexp '^  99,800 more processes, [0-9.]+ s CPU, not listed; --max-processes N lists more$'
	echo "text: $(cat "$BATS_TEST_TMPDIR/rss") KiB"
	rss_under "$(cat "$BATS_TEST_TMPDIR/rss")"
	/usr/bin/time -f %M -o "$BATS_TEST_TMPDIR/rss" pmuanalyze --json "$BATS_TEST_TMPDIR/big" >"$BATS_TEST_TMPDIR/r.json"
	echo "json: $(cat "$BATS_TEST_TMPDIR/rss") KiB"
	rss_under "$(cat "$BATS_TEST_TMPDIR/rss")"
	run expect "$BATS_TEST_TMPDIR/r.json"
	assert_output "expectations hold 100000 200"
}

@test "the Chrome trace of a 100,000-incarnation bundle has every incarnation, in under 64 MiB" {
	big 100000
	[ -e "$BATS_TEST_TMPDIR/big/data/cohort.jsonl" ] ||
		skip "mkfixture writes spec 1.2 or older: a cohort.json of 100,000 incarnations is over the document limit"
	run pmuvalidate -q "$BATS_TEST_TMPDIR/big"
	assert_success
	run /usr/bin/time -f %M -o "$BATS_TEST_TMPDIR/rss" pmuanalyze --trace "$BATS_TEST_TMPDIR/t.json" "$BATS_TEST_TMPDIR/big"
	assert_success
	echo "trace: $(cat "$BATS_TEST_TMPDIR/rss") KiB"
	rss_under "$(cat "$BATS_TEST_TMPDIR/rss")"
	run $PY -c 'import json,sys
t = json.load(open(sys.argv[1]))
print(sum(e["name"] == "process_name" for e in t["traceEvents"]), sum(e.get("cat") == "process" for e in t["traceEvents"]),
      t["otherData"]["incarnations"])' "$BATS_TEST_TMPDIR/t.json"
	assert_output "100000 100000 100000"
}

@test "--max-processes lists the root, then by CPU time with the ancestors, and counts the rest exactly" {
	big 120
	run pmuanalyze --max-processes 7 --json "$BATS_TEST_TMPDIR/big"
	assert_success
	echo "$output" >"$BATS_TEST_TMPDIR/r.json"
	run expect "$BATS_TEST_TMPDIR/r.json"
	assert_output "expectations hold 120 7"
	# the expected listing, computed here from the generator's rule: the
	# root i1, then the incarnations by cpu (ties in cohort order), each
	# with the ancestors that are not listed yet, while they fit
	run $PY - "$BATS_TEST_TMPDIR/r.json" "$GEN" <<'EOF'
import json, sys, importlib.util
spec = importlib.util.spec_from_file_location("gen", sys.argv[2]); gen = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gen)
parent = {"i%d" % k: "i%d" % ((k - 2) // 10 + 1) for k in range(2, 121)}
cpu = {"i%d" % k: gen.resources(k)["cpu_user_ns"] + gen.resources(k)["cpu_system_ns"] for k in range(1, 121)}
listed = ["i1"]
for k in sorted(range(2, 121), key=lambda k: (-cpu["i%d" % k], k)):
    chain, j = [], "i%d" % k
    while j not in listed and j is not None:
        chain.append(j); j = parent.get(j)
    if len(listed) + len(chain) <= 7:
        listed += chain
rep = json.load(open(sys.argv[1]))
got = [c["id"] for c in rep["cohort"]]
print(sorted(got) == sorted(listed), rep["cohort_listing"]["omitted"])
# the tree keeps its shape: every listed parent is listed, depth = its parent's + 1
ids = [rep["cohort"][t["index"]]["id"] for t in rep["tree"]]
depth = {rep["cohort"][t["index"]]["id"]: t["depth"] for t in rep["tree"]}
print(len(ids) == len(got), all(depth[i] == depth[parent[i]] + 1 for i in got if i != "i1"), ids[0])
EOF
	assert_line "True 113"
	assert_line "True True i1"
}

@test "the listing's omissions are in every output: text, CSV and HTML" {
	big 30
	run pmuanalyze --max-processes 5 "$BATS_TEST_TMPDIR/big"
	assert_success
	assert_line "process tree (30 incarnations)"
	assert_line --regexp '^  25 more processes, [0-9.]+ ms CPU, not listed; --max-processes N lists more$'
	[ "$(grep -c ' pid [0-9]* ' <<<"$output")" -eq 5 ]
	run pmuanalyze --max-processes 5 --csv --html "$BATS_TEST_TMPDIR/r.html" "$BATS_TEST_TMPDIR/big"
	assert_success
	assert_line --regexp '^listing,30,5,25,5,[0-9]+,25$'
	[ "$(grep -c '^processes,' <<<"$output")" -eq 5 ]
	run grep -o '<p class="omitted"><strong>25 more processes, [0-9.]* ms CPU, not listed; --max-processes N lists more</strong></p>' "$BATS_TEST_TMPDIR/r.html"
	assert_success
	# everything listed: no statement
	run pmuanalyze --max-processes 30 "$BATS_TEST_TMPDIR/big"
	assert_success
	refute_output --partial "more process"
}

@test "--max-processes needs a number from 1" {
	b=$(mk b minimal)
	for v in 0 -3 x 1e3 ''; do
		run pmuanalyze --max-processes "$v" "$b"
		assert_failure 2
		assert_output --partial "--max-processes needs a number from 1"
	done
}

@test "with one process listed, the dominant cost and every metric still cover all incarnations" {
	b=$(mk b multiproc)
	pmuanalyze --json "$b" >"$BATS_TEST_TMPDIR/all.json"
	run pmuanalyze --max-processes 1 --json "$b"
	assert_success
	echo "$output" >"$BATS_TEST_TMPDIR/one.json"
	run $PY - "$BATS_TEST_TMPDIR/all.json" "$BATS_TEST_TMPDIR/one.json" <<'EOF2'
import json, sys
a, o = (json.load(open(p)) for p in sys.argv[1:3])
print([c["id"] for c in o["cohort"]], sorted(o["counting"]["totals"]), o["cohort_listing"]["omitted"])
print(o["dominant_cost"] == a["dominant_cost"], o["dominant_cost"]["inc"],
      o["repetitions"] == a["repetitions"], o["counting"]["cohort"] == a["counting"]["cohort"])
EOF2
	assert_line "['i1'] ['i1'] 2"
	assert_line "True i2 True True"
	run pmuanalyze --max-processes 1 "$b"
	# 8.3 ms on a CPU in 190 ms: the off-CPU time leads, then the CPU's largest share
	assert_line --regexp "^dominant cost: 96% of wall time \(at least 181.699 ms of 189.999 ms\) no cohort process was on a CPU .*; on CPU \(4% of wall\): process 'ls' \(pid 5001, incarnation i2\) spent 63% of the cohort's CPU \(task-clock 5.200 of 8.300 ms, exact counts\)$"
	# task-clock first where it was counted (/proc CPU times are 10 ms ticks)
	assert_line "  2 more processes, 5.900 ms counted task-clock (/proc: 5.000 ms CPU in the 1 with a measured CPU time), not listed; --max-processes N lists more"
}

@test "the dominant process is listed even when others use more CPU time" {
	b=$(mk b multiproc)
	# i3 gets 50 ms of user time (more than i2's 5 ms); i2 keeps the most task-clock
	$PY - "$b/data/cohort.jsonl" <<'EOF2'
import json, sys
out = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["type"] == "end" and r["inc"] == "i3":
        for f in ["cpu_user_ns", "cpu_system_ns", "max_rss_bytes", "minor_faults", "major_faults",
                  "voluntary_switches", "involuntary_switches", "read_bytes", "write_bytes"]:
            out.append(json.dumps({"type": "resource", "inc": "i3", "field": f, "status": "ok",
                                   "source": "/proc/PID at exit", f: 50000000 if f == "cpu_user_ns" else 1},
                                  separators=(",", ":")))
    out.append(line.rstrip("\n"))
open(sys.argv[1], "w").write("\n".join(out) + "\n")
EOF2
	rebag "$b"
	run pmuvalidate -q "$b"
	assert_success
	run pmuanalyze --max-processes 2 --json "$b"
	assert_success
	run $PY -c 'import json,sys; d=json.load(sys.stdin); print([c["id"] for c in d["cohort"]], d["dominant_cost"]["inc"])' <<<"$output"
	assert_output "['i1', 'i2'] i2"
	run pmuanalyze --max-processes 2 "$b"
	assert_line "  1 more process, 0.700 ms counted task-clock (/proc: 50.000 ms CPU), not listed; --max-processes N lists more"
}

@test "1,500 marks and 300 span names: 1,000 marks and 256 names listed, the rest counted and summed" {
	b=$(mk b multiproc)
	$PY - "$b/data/spans.jsonl" <<'EOF2'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
d = lambda o: json.dumps(o, separators=(",", ":"))
for k in range(1500):
    lines.append(d({"type": "mark", "t_ns": 1150000000 + k, "inc": "i1", "tid": 5000, "name": "m%d" % k}))
for k in range(300):
    lines.append(d({"type": "span", "id": "x%d" % k, "inc": "i1", "tid": 5000, "name": "n%03d" % k,
                    "begin_ns": 1160000000 + 10 * k, "end_ns": 1160000000 + 10 * k + 7}))
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
EOF2
	rebag "$b"
	run pmuvalidate -q "$b"
	assert_success
	run pmuanalyze --json "$b"
	assert_success
	run $PY -c 'import json,sys
d = json.load(sys.stdin); m = d["repetitions"]["runs"][0]["metrics"]
names = [k for k in m if k.startswith("span.")]
print(len(d["phases"]["marks"]), d["phases"]["marks_omitted"], len(names), m["span.(other names)"]["value"])
print(sum(m[k]["value"] for k in names if k.startswith("span.n")) + m["span.(other names)"]["value"] == 300 * 7)' <<<"$output"
	# 256 names: the fixture's three and 253 of the new; 47 new ones summed (7 ns each)
	assert_line "1000 501 257 329.0"
	assert_line "True"
}

@test "at the spec's limits (262,144 incarnations, 1,048,576 threads) pmuanalyze stays under 64 MiB" {
	mkfixture cohort "$BATS_TEST_TMPDIR/lim" --incarnations 262144 --threads 4 >/dev/null
	run /usr/bin/time -f %M -o "$BATS_TEST_TMPDIR/rss" pmuanalyze "$BATS_TEST_TMPDIR/lim"
	assert_success
	assert_line "process tree (262144 incarnations)"
	assert_line --regexp '^  261,944 more processes, '
	echo "limits: $(cat "$BATS_TEST_TMPDIR/rss") KiB"
	rss_under "$(cat "$BATS_TEST_TMPDIR/rss")"
}
