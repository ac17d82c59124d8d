#!/usr/bin/env bats
# pmuanalyze A B: comparability, statistics from repetitions, observer
# overhead, CI gates, and the report's formats, on bundles recorded live.

load helpers

setup() {
	T=$BATS_TEST_TMPDIR
	# a workload whose size is a file: a slower variant is the same command
	printf 'i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done\n' >"$T/work.sh"
}

slow_down() {
	printf 'i=0; while [ $i -lt 90000 ]; do i=$((i+1)); done\n' >"$T/work.sh"
}


@test "an --ab campaign: the observer overhead with a confidence interval, in run order" {
	needs_backend linux
	run pmurec --ab none,light --repeat 10 -o "$T/ab" -- sh "$T/work.sh"
	assert_success
	run pmuanalyze "$T/ab/none.bundle" "$T/ab/light.bundle"
	assert_success
	assert_line --regexp '^observer overhead of mode light \(campaign [0-9a-f]{32}; run order: none#1 light#1 none#2 light#2 '
	assert_line --regexp '^  wall +[-+][0-9.]+% \(95% CI [-+][0-9.]+% \.\. [-+][0-9.]+%\)$'
	# the sentence follows where the interval lies against 5%, never the point
	assert_line --regexp '^  (mode light adds below 5% wall time with 95% confidence \(95% CI .*\), so its timings may be read as the program.s own|mode light adds at least [0-9.]+% wall time \(95% CI .*\): more than 5%, so read its timings as relative, not as the program.s own|mode light adds an overhead to wall time that this interval cannot bound \(95% CI .*\): it cannot rule out more than 5%, so read its timings as relative, or record more repetitions)$'
	run pmuanalyze --json "$T/ab/none.bundle" "$T/ab/light.bundle"
	assert_success
	echo "$output" >"$T/r.json"
	run $PY -c 'import json,sys
o = json.load(open(sys.argv[1]))["comparison"]["overhead"]
names = [m["name"] for m in o["metrics"]]
print(o["applicable"], o["a_mode"], o["b_mode"], [x["position"] for x in o["order"]] == list(range(20)),
      names[:1], "command.cpu" in names, "cpu" in names)' "$T/r.json"
	# CPU from the same source in both modes (the command'"'"'s wait4 totals);
	# the per-process sums of mode light are not set against wait4
	assert_output "True none light True ['wall'] True False"
}

@test "two recordings of the same command: no significant or no practical difference in wall time and task-clock" {
	needs_backend linux
	# An A/A campaign: the two bundles are recorded interleaved, so that a
	# drift of the machine (this VM's CPU time moves by 20% between
	# minutes) reaches both alike.  At 95% a true "no difference" is still
	# called significant now and then: a second, independent campaign is
	# run before failing (both flagged by chance: well under 1%).
	for try in 1 2; do
		rm -rf "$T/aa"
		run pmurec --ab light,light --repeat 10 -o "$T/aa" -- sh "$T/work.sh"
		assert_success
		run pmuanalyze "$T/aa/light.bundle" "$T/aa/light-2.bundle"
		assert_success
		assert_line --regexp '^comparability: comparable$'
		refute_line --partial 'WARNING: fewer than 9 repetitions'
		if grep -qE '^wall .* (no significant difference \(cannot rule out [-+][0-9.]+% \.\. [-+][0-9.]+%\)|no practical difference \(.*\))$' <<<"$output" &&
			grep -qE '^task-clock .* (no significant difference \(cannot rule out [-+][0-9.]+% \.\. [-+][0-9.]+%\)|no practical difference \(.*\))$' <<<"$output"; then
			break
		fi
		echo "# campaign $try flagged a difference by chance:" >&3
		grep -E '^(wall|task-clock) ' <<<"$output" | sed 's/^/#   /' >&3
	done
	assert_line --regexp '^wall .* (no significant difference \(cannot rule out [-+][0-9.]+% \.\. [-+][0-9.]+%\)|no practical difference \(.*\))$'
	assert_line --regexp '^task-clock .* (no significant difference \(cannot rule out [-+][0-9.]+% \.\. [-+][0-9.]+%\)|no practical difference \(.*\))$'
}

