#!/usr/bin/env bats
# Rules beyond the one-fixture-per-check set: each edit is re-bagged so
# only the rule under test can fire.

load helpers

# edit BUNDLE PYTHON: run a Python snippet with `d` = path of data/, then re-bag
edit() {
	$PY - "$1/data" <<<"import json, sys, os
d = sys.argv[1]
def load(n): return json.load(open(os.path.join(d, n)))
def save(n, o): open(os.path.join(d, n), 'w').write(json.dumps(o, indent=2) + '\n')
def records(n): return [json.loads(l) for l in open(os.path.join(d, n))]
def put_records(n, rs): open(os.path.join(d, n), 'w').write(''.join(json.dumps(r, separators=(',', ':')) + '\n' for r in rs))
def at(rs, **m): return [k for k, r in enumerate(rs) if all(r.get(a) == b for a, b in m.items())][0]
$2"
	rebag "$1"
}

verdict() {
	run pmuvalidate --json "$1"
	echo "$output" >"$BATS_TEST_TMPDIR/r.json"
	ids "$BATS_TEST_TMPDIR/r.json"
}

# mk12 NAME: the multi-process fixture as spec 1.2 writes it (cohort.json)
mk12() {
	mkfixture multiproc "$BATS_TEST_TMPDIR/$1" --spec 1.2 >/dev/null
	echo "$BATS_TEST_TMPDIR/$1"
}

# cohort_case EDIT: the 1.3 multi-process fixture with cohort.jsonl as
# R (its records) edited by the Python statements EDIT; prints the verdict
cohort_case() {
	b=$(mk "b$RANDOM" multiproc)
	edit "$b" "R = records('cohort.jsonl')
$1
put_records('cohort.jsonl', R)"
	verdict "$b"
}

@test "COHORT: parent links that form a cycle are refused (cohort.json, 1.2)" {
	b=$(mk12 b)
	edit "$b" "c = load('cohort.json'); i = c['incarnations']
i[1]['parent'] = 'i3'; i[2]['parent'] = 'i2'; save('cohort.json', c)"
	run verdict "$b"
	assert_output COHORT
}

@test "COHORT: an incarnation without a parent that is not the root is refused (cohort.json, 1.2)" {
	b=$(mk12 b)
	edit "$b" "c = load('cohort.json'); del c['incarnations'][2]['parent']; save('cohort.json', c)"
	run verdict "$b"
	assert_output COHORT
}

@test "cohort.jsonl: the 1.3 fixture, with records of several incarnations interleaved, is valid" {
	b=$(mk b multiproc)
	run pmuvalidate "$b"
	assert_success
	run $PY -c 'import json,sys; print([json.loads(l)["type"] for l in open(sys.argv[1])][1:6])' "$b/data/cohort.jsonl"
	assert_output "['incarnation', 'thread', 'thread', 'incarnation', 'thread']"
}

@test "COHORT (1.3): a parent that is a later incarnation record is refused (no cycle can be written)" {
	run cohort_case "R[at(R, type='incarnation', id='i2')]['parent'] = 'i3'"
	assert_output COHORT
}

@test "COHORT (1.3): a second incarnation without a parent is refused" {
	run cohort_case "del R[at(R, type='incarnation', id='i3')]['parent']"
	assert_output COHORT
}

@test "COHORT (1.3): the first record after the header must be the root's incarnation" {
	run cohort_case "R.insert(1, R.pop(at(R, type='thread', inc='i1', tid=5000)))"
	assert_output COHORT
}

@test "COHORT (1.3): a record of an incarnation after its end record is refused" {
	run cohort_case "R.append(R.pop(at(R, type='exec', inc='i3')))"
	assert_output COHORT
}

@test "COHORT (1.3): an incarnation without an end record is refused" {
	run cohort_case "del R[at(R, type='end', inc='i3')]"
	assert_output COHORT
}

@test "COHORT (1.3): an incarnation without a thread record for its pid is refused" {
	run cohort_case "del R[at(R, type='thread', inc='i3')]"
	assert_output COHORT
}

@test "COHORT (1.3): a thread listed twice is refused" {
	run cohort_case "k = at(R, type='thread', inc='i2'); R.insert(k, dict(R[k]))"
	assert_output COHORT
}

