#!/usr/bin/env bats
# The validator on the runtime-evidence collectors' streams (spec 1.8,
# bundle-spec section 24): probes.jsonl (the probe map's records, the
# probe records, the span rules per incarnation) and alloc.jsonl (samples,
# frees, per-incarnation estimates).  Each edit starts from `mkfixture
# runtime` and is re-bagged, so only the rule under test can fire.

load helpers

PR=collectors/probes/probes.jsonl
AL=collectors/alloc/alloc.jsonl
NEW="PROBES-SHAPE PROBE-ATTACH ALLOC-SHAPE ALLOC-ESTIMATE"
WORK3=$(((1 << 62) | 3)) # the child span "work" of request 3, begun and ended on 9003
WORK4=$(((1 << 62) | 4))

# edit BUNDLE PYTHON: run a Python snippet with `d` = path of data/, then re-bag
edit() {
	$PY - "$1/data" <<<"import json, sys, os
d = sys.argv[1]
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

# stream_case FILE EDIT: the runtime fixture with R, the records of FILE
# (relative to data/, the header R[0]), edited by the Python statements
# EDIT; prints the verdict (the sorted error check IDs)
stream_case() {
	b=$(mk "b$RANDOM" runtime)
	edit "$b" "R = records('$1')
$2
put_records('$1', R)"
	verdict "$b"
}
pr_case() { stream_case "$PR" "$1"; }
al_case() { stream_case "$AL" "$1"; }

@test "the runtime fixture is valid, and --json lists the new checks and the span rules as evaluated" {
	b=$(mk b runtime)
	run pmuvalidate --json "$b"
	assert_success
	for id in $NEW SPAN-ID SPAN-PARENT SPAN-CYCLE SPAN-NESTING LOSS ATTRIBUTION TIME-ORDER TIME-WINDOW MALFORMED; do
		$PY -c 'import json, sys
b = json.loads(sys.argv[1])["bundles"][0]
sys.exit(0 if sys.argv[2] in b["evaluated"] else 1)' "$output" "$id" || fail "$id is not evaluated"
	done
}

@test "the runtime fixture has cross-thread spans, both marks and GC pauses of three runtimes" {
	b=$(mk b runtime)
	run $PY -c 'import json, sys
R = [json.loads(l) for l in open(sys.argv[1])]
spans = [r for r in R if r["type"] == "span"]
cross = [s for s in spans if s["tid"] != s["end_tid"]]
marks = sorted(r["name"] for r in R if r["type"] == "mark")
rts = sorted({r["runtime"] for r in R if r["type"] == "gc"})
print(len(spans), len(cross), " ".join(marks), " ".join(rts))' "$b/data/$PR"
	assert_output "200 100 startup-end startup-end warmup-end hotspot pmu python"
}

@test "pmuvalidate --list-checks names the new checks" {
	run pmuvalidate --list-checks
	assert_success
	for id in $NEW; do
		assert_line --regexp "^$id "
	done
}

@test "each new check fails on its committed mutations, and on nothing else" {
	for id in $NEW; do
		for f in "$BATS_TEST_DIRNAME"/../../fixtures/invalid/$id/bundle*; do
			[ -d "$f" ] || fail "no fixture $f"
			run verdict "$f"
			[ "$output" = "$id" ] || fail "$f: error checks {$output}"
		done
	done
}

@test "the corrupted span trees of the probes stream fail exactly their span rule" {
	for id in SPAN-ID SPAN-PARENT SPAN-CYCLE SPAN-NESTING; do
		f=$BATS_TEST_DIRNAME/../../fixtures/invalid/$id/bundle-probes
		[ -d "$f" ] || fail "no fixture $f"
		run verdict "$f"
		[ "$output" = "$id" ] || fail "$f: error checks {$output}"
	done
}

@test "the committed runtime fixture is mkfixture's" {
	b=$(mk b runtime)
	run diff -r "$b" "$BATS_TEST_DIRNAME/../../fixtures/valid/runtime"
	assert_success
}

@test "mkfixture runtime --loss is refused for its loss, accepted with --tolerate-loss" {
	mkfixture runtime "$BATS_TEST_TMPDIR/l" --loss >/dev/null
	run verdict "$BATS_TEST_TMPDIR/l"
	assert_output LOSS
	mkfixture runtime "$BATS_TEST_TMPDIR/t" --loss --tolerate-loss >/dev/null
	run pmuvalidate "$BATS_TEST_TMPDIR/t"
	assert_success
	assert_output --partial "warning LOSS"
	assert_output --partial "probe hits lost: the ring was full"
	assert_output --partial "samples lost: the ring was full"
}

# ---- spans of the probes stream: per incarnation, across threads --------------

@test "span rules: a parent is a span of the same incarnation, begun on any thread" {
	# request 3 is begun on 9001 and ended on 9003: valid as it is (the fixture)
	run pr_case "assert R[at(R, type='span', id='3')]['tid'] != R[at(R, type='span', id='3')]['end_tid']"
	assert_output ""
	run pr_case "R[at(R, type='span', id='$WORK3')]['parent'] = '999'"
	assert_output SPAN-PARENT
}

@test "span rules: ids are unique per incarnation, not across incarnations" {
	run pr_case "R[at(R, type='span', id='$WORK4')]['id'] = '$WORK3'"
	assert_output SPAN-ID
	# the same id in another incarnation is another span: i4's thread 9008 begins a span '3' of its own
	# (two more hits, of pmu:span_begin and pmu:span_end, made it)
	run pr_case "s = dict(R[at(R, type='span', id='3')]); s.update(inc='i4', pid=9005, tid=9008, end_tid=9008, t_ns=2200000000, begin_ns=2190000000, end_ns=2200000000)
R.insert(at(R, type='gc', runtime='hotspot', kind='pool', t_ns=2204000000), s); R[-1]['spans'] += 1
R[at(R, type='probe', name='span_begin')]['hits'] += 1; R[at(R, type='probe', name='span_end')]['hits'] += 1; R[-1]['hits'] += 2"
	assert_output ""
	# ... and a parent named in another incarnation does not resolve
	run pr_case "s = dict(R[at(R, type='span', id='$WORK3')]); s.update(inc='i4', pid=9005, tid=9008, end_tid=9008, t_ns=2200000000, begin_ns=2190000000, end_ns=2200000000)
R.insert(at(R, type='gc', runtime='hotspot', kind='pool', t_ns=2204000000), s); R[-1]['spans'] += 1
R[at(R, type='probe', name='span_begin')]['hits'] += 1; R[at(R, type='probe', name='span_end')]['hits'] += 1; R[-1]['hits'] += 2"
	assert_output SPAN-PARENT
}

@test "span rules: a child outside its parent, or a cycle, is refused" {
	run pr_case "R[at(R, type='span', id='$WORK3')]['begin_ns'] = R[at(R, type='span', id='3')]['begin_ns'] - 1"
	assert_output SPAN-NESTING
	run pr_case "w, r = at(R, type='span', id='$WORK3'), at(R, type='span', id='3')
for k in ('t_ns', 'begin_ns', 'end_ns'): R[w][k] = R[r][k]
R[r]['parent'] = '$WORK3'"
	assert_output SPAN-CYCLE
}

@test "span rules: a child of an unended span resolves to it" {
	# request 100 never ends: an unended record at i2's end; its child still names it
	run pr_case "r = R.pop(at(R, type='span', id='100')); R[-1]['spans'] -= 1
u = dict(type='unended', t_ns=1520000000, what='span', inc='i2', pid=9001, tid=9001, id='100', name='request', begin_ns=r['begin_ns'])
R.insert(at(R, type='allocs'), u); R[-1]['unended'] += 1"
	assert_output ""
	run pr_case "R.pop(at(R, type='span', id='100')); R[-1]['spans'] -= 1"
	assert_output SPAN-PARENT
}

@test "ATTRIBUTION: a span's begin and end threads are its incarnation's, alive then" {
	run pr_case "R[at(R, type='span', id='3')]['end_tid'] = 9008"
	assert_output ATTRIBUTION
	run pr_case "R[at(R, type='span', id='3')]['tid'] = 9004"
	assert_output ATTRIBUTION
	run pr_case "R[at(R, type='gc', runtime='python', t_ns=1560310000)]['inc'] = 'i2'"
	assert_output ATTRIBUTION
	run al_case "R[at(R, type='sample', seq=1)]['tid'] = 9006"
	assert_output ATTRIBUTION
}

@test "TIME-ORDER and TIME-WINDOW: intervals, t_ns order and attached_ns" {
	run pr_case "g = R[at(R, type='gc', runtime='pmu', t_ns=1259400000)]; g['begin_ns'] = g['t_ns'] + 1"
	assert_output TIME-ORDER
	run pr_case "R.insert(3, R.pop(at(R, type='mark', name='warmup-end')))"
	assert_output TIME-ORDER
	run pr_case "R[at(R, type='probe', provider='pmu', name='mark')]['attached_ns'] = 999000000"
	assert_output TIME-WINDOW
}

# ---- PROBES-SHAPE ---------------------------------------------------------------

@test "PROBES-SHAPE: config first, probe records after the others, summary last" {
	run pr_case "R.insert(2, R.pop(1))"
	assert_output PROBES-SHAPE
	run pr_case "R.insert(3, R.pop(at(R, type='probe', provider='pmu', name='runtime')))"
	assert_output "PROBES-SHAPE TIME-ORDER"
	run pr_case "R.pop()"
	assert_output PROBES-SHAPE
}

@test "PROBES-SHAPE: the summary counts the stream" {
	for f in probes attached hits spans marks gcs raw_hits unended lost; do
		run pr_case "R[-1]['$f'] += 1"
		[ "$output" = PROBES-SHAPE ] || fail "summary $f: {$output}"
	done
}

@test "PROBES-SHAPE: dur_ns, a span's t_ns, via, and a gc's kind, source, pool and collected" {
	run pr_case "R[at(R, type='gc', runtime='pmu', t_ns=1259400000)]['dur_ns'] += 1"
	assert_output PROBES-SHAPE
	run pr_case "R[at(R, type='span', id='3')]['via'] = 'ctl'"
	assert_output PROBES-SHAPE
	run pr_case "R[at(R, type='mark', name='warmup-end')]['via'] = 'ctl'"
	assert_output PROBES-SHAPE
	run pr_case "R[at(R, type='gc', runtime='python', t_ns=1560310000)]['kind'] = 'young'"
	assert_output PROBES-SHAPE
	run pr_case "R[at(R, type='gc', runtime='python', t_ns=1560310000)]['source'] = 'hotspot:gc__begin'"
	assert_output PROBES-SHAPE
	run pr_case "del R[at(R, type='gc', runtime='hotspot', kind='pool', t_ns=2204000000)]['pool']"
	assert_output PROBES-SHAPE
	run pr_case "R[at(R, type='gc', runtime='pmu', t_ns=1259400000)]['collected'] = 3"
	assert_output PROBES-SHAPE
	run pr_case "R[at(R, type='mark', source='hotspot:vm__init__end')]['name'] = 'ready'"
	assert_output PROBES-SHAPE
	run pr_case "R[at(R, type='unended', what='jit')]['id'] = '7'"
	assert_output PROBES-SHAPE
}

@test "PROBES-SHAPE: a raw hit is of a probe config's requested names" {
	run pr_case "R[at(R, type='hit', t_ns=1530000000)]['name'] = 'function__return'"
	assert_output PROBES-SHAPE
	run pr_case "del R[1]['requested']"
	assert_output "PROBE-ATTACH PROBES-SHAPE"
}

# ---- PROBE-ATTACH ----------------------------------------------------------------

@test "PROBE-ATTACH: attached with attached_ns; not attached with a reason and no hits" {
	run pr_case "del R[at(R, type='probe', provider='pmu', name='mark')]['attached_ns']"
	assert_output PROBE-ATTACH
	run pr_case "p = R[at(R, type='probe', provider='python', name='function__entry')]; p['attached'] = False; del p['attached_ns']; R[-1]['attached'] -= 1"
	assert_output PROBE-ATTACH
	run pr_case "p = R[at(R, type='probe', provider='python', name='function__entry')]; p['attached'] = False; del p['attached_ns']; p['reason'] = 'x'; R[-1]['attached'] -= 1"
	assert_output PROBE-ATTACH
	# (and so no hit records: records made from a probe not attached are refused)
	run pr_case "p = R[at(R, type='probe', provider='python', name='function__entry')]; p['attached'] = False; del p['attached_ns']; p['reason'] = 'x'; R[-1]['attached'] -= 1; R[-1]['hits'] -= p['hits']; p['hits'] = 0"
	assert_output PROBE-ATTACH
	run pr_case "p = R[at(R, type='probe', provider='python', name='function__entry')]; p['attached'] = False; del p['attached_ns']; p['reason'] = 'x'; R[-1]['attached'] -= 1; R[-1]['hits'] -= p['hits']; p['hits'] = 0
R[:] = [r for r in R if r.get('type') != 'hit']; R[-1]['raw_hits'] = 0"
	assert_output ""
}

@test "PROBE-ATTACH: records of a provider none of whose probes attached are refused" {
	run pr_case "
for p in R:
    if p['type'] == 'probe' and p['provider'] == 'python':
        R[-1]['attached'] -= 1; R[-1]['hits'] -= p['hits']
        p.update(attached=False, hits=0, reason='no'); del p['attached_ns']"
	assert_output PROBE-ATTACH
}

# ---- ALLOC-SHAPE ------------------------------------------------------------------

@test "ALLOC-SHAPE: config first, summary last, counting the stream" {
	run al_case "R.insert(2, R.pop(1))"
	assert_output ALLOC-SHAPE
	run al_case "R.pop()"
	assert_output ALLOC-SHAPE
	for f in samples frees lost; do
		run al_case "R[-1]['$f'] += 1"
		[ "$output" = ALLOC-SHAPE ] || fail "summary $f: {$output}"
	done
}

@test "ALLOC-SHAPE: samples numbered in order; a free names an earlier sample" {
	run al_case "R[at(R, type='sample', seq=2)]['seq'] = 3"
	assert_output ALLOC-SHAPE
	run al_case "R[at(R, type='free', sample_seq=1)]['sample_seq'] = 40"
	assert_output ALLOC-SHAPE
}

@test "ALLOC-SHAPE: addresses and chains" {
	run al_case "R[at(R, type='sample', seq=1)]['addr'] = '7f2c50001000'"
	assert_output ALLOC-SHAPE
	run al_case "R[at(R, type='sample', seq=1)]['chain'] = '0x55E4B7A01456'"
	assert_output ALLOC-SHAPE
	run al_case "del R[at(R, type='sample', seq=1)]['chain']"
	assert_output ALLOC-SHAPE
}

@test "ALLOC-SHAPE: one inc record per sampled incarnation, after its samples, counting them" {
	run al_case "R.pop(at(R, type='inc', inc='i3'))"
	assert_output ALLOC-SHAPE
	run al_case "R.insert(at(R, type='inc', inc='i3'), dict(R[at(R, type='inc', inc='i3')]))"
	assert_output ALLOC-SHAPE
	run al_case "R[at(R, type='inc', inc='i2')]['live_samples'] += 1"
	assert_output ALLOC-SHAPE
	run al_case "R[at(R, type='inc', inc='i2')]['samples'] -= 1"
	assert_output ALLOC-SHAPE
	run al_case "R[at(R, type='inc', inc='i2')]['exited'] = False"
	assert_output ALLOC-SHAPE
}

# ---- ALLOC-ESTIMATE ------------------------------------------------------------------

@test "ALLOC-ESTIMATE: a sample's estimate is section 24.3's, within one" {
	run al_case "R[at(R, type='sample', seq=1)]['est_bytes'] += 2; R[at(R, type='inc', inc='i2')]['est_bytes'] += 2; R[-1]['est_bytes'] += 2"
	assert_output ALLOC-ESTIMATE
	run al_case "R[at(R, type='sample', seq=1)]['est_objects_milli'] -= 5"
	assert_output ALLOC-ESTIMATE
	# the estimate depends on sample_bytes: another mean makes every sample wrong
	run al_case "R[1]['sample_bytes'] = 65536"
	assert_output ALLOC-ESTIMATE
}

@test "ALLOC-ESTIMATE: an incarnation's sums and the summary's" {
	run al_case "R[at(R, type='inc', inc='i2')]['est_bytes'] += 1"
	assert_output ALLOC-ESTIMATE
	run al_case "R[at(R, type='inc', inc='i2')]['est_objects'] += 1"
	assert_output ALLOC-ESTIMATE
	run al_case "i = R[at(R, type='inc', inc='i4')]; i['live_est_bytes'] = i['est_bytes'] + 1"
	assert_output ALLOC-ESTIMATE
	run al_case "R[-1]['est_bytes'] -= 1"
	assert_output ALLOC-ESTIMATE
}

# ---- LOSS, MALFORMED, FILE-UNKNOWN -----------------------------------------------------

@test "LOSS and MALFORMED: from either stream" {
	run pr_case "R.insert(at(R, type='allocs'), dict(type='loss', t_ns=1520000000, cpu=0, lost=2, what='open-map')); R[-1]['lost'] += 2"
	assert_output LOSS
	run al_case "R[-1]['malformed'] = 2"
	assert_output MALFORMED
	run pr_case "R[-1]['malformed'] = 1"
	assert_output MALFORMED
}

@test "FILE-UNKNOWN: probes.jsonl and alloc.jsonl are their collectors' alone" {
	b=$(mk b runtime)
	cp "$b/data/$AL" "$b/data/collectors/probes/alloc.jsonl"
	rebag "$b"
	run verdict "$b"
	assert_output FILE-UNKNOWN
}

# The span table (56 bytes per span, first 256 of them: realloc of 14336
# bytes) made to fail by an interposed realloc: the spans not held are
# reported, not dropped (which would refuse their children as SPAN-PARENT
# "parent span does not exist").
@test "span table: spans the validator cannot hold are reported, not dropped silently" {
	command -v gcc >/dev/null || skip "no gcc"
	ldd "$(command -v pmuvalidate)" | grep -q libasan && skip "pmuvalidate is built with ASan"
	cat >"$BATS_TEST_TMPDIR/shim.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
void *realloc(void *p, size_t n)
{
	static void *(*next)(void *, size_t);
	if (n == 256 * 56) {
		errno = ENOMEM;
		return NULL;
	}
	if (!next)
		next = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
	return next(p, n);
}
EOF
	gcc -shared -fPIC -o "$BATS_TEST_TMPDIR/shim.so" "$BATS_TEST_TMPDIR/shim.c" -ldl
	b=$(mk b runtime)
	run env LD_PRELOAD="$BATS_TEST_TMPDIR/shim.so" pmuvalidate "$b"
	assert_failure
	assert_output --partial "out of memory: 0 spans held (56 bytes each), 200 not; the span rules are not checked"
	refute_output --partial "parent span does not exist"
}

@test "a spec 1.7 bundle has no probes or alloc stream" {
	mkfixture multiproc "$BATS_TEST_TMPDIR/b" --spec 1.7 >/dev/null
	mkfixture runtime "$BATS_TEST_TMPDIR/r" >/dev/null
	b=$BATS_TEST_TMPDIR/b
	cp -r "$BATS_TEST_TMPDIR/r/data/collectors/probes" "$b/data/collectors/"
	$PY - "$b/data/run.json" <<<'import json, sys
d = json.load(open(sys.argv[1])); d["collectors"].append({"name": "probes", "requested": True})
open(sys.argv[1], "w").write(json.dumps(d, indent=2) + "\n")'
	sed -i 's/"spec":"1.8"/"spec":"1.7"/' "$b/data/collectors/probes/lifecycle.jsonl"
	rebag "$b"
	run pmuvalidate "$b"
	assert_failure
	assert_output --partial "its stream kind was added in a later version"
}
