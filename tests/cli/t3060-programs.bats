#!/usr/bin/env bats
# pmuanalyze: the cohort by program (the last exec's image, and argv[0]
# where it differs) over every incarnation, exec chains and argv in the tree.

load helpers

setup() {
	T=$BATS_TEST_TMPDIR
}

# q FILE EXPR: print a Python expression over the --json report d
q() {
	$PY -c 'import json,sys
d = json.load(open(sys.argv[1]))
p = d["programs"]; c = d["dominant_cost"]
print(eval("(" + sys.argv[2] + "\n)"))' "$1" "$2"
}

@test "make -j2 of 20 C files: cc1 is a program with its 20 processes, and the dominant cost says which level it names" {
	needs_backend linux
	command -v make >/dev/null && command -v cc >/dev/null || skip "make and cc are needed"
	cc -v 2>&1 | grep -q 'gcc version' || skip "cc is not gcc (no cc1 processes)"
	P=$T/proj
	mkdir -p "$P"
	for i in $(seq 1 20); do printf 'int f%d(int x) { return x * %d; }\n' "$i" "$i" >"$P/f$i.c"; done
	printf 'OBJS = $(patsubst %%.c,%%.o,$(wildcard f*.c))\nall: $(OBJS)\n' >"$P/Makefile"
	run pmurec -o "$T/m.bundle" -- make -C "$P" -j2
	assert_success
	pmuanalyze --json "$T/m.bundle" >"$T/m.json"
	run q "$T/m.json" '[(r["program"], r["processes"]) for r in p["rows"] if r["program"] == "cc1"]'
	assert_output "[('cc1', 20)]"
	# every incarnation is in exactly one program
	run q "$T/m.json" 'sum(r["processes"] for r in p["rows"]) + p["omitted_processes"] == d["cohort_listing"]["incarnations"]'
	assert_output True
	# cc1 has most of the CPU: the statement names the program, at its level
	# (or leads with the off-CPU time of a busy host and names it on CPU)
	run q "$T/m.json" 'c["level"] in ("program", "off-cpu"), "program \x27cc1\x27 (20 processes) spent" in c["statement"]'
	assert_output "(True, True)"
	run pmuanalyze "$T/m.bundle"
	assert_line --regexp '^programs \([0-9]+; by (counted task-clock|CPU time at exit); the largest 10\)$'
	assert_line --regexp '^  cc1 +20 processes  ~?[0-9.]+ m?s, [0-9]+% of the cohort.s$'
}

@test "a program of several processes beats its largest process only when its share is larger" {
	b=$(mk b multiproc)
	pmuanalyze --json "$b" >"$T/f.json"
	# three programs of one process each: the process is named
	run q "$T/f.json" 'sorted((r["program"], r["processes"]) for r in p["rows"]), p["metric"], "program" in c'
	assert_output "([('ls', 1), ('sh', 1), ('sleep', 1)], 'task-clock', False)"
}

@test "a process that never exec'd counts for its parent's program" {
	needs_backend linux
	# the subshell forks and never execs; sleep is its child
	run pmurec -o "$T/s.bundle" -- sh -c '(sleep 0.01 && :); :'
	assert_success
	pmuanalyze --json "$T/s.bundle" >"$T/s.json"
	run q "$T/s.json" 'sorted((r["program"], r["processes"], r["image"] is None) for r in p["rows"])'
	assert_output --regexp "^\[\('(dash|bash|sh)', 2, False\), \('sleep', 1, False\)\]$"
}

@test "an exec chain is shown in the tree: sh → env → sleep" {
	needs_backend linux
	run pmurec -o "$T/e.bundle" -- sh -c 'exec env sleep 0.01'
	assert_success
	run pmuanalyze "$T/e.bundle"
	assert_success
	assert_line --regexp "^  i1 pid [0-9]+ sleep \(/usr/bin/sleep; exec chain [a-z]+ → env → sleep\), "
	pmuanalyze --json "$T/e.bundle" >"$T/e.json"
	run q "$T/e.json" 'd["cohort"][0]["exec_chain"].split(" → ")[1:]'
	assert_output "['env', 'sleep']"
}

@test "each process's argv, from its last exec, when the bundle has it (spec 1.4)" {
	needs_backend linux
	run pmurec -o "$T/a.bundle" -- sh -c 'ls -d / /tmp >/dev/null'
	assert_success
	grep -q '"argv":' "$T/a.bundle/data/cohort.jsonl" ||
		skip "this recorder writes no argv per exec (spec $(sed -n 's/^PMU-Spec-Version: //p' "$T/a.bundle/bag-info.txt"))"
	run pmuanalyze "$T/a.bundle"
	assert_line --regexp '^ +argv ls -d / /tmp$'
}

@test "argv in the tree: bounded width, the cut marked, quoted where a shell would need it" {
	b=$(mk b multiproc)
	# give i2's exec an argv of 62 arguments (within the spec's 64) and one
	# with a space
	$PY - "$b/data/cohort.jsonl" <<'EOF'
import json, sys
out = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("type") == "exec" and r.get("inc") == "i2":
        r["argv"] = ["ls", "a b"] + ["arg%d" % i for i in range(60)]
    out.append(json.dumps(r, separators=(",", ":")))
open(sys.argv[1], "w").write("\n".join(out) + "\n")
EOF
	rebag "$b"
	run pmuvalidate -q "$b"
	assert_success
	run pmuanalyze "$b"
	assert_line --regexp "^         argv ls 'a b' arg0 arg1 .* \.\.\. \([0-9]+ of 62 arguments shown\)$"
}

@test "6,000 distinct programs: 4,096 indexed, 100 listed, every process counted once, in bounded memory" {
	mkfixture minimal "$T/big" >/dev/null
	[ -e "$T/big/data/cohort.jsonl" ] || skip "mkfixture writes spec 1.2 or older"
	$PY "$BATS_TEST_DIRNAME/t3400-gencohort.py" "$T/big" 20000 programs=6000
	/usr/bin/time -f %M -o "$T/rss" pmuanalyze --json "$T/big" >"$T/p.json"
	run q "$T/p.json" 'p["count"], len(p["rows"]), p["omitted"], p["unindexed_processes"] > 0,
sum(r["processes"] for r in p["rows"]) + p["omitted_processes"] == d["cohort_listing"]["incarnations"],
abs(sum(r["value_ns"] for r in p["rows"]) + p["omitted_value_ns"] - p["total_ns"]) <= len(p["rows"]) + 1'
	# the root's program and 4,095 of the generated ones; the rest unindexed
	assert_output "(4096, 100, 3996, True, True, True)"
	rss_under "$(cat "$T/rss")"
}