@test "COHORT (1.3): a duplicate id and a duplicate (pid, start) are refused" {
	run cohort_case "k = at(R, type='incarnation', id='i3'); R.insert(k + 1, dict(R[k], id='i4'))"
	assert_output COHORT
	run cohort_case "R[at(R, type='incarnation', id='i3')]['id'] = 'i2'"
	assert_output COHORT
}

@test "FIELD-STATUS (1.3): a missing resource record, or one carrying another total, is refused" {
	run cohort_case "del R[at(R, type='resource', inc='i2', field='write_bytes')]"
	assert_output FIELD-STATUS
	run cohort_case "R[at(R, type='resource', inc='i2', field='cpu_user_ns')]['read_bytes'] = 1"
	assert_output FIELD-STATUS
	run cohort_case "k = at(R, type='resource', inc='i2', field='major_faults'); R.insert(k, dict(R[k]))"
	assert_output FIELD-STATUS
}

@test "TIME-ORDER (1.3): execs out of order, or after the end, are refused" {
	run cohort_case "k = at(R, type='exec', inc='i1'); R.insert(k + 1, dict(R[k], t_ns=R[k]['t_ns'] - 50))"
	assert_output TIME-ORDER
	run cohort_case "k = at(R, type='exec', inc='i3'); R[k]['t_ns'] = R[at(R, type='end', inc='i3')]['end_ns'] + 1"
	assert_output TIME-ORDER
}

@test "SCHEMA-FIELD (1.3): an end record's exit without its number, or with the other one, is refused" {
	run cohort_case "del R[at(R, type='end', inc='i3')]['code']"
	assert_output SCHEMA-FIELD
	run cohort_case "R[at(R, type='end', inc='i3')]['signal'] = 9"
	assert_output SCHEMA-FIELD
}

@test "FILE-UNKNOWN: cohort.json in a 1.3 bundle, cohort.jsonl in a 1.2 bundle" {
	b=$(mk b multiproc)
	o=$(mk12 o)
	cp "$o/data/cohort.json" "$b/data/cohort.json"
	rebag "$b"
	run verdict "$b"
	assert_output FILE-UNKNOWN
	run pmuvalidate "$b"
	assert_output --partial "a document of earlier versions only"
	cp "$b/data/cohort.jsonl" "$o/data/cohort.jsonl"
	rebag "$o"
	run verdict "$o"
	assert_output FILE-UNKNOWN
}

@test "FILE-REQUIRED: a 1.3 bundle without cohort.jsonl" {
	b=$(mk b minimal)
	rm "$b/data/cohort.jsonl"
	rebag "$b"
	run verdict "$b"
	assert_output FILE-REQUIRED
}

@test "SCHEMA-FIELD: an exit of kind 'exited' without a code is refused" {
	b=$(mk b minimal)
	edit "$b" "r = load('run.json'); del r['exit']['code']; save('run.json', r)"
	run verdict "$b"
	assert_output SCHEMA-FIELD
}

@test "BAG-INFO: a Bagging-Date that is no calendar day is refused" {
	b=$(mk b minimal)
	sed -i 's/^Bagging-Date: .*/Bagging-Date: 2025-02-29/' "$b/bag-info.txt"
	rebag "$b"
	run verdict "$b"
	assert_output BAG-INFO
}

@test "BAG-STRUCTURE: an empty directory in the payload is refused" {
	b=$(mk b minimal)
	mkdir -p "$b/data/collectors/empty"
	run verdict "$b"
	assert_output BAG-STRUCTURE
}

@test "JSON-SYNTAX: a stream record over 1 MiB with its LF is refused, one of exactly 1 MiB is read" {
	b=$(mk b multiproc)
	f=data/collectors/syscalls/events.jsonl
	# an instant event whose name pads the line to 1 MiB + 1 byte with its LF
	edit "$b" "p = os.path.join(d, 'collectors/syscalls/events.jsonl'); L = open(p).read().splitlines(True)
head = '{\"type\":\"event\",\"t_ns\":1185000000,\"inc\":\"i1\",\"pid\":5000,\"tid\":5000,\"ph\":\"i\",\"name\":\"'
pad = 1048577 - len(head) - len('\"}\n')
L[-1] = head + 'x' * pad + '\"}\n'
open(p, 'w').write(''.join(L))"
	[ "$(tail -n1 "$b/$f" | wc -c)" -eq 1048577 ]
	run verdict "$b"
	assert_output JSON-SYNTAX
	sed -i '$ s/xx"}$/x"}/' "$b/$f"
	rebag "$b"
	[ "$(tail -n1 "$b/$f" | wc -c)" -eq 1048576 ]
	run verdict "$b"
	assert_output ""
}