@test "a deliberately slowed variant is flagged, and --fail-if wall.median:+5% exits 3 naming the interval" {
	needs_backend linux
	pmurec --repeat 9 -o "$T/a.bundle" -- sh "$T/work.sh"
	slow_down
	pmurec --repeat 9 -o "$T/b.bundle" -- sh "$T/work.sh"
	run pmuanalyze --fail-if wall.median:+5% --fail-if task-clock:+5% --junit "$T/j.xml" "$T/a.bundle" "$T/b.bundle"
	assert_failure 3
	assert_line --regexp '^wall .* higher in B( by at least [0-9.]+%|, significant, but may be below the 2% minimum effect)$'
	assert_line --regexp '^pmuanalyze: regression: wall: \+[0-9.]+% \(95% CI \+[0-9.]+% \.\. \+[0-9.]+%, p [0-9.]+\) against a threshold of \+5\.00%: crossed$'
	assert_line --regexp '^  fail +wall.median:\+5%: '
	run $PY -c 'import sys, xml.etree.ElementTree as E
t = E.parse(sys.argv[1]).getroot().find("testsuite")
print(t.get("tests"), t.get("failures"), [c.get("name") for c in t.iter("testcase")],
      [c.find("failure") is not None for c in t.iter("testcase")])' "$T/j.xml"
	assert_output "3 2 ['comparability', 'wall.median:+5%', 'task-clock:+5%'] [False, True, True]"
	# the other way round, the threshold is not crossed: a speed-up passes
	run pmuanalyze --fail-if wall.median:+5% "$T/b.bundle" "$T/a.bundle"
	assert_success
	assert_line --regexp '^wall .* lower in B( by at least [0-9.]+%|, significant, but may be below the 2% minimum effect)$'
}

@test "bundles of different commands are not comparable: exit 4, or a warning everywhere with --force" {
	needs_backend linux
	pmurec -o "$T/a.bundle" -- sh "$T/work.sh"
	pmurec -o "$T/b.bundle" -- sh -c 'true'
	run pmuanalyze "$T/a.bundle" "$T/b.bundle"
	assert_failure 4
	assert_output --partial "are not comparable (--force to compare anyway)"
	assert_output --partial "command (argv): A"
	run pmuanalyze --force "$T/a.bundle" "$T/b.bundle"
	assert_success
	assert_line --partial "WARNING: FORCED COMPARISON"
	assert_line "comparability: NOT comparable (compared anyway: --force)"
	run pmuanalyze --force --json "$T/a.bundle" "$T/b.bundle"
	assert_success
	echo "$output" >"$T/r.json"
	run $PY -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(d["forced"], d["comparison"]["comparable"], any(w.startswith("FORCED COMPARISON") for w in d["warnings"]))' "$T/r.json"
	assert_output "True False True"
	run pmuanalyze --force --csv "$T/a.bundle" "$T/b.bundle"
	assert_success
	assert_line --index 0 --partial "table,metric,unit,n_a,n_b"
}

@test "one repetition a side: no interval, the verdict is undetermined, and a gate cannot be judged (exit 2)" {
	needs_backend linux
	pmurec -o "$T/a.bundle" -- sh "$T/work.sh"
	pmurec -o "$T/b.bundle" -- sh "$T/work.sh"
	run pmuanalyze "$T/a.bundle" "$T/b.bundle"
	assert_success
	assert_line --partial "WARNING: fewer than 9 repetitions per side (A 1, B 1): the statistics are weak"
	assert_line --regexp '^wall .* too few repetitions to tell \(A 1, B 1: the rank test cannot reach p < 0\.05 below 4 on each side, or 3 against 5\)$'
	run pmuanalyze --fail-if wall:+5% "$T/a.bundle" "$T/b.bundle"
	assert_failure 2
	assert_output --partial "metric 'wall' cannot be judged: too few repetitions to tell"
	run pmuanalyze --fail-if syscalls.write.count:+10% "$T/a.bundle" "$T/b.bundle"
	assert_failure 2
	assert_output --partial "metric 'syscalls.write.count' is not in these bundles"
}