@test "LOSS: recorded loss is an error, or a reported warning when tolerated" {
	b=$(mk b multiproc)
	edit "$b" "p = os.path.join(d, 'collectors/syscalls/events.jsonl'); L = open(p).read().splitlines(True)
L.insert(3, json.dumps({'type': 'loss', 't_ns': 1002500000, 'lost': 12}, separators=(',', ':')) + '\n')
open(p, 'w').write(''.join(L))"
	run verdict "$b"
	assert_output LOSS
	edit "$b" "r = load('run.json'); r['tolerate_loss'] = True; save('run.json', r)"
	run pmuvalidate "$b"
	assert_success
	assert_output --partial "with warnings"
	assert_output --partial "warning LOSS"
	assert_output --partial "12 records lost (tolerated"
}

@test "SPEC-VERSION: a newer minor version is refused, not half-checked" {
	b=$(mk b minimal)
	sed -i "s/^PMU-Spec-Version: 1.8/PMU-Spec-Version: 1.9/" "$b/bag-info.txt"
	rebag "$b"
	run pmuvalidate "$b"
	assert_failure 1
	assert_output --partial "newer than this validator's 1.8"
}

@test "SPEC-VERSION: malformed version strings are refused" {
	for v in 1.01 01.1 +1.1 ' 1.1' 1 1.x; do
		b=$(mk "b$RANDOM" minimal)
		sed -i "s/^PMU-Spec-Version: .*/PMU-Spec-Version: $v/" "$b/bag-info.txt"
		rebag "$b"
		run pmuvalidate "$b"
		assert_failure 1
		assert_output --partial "SPEC-VERSION"
	done
}

@test "a bundle of the older minor version 1.0 validates; a 1.1 field in it does not" {
	b=$(mk b.bundle minimal)
	rm -rf "$b"
	mkfixture minimal "$b" --spec 1.0 >/dev/null
	run pmuvalidate "$b"
	assert_success
	assert_output --partial "valid (spec 1.0"
	edit "$b" "r = load('run.json'); r['seed'] = 1; save('run.json', r)"
	run verdict "$b"
	assert_output SCHEMA-FIELD
}

@test "a bundle of the older minor version 1.1 validates; a 1.2 counts stream in it does not" {
	b=$(mk b.bundle minimal)
	rm -rf "$b"
	mkfixture multiproc "$b" --spec 1.1 >/dev/null
	run pmuvalidate "$b"
	assert_success
	assert_output --partial "valid (spec 1.1"
	m=$(mk m.bundle multiproc)
	# a 1.1 collector with a counts stream (its header speaks 1.2: it is not read)
	edit "$b" "import shutil
shutil.copy('$m/data/collectors/counting/counts.jsonl', os.path.join(d, 'collectors/syscalls/counts.jsonl'))"
	run verdict "$b"
	assert_output FILE-UNKNOWN
	run pmuvalidate "$b"
	assert_output --partial "syscalls/counts.jsonl: file is not defined by spec 1.1 (its stream kind was added in a later version)"
}

@test "COUNT-SUM and COUNT-VALUE: an estimate must be the scaled raw count, a sum the sum of its parts" {
	b=$(mk b.bundle multiproc)
	# the r00c0 estimate of thread 5001: raw 1200000 over half its enabled time
	edit "$b" "p = os.path.join(d, 'collectors/counting/counts.jsonl')
L = [json.loads(l) for l in open(p)]
for r in L:
    if r.get('type') == 'count' and r.get('tid') == 5001 and r.get('counter') == 'r00c0':
        assert r['estimate'] and r['value'] == 2400000
        r['value'] = 1200000
open(p, 'w').write(''.join(json.dumps(r, separators=(',', ':')) + '\\n' for r in L))"
	run verdict "$b"
	# the count is no longer raw * enabled / running, and the total no longer its sum
	assert_output "COUNT-SUM COUNT-VALUE"
}