@test "--fail-if expressions are checked before anything is read" {
	for e in wall wall:5% wall:+x% :+5% wall:+0%; do
		run pmuanalyze --fail-if "$e" /nonexistent /nonexistent
		assert_failure 2
		assert_output --partial "--fail-if"
	done
	run pmuanalyze --fail-if wall:+5% "$BATS_TEST_TMPDIR"
	assert_failure 2
	assert_output --partial "compare two bundles"
}

@test "the --json report conforms to its schema, one bundle and two; a broken copy does not" {
	needs_backend linux
	pmurec --repeat 3 -o "$T/a.bundle" -- sh "$T/work.sh"
	pmurec --repeat 3 -o "$T/b.bundle" -- sh "$T/work.sh"
	pmuanalyze --json "$T/a.bundle" >"$T/s.json"
	run schema_check "$T/s.json"
	assert_output "schema errors: 0"
	pmuanalyze --json --fail-if wall:+50% "$T/a.bundle" "$T/b.bundle" >"$T/c.json" || true
	run schema_check "$T/c.json"
	assert_output "schema errors: 0"
	# negative control: an ok metric without its value must be refused
	$PY -c 'import json,sys
d = json.load(open(sys.argv[1]))
m = d["repetitions"]["runs"][0]["metrics"]["wall"]; del m["value"]
json.dump(d, open(sys.argv[2], "w"))' "$T/s.json" "$T/bad.json"
	run schema_check "$T/bad.json"
	refute_output "schema errors: 0"
}

@test "one bundle with repetitions: medians, spread and outliers per metric" {
	needs_backend linux
	pmurec --repeat 5 -o "$T/a.bundle" -- sh "$T/work.sh"
	run pmuanalyze "$T/a.bundle"
	assert_success
	assert_line "repeats  5"
	assert_line --regexp '^metrics across 5 repetitions'
	assert_line --regexp '^  wall +[0-9.]+ ms \[[0-9.]+ ms \.\. [0-9.]+ ms\], IQR [0-9.]+ ms \.\. [0-9.]+ ms, n 5'
	assert_line --regexp '^  cycles +n/a: '
	assert_line --regexp "^dominant cost: .*process 'sh' .*; across 5 repetitions its share ranges"
	run pmuanalyze --csv "$T/a.bundle"
	assert_success
	assert_line --regexp '^metrics,wall,ns,5,'
	assert_line --regexp '^processes,i1,[0-9]+,sh,,'
}

@test "three repetitions a side can never be significant: a 10x slower B is not passed, the gate cannot be judged" {
	needs_backend linux
	echo 0.01 >"$T/dur"
	pmurec --repeat 3 -o "$T/a.bundle" -- sh -c "sleep \$(cat $T/dur)"
	echo 0.2 >"$T/dur"
	pmurec --repeat 3 -o "$T/b.bundle" -- sh -c "sleep \$(cat $T/dur)"
	run pmuanalyze --fail-if wall:+5% "$T/a.bundle" "$T/b.bundle"
	assert_failure 2
	assert_output --partial "metric 'wall' cannot be judged: too few repetitions to tell (A 3, B 3"
	# four a side can be told apart
	echo 0.01 >"$T/dur"
	pmurec --repeat 4 -o "$T/c.bundle" -- sh -c "sleep \$(cat $T/dur)"
	echo 0.2 >"$T/dur"
	pmurec --repeat 4 -o "$T/d.bundle" -- sh -c "sleep \$(cat $T/dur)"
	run pmuanalyze --fail-if wall:+5% "$T/c.bundle" "$T/d.bundle"
	assert_failure 3
	assert_line --regexp '^wall .* higher in B( by at least [0-9.]+%|, significant, but may be below the 2% minimum effect)$'
}

@test "span metrics are compared and gated by name" {
	needs_backend linux
	for b in a b; do
		pmurec --repeat 4 -o "$T/$b.bundle" -- env ASAN_OPTIONS=detect_leaks=0 "$PMU_BUILD/test-marker"
	done
	run pmuanalyze "$T/a.bundle"
	assert_success
	assert_line --regexp '^  span\.[a-z]+ +[0-9.]+ ms '
	span=$(grep -o 'span\.[a-z]*' <<<"$output" | head -1)
	run pmuanalyze --fail-if "$span:+1000%" "$T/a.bundle" "$T/b.bundle"
	assert_success
	assert_line --regexp "^  pass +$span:\+1000%: "
}

@test "timing settings are part of comparability: another SMT state is refused" {
	needs_backend linux
	pmurec -o "$T/a.bundle" -- true
	cp -r "$T/a.bundle" "$T/b.bundle"
	$PY - "$T/b.bundle/data/provenance.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["settings"]:
    if s["name"] == "clocksource":
        s["status"] = "ok"; s["value"] = "hpet-bench"; s.pop("reason", None); s.pop("remedy", None)
json.dump(d, open(sys.argv[1], "w"), indent=2)
PYEOF
	rebag "$T/b.bundle"
	for name in smt-active cpufreq-governor; do
		cp -r "$T/a.bundle" "$T/c.bundle"
		$PY - "$T/c.bundle/data/provenance.json" "$name" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["settings"] = [s for s in d["settings"] if s["name"] != sys.argv[2]]
d["settings"].append({"name": sys.argv[2], "status": "ok", "value": "changed-for-the-test"})
json.dump(d, open(sys.argv[1], "w"), indent=2)
PYEOF
		rebag "$T/c.bundle"
		run pmuvalidate -q "$T/c.bundle"
		assert_success
		run pmuanalyze "$T/a.bundle" "$T/c.bundle"
		assert_failure 4
		assert_output --partial "setting $name: A"
		rm -rf "$T/c.bundle"
	done
	run pmuanalyze "$T/a.bundle" "$T/b.bundle"
	assert_failure 4
	assert_output --partial "setting clocksource: A"
}

@test "odd input never gives a silent success: a non-UTF-8 gate, a bundle path that is not UTF-8" {
	needs_backend linux
	pmurec --repeat 4 -o "$T/a.bundle" -- true
	run pmuanalyze --fail-if $'wall\xff:+5%' "$T/a.bundle" "$T/a.bundle"
	assert_failure 2
	assert_output --partial "not UTF-8"
	cp -r "$T/a.bundle" "$T/x"$'\xff'".bundle"
	run pmuanalyze --json "$T/x"$'\xff'".bundle"
	assert_success
	echo "$output" >"$T/r.json"
	run $PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["bundle"].endswith("x\ufffd.bundle"))' "$T/r.json"
	assert_output True
}

@test "--junit is written whole or not at all; CSV and JSON carry every digit" {
	needs_backend linux
	pmurec --repeat 4 -o "$T/a.bundle" -- true
	echo PRECIOUS >"$T/j.xml"
	run pmuanalyze --junit /nonexistent/dir/j.xml --fail-if wall:+50% "$T/a.bundle" "$T/a.bundle"
	assert_failure 2
	run pmuanalyze --junit "$T/j.xml" --fail-if wall:+50% "$T/a.bundle" "$T/a.bundle"
	assert_success
	run grep -c '<testcase' "$T/j.xml"
	assert_output 2
	[ -z "$(ls "$T" | grep pmuanalyze)" ]
	pmuanalyze --json "$T/a.bundle" >"$T/r.json"
	pmuanalyze --csv "$T/a.bundle" >"$T/r.csv"
	run $PY - "$T/r.json" "$T/r.csv" <<'PYEOF'
import csv, json, sys
j = {m["name"]: m for m in json.load(open(sys.argv[1]))["repetitions"]["summary"]}
rows = [r for r in csv.reader(open(sys.argv[2])) if r and r[0] == "metrics"]
bad = [r[1] for r in rows if j[r[1]]["status"] == "ok" and float(r[4]) != j[r[1]]["median"]]
print(len(rows) > 3, bad)
PYEOF
	assert_output "True []"
}