@test "COUNT-SUM: a count after its total, a second total and counts without a total are each found" {
	b=$(mk b.bundle multiproc)
	# the sums of counts are kept only while open (lib/validate.c); each
	# way of closing one wrongly must still be found
	edit "$b" "n = 'collectors/counting/counts.jsonl'
L = records(n)
t = at(L, type='total', inc='i2', counter='task-clock')
c = at(L, type='count', tid=5001, counter='r00c0')
cnt = L[c]
L.insert(t + 1, dict(L[t]))
del L[at(L, type='total', inc='i3', counter='page-faults')]
L.append(cnt)
put_records(n, L)"
	run pmuvalidate "$b"
	assert_failure
	assert_output --partial "a second total of 'task-clock' for 'i2'"
	assert_output --partial "counts of 'page-faults' in 'i3' have no total"
	assert_output --regexp "a count of 'r00c0' in 'i[0-9]+' after its total"
}

@test "events streams checked in parallel report the same findings, in file order, every time" {
	b=$(mk b multiproc)
	edit "$b" "import shutil
shutil.copytree(os.path.join(d, 'collectors/syscalls'), os.path.join(d, 'collectors/syscalls2'))
r = load('run.json'); r['collectors'].append({'name': 'syscalls2', 'requested': True}); save('run.json', r)
for c in ('syscalls', 'syscalls2'):
    p = os.path.join(d, 'collectors', c, 'events.jsonl')
    L = open(p).read().splitlines()
    L = L[:1] + [l.replace('\"tid\":5000', '\"tid\":5009') for l in L[1:]]
    L += [L[-1].replace('exit_group', 'x%d' % i) for i in range(30)]
    open(p, 'w').write(chr(10).join(L) + chr(10))"
	first=$(pmuvalidate --json "$b" | sha256sum)
	for i in 1 2 3 4 5; do
		[ "$(pmuvalidate --json "$b" | sha256sum)" = "$first" ]
	done
	run bash -c "pmuvalidate --json '$b' | $PY -c 'import json,sys; d=json.load(sys.stdin)[\"bundles\"][0]; print(d[\"errors\"], len(d[\"findings\"]), d[\"unreported\"], d[\"findings\"][0][\"file\"], d[\"findings\"][-1][\"file\"])'"
	assert_output "66 20 {'ATTRIBUTION': 46} data/collectors/syscalls/events.jsonl data/collectors/syscalls/events.jsonl"
}

# The records and fields spec 1.2 added, each refused when broken (the
# valid multiproc fixture carries all of them).
counts_edit() { # BUNDLE PYTHON: edit the counts records R in place
	edit "$1" "p = os.path.join(d, 'collectors/counting/counts.jsonl')
L = [json.loads(l) for l in open(p)]
R = L[1:]
$2
open(p, 'w').write(''.join(json.dumps(r, separators=(',', ':')) + '\\n' for r in [L[0]] + R))"
}

@test "COUNT-VALUE and FIELD-STATUS on cgroup statistics: one value field, present exactly when ok" {
	b=$(mk b.bundle multiproc)
	counts_edit "$b" "[r for r in R if r['type'] == 'cgstat' and r['key'] == 'usage_ns'][0]['value'] = 1"
	run verdict "$b"
	assert_output COUNT-VALUE
	b=$(mk c.bundle multiproc)
	counts_edit "$b" "del [r for r in R if r['type'] == 'cgstat' and r['key'] == 'peak'][0]['value_bytes']"
	run verdict "$b"
	assert_output FIELD-STATUS
}

@test "COUNT-VALUE on the cgroup's own count: the value in the field of the counter's unit" {
	b=$(mk b.bundle multiproc)
	counts_edit "$b" "r = [r for r in R if r['type'] == 'cohort' and r['scope'] == 'cgroup' and r['counter'] == 'task-clock'][0]
r['value'] = r.pop('value_ns')"
	run verdict "$b"
	# the wrong field, and so no value in the right one
	assert_output "COUNT-VALUE FIELD-STATUS"
}

@test "SCHEMA-FIELD on a fallback without its reason and on command_rusage without its source" {
	b=$(mk b.bundle multiproc)
	counts_edit "$b" "del [r for r in R if r['type'] == 'fallback'][0]['reason']"
	run verdict "$b"
	assert_output SCHEMA-FIELD
	b=$(mk c.bundle multiproc)
	edit "$b" "r = load('run.json'); del r['command_rusage']['source']; save('run.json', r)"
	run verdict "$b"
	assert_output SCHEMA-FIELD
}
