#!/usr/bin/env bats
# The validator on the sampling collector's files (spec 1.6, bundle-spec
# section 22): samples.jsonl, maps.jsonl, perf.data, retained files.  Each
# edit starts from `mkfixture sampled` and is re-bagged, so only the rule
# under test can fire.

load helpers

SAMPLES=collectors/sampling/samples.jsonl
MAPS=collectors/sampling/maps.jsonl

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

# samples_case EDIT: the sampled fixture with R, the samples stream's
# records, edited by the Python statements EDIT; prints the verdict
samples_case() {
	b=$(mk "b$RANDOM" sampled)
	edit "$b" "R = records('$SAMPLES')
$1
put_records('$SAMPLES', R)"
	verdict "$b"
}

maps_case() {
	b=$(mk "b$RANDOM" sampled)
	edit "$b" "R = records('$MAPS')
$1
put_records('$MAPS', R)"
	verdict "$b"
}

@test "the sampled fixture is valid, and --json lists the new checks as evaluated" {
	b=$(mk b sampled)
	run pmuvalidate --json "$b"
	assert_success
	for id in SAMPLES-SHAPE SAMPLES-SUMMARY MAPS-SHAPE BUILD-ID RETAINED PERF-DATA; do
		$PY -c 'import json, sys
b = json.loads(sys.argv[1])["bundles"][0]
sys.exit(0 if sys.argv[2] in b["evaluated"] else 1)' "$output" "$id" || fail "$id is not evaluated"
	done
}

@test "pmuvalidate --list-checks names the new checks" {
	run pmuvalidate --list-checks
	assert_success
	for id in SAMPLES-SHAPE SAMPLES-SUMMARY MAPS-SHAPE BUILD-ID RETAINED PERF-DATA; do
		assert_line --regexp "^$id "
	done
}

@test "each new check fails on its committed mutation, and on nothing else" {
	for id in SAMPLES-SHAPE SAMPLES-SUMMARY MAPS-SHAPE BUILD-ID RETAINED PERF-DATA; do
		f=$BATS_TEST_DIRNAME/../../fixtures/invalid/$id/bundle
		[ -d "$f" ] || fail "no fixture $f"
		run verdict "$f"
		[ "$output" = "$id" ] || fail "fixtures/invalid/$id: error checks {$output}"
	done
}

@test "the fixture's perf.data is read by perf script: its samples are the stream's" {
	command -v perf >/dev/null || skip "perf (Debian linux-perf) is not installed"
	b=$(mk b sampled)
	run perf script -i "$b/data/collectors/sampling/perf.data"
	assert_success
	n=$(grep -c 'cpu-clock:' <<<"$output")
	want=$(grep -c '"type":"sample"' "$b/data/$SAMPLES")
	[ "$n" -eq "$want" ] || fail "perf script lists $n samples, the stream has $want"
}

@test "PERF-DATA: samples without perf.data are refused" {
	b=$(mk b sampled)
	rm "$b/data/collectors/sampling/perf.data"
	rebag "$b"
	run verdict "$b"
	assert_output PERF-DATA
}

@test "PERF-DATA: perf.data whose SAMPLE count is not the stream's is refused" {
	run samples_case "R.pop(at(R, type='sample', t_ns=1005000000)); R[-1]['samples'] -= 1"
	assert_output PERF-DATA
}

@test "PERF-DATA: perf.data without a samples stream is refused" {
	b=$(mk b sampled)
	rm "$b/data/$SAMPLES"
	rebag "$b"
	run verdict "$b"
	assert_output PERF-DATA
}

@test "LOSS: lost records and a throttle make the bundle invalid" {
	b="$BATS_TEST_TMPDIR/loss"
	mkfixture sampled "$b" --loss
	run verdict "$b"
	assert_output LOSS
	run pmuvalidate "$b"
	assert_failure
	assert_output --partial "12 sampling records lost on cpu 1"
	assert_output --partial "the kernel throttled sampling on cpu 1"
}

@test "LOSS: with tolerate_loss the loss is a warning, and the bundle is valid" {
	b="$BATS_TEST_TMPDIR/tol"
	mkfixture sampled "$b" --loss --tolerate-loss
	run pmuvalidate --json "$b"
	assert_success
	$PY -c 'import json, sys
b = json.loads(sys.argv[1])["bundles"][0]
w = [f for f in b["findings"] if f["check"] == "LOSS"]
assert len(w) == 2 and all(f["severity"] == "warning" for f in w), w' "$output"
}

@test "SAMPLES-SHAPE: an address in upper case is refused" {
	run samples_case "R[at(R, type='sample', t_ns=1005000000)]['chain'] = '0x55d0c4a01234 0x55D0C4A013A8 0x7f3a1c029d90'"
	assert_output SAMPLES-SHAPE
}

@test "SAMPLES-SHAPE: the user part of a chain may hold any value, the ip and the kernel's frames may not" {
	# a frame-pointer walk through code built without frame pointers reads
	# whatever the user's stack holds: a kernel-looking return address there
	# is evidence as recorded, not a malformed record
	run samples_case "R[at(R, type='sample', t_ns=1005000000)]['chain'] = '0x55d0c4a01234 0xffffffff8a2b3c4d 0x7f3a1c029d90'"
	assert_output ""
	run samples_case "r = R[at(R, type='sample', t_ns=1005000000)]; r['ip'] = '0xffffffff8a2b3c4d'; r['chain'] = '0xffffffff8a2b3c4d 0x55d0c4a013a8'"
	assert_output SAMPLES-SHAPE
	run samples_case "r = R[at(R, type='sample', t_ns=1005000000)]; r['kernel_ip'] = True; r['kframes'] = 2"
	assert_output SAMPLES-SHAPE
}

@test "SAMPLES-SHAPE: a sample before the config is refused" {
	run samples_case "c = R.pop(1); R.insert(2, c)"
	assert_output SAMPLES-SHAPE
}

@test "SAMPLES-SHAPE: a stream without its summary is refused" {
	run samples_case "R.pop()"
	assert_output SAMPLES-SHAPE
}

@test "SAMPLES-SHAPE: a sample after the ksym records is refused" {
	run samples_case "s = R.pop(at(R, type='sample', t_ns=1005000000)); R.insert(len(R) - 1, s); s['t_ns'] = 1190000000"
	assert_output SAMPLES-SHAPE
}

@test "SAMPLES-SHAPE: a user frame within kframes is refused" {
	# (a kernel-looking address beyond kframes is not refused: the user
	# part is what a frame-pointer walk read, any value)
	run samples_case "R[at(R, kframes=2)]['kframes'] = 3"
	assert_output SAMPLES-SHAPE
}

@test "SAMPLES-SUMMARY: lost_records that are not the loss records' sum are refused" {
	run samples_case "R[-1]['lost_records'] = 3"
	assert_output SAMPLES-SUMMARY
}

@test "ATTRIBUTION: a sample of a pid that is not its incarnation's is refused" {
	run samples_case "R[at(R, type='sample', t_ns=1005000000)]['pid'] = 7001"
	assert_output ATTRIBUTION
}

@test "ATTRIBUTION: a map of an incarnation before it began is refused" {
	run maps_case "R[at(R, type='map', inc='i2', path='[vdso]')]['t_ns'] = 1001900000; R.insert(6, R.pop(at(R, type='map', inc='i2', path='[vdso]')))"
	assert_output ATTRIBUTION
}

@test "TIME-ORDER: samples out of time order are refused" {
	run samples_case "R[at(R, type='sample', t_ns=1005000000)]['t_ns'] = 1009000000"
	assert_output TIME-ORDER
}

@test "maps: map records out of time order are valid (they come as the recorder learned them)" {
	run maps_case "m = [k for k, r in enumerate(R) if r['type'] == 'map']
assert len(m) >= 2 and R[m[0]]['t_ns'] < R[m[-1]]['t_ns']
R[m[0]], R[m[-1]] = R[m[-1]], R[m[0]]"
	assert_output ""
}

@test "BUILD-ID: a build-id of an odd number of digits is refused" {
	run maps_case "R[at(R, type='map', inc='i2', path='/usr/lib/x86_64-linux-gnu/libc.so.6')]['build_id'] = 'abc'"
	assert_output BUILD-ID
}

@test "BUILD-ID: a retained binary whose build-id no map has is refused" {
	run maps_case "for r in R:
    if r.get('path') == '/work/build/hot' and r['type'] == 'map': r['build_id'] = '00112233445566778899aabbccddeeff00112233'"
	assert_output BUILD-ID
}

@test "RETAINED: a file under data/build-id/ that no retained record names is refused" {
	b=$(mk b sampled)
	mkdir -p "$b/data/build-id/ab"
	printf 'x' >"$b/data/build-id/ab/cdef"
	rebag "$b"
	run verdict "$b"
	assert_output RETAINED
}

@test "RETAINED: a retained record whose file is missing is refused" {
	b=$(mk b sampled)
	rm "$b/data/collectors/sampling/perf-7000.map"
	rebag "$b"
	run verdict "$b"
	assert_output RETAINED
}

@test "FILE-UNKNOWN: the sampling files in a spec 1.5 bundle are refused" {
	b=$(mk b sampled)
	for f in $(grep -rl '"spec"' "$b/data"); do sed -i 's/"spec": *"1.8"/"spec": "1.5"/; s/"spec":"1.8"/"spec":"1.5"/' "$f"; done
	sed -i 's/^PMU-Spec-Version: 1.8/PMU-Spec-Version: 1.5/' "$b/bag-info.txt"
	rebag "$b"
	run pmuvalidate "$b"
	assert_failure
	assert_output --partial "FILE-UNKNOWN       data/build-id/3f/"
	assert_output --partial "FILE-UNKNOWN       data/collectors/sampling/perf.data"
}

@test "FILE-UNKNOWN: a samples stream under another collector is refused" {
	b=$(mk b multiproc)
	cp "$b/data/collectors/syscalls/events.jsonl" "$b/data/collectors/syscalls/samples.jsonl"
	rebag "$b"
	run verdict "$b"
	assert_output FILE-UNKNOWN
}

@test "memory stays flat: 300,000 samples validate within a few MiB of the fixture's peak" {
	[ -x /usr/bin/time ] || skip "GNU time (/usr/bin/time) is not installed"
	small=$(mk small sampled)
	big="$BATS_TEST_TMPDIR/big"
	mkfixture sampled "$big" --samples 300000
	/usr/bin/time -f %M -o "$BATS_TEST_TMPDIR/rss0" pmuvalidate "$small" >/dev/null
	run /usr/bin/time -f %M -o "$BATS_TEST_TMPDIR/rss1" pmuvalidate "$big"
	assert_success
	assert_output --partial "valid (spec 1.8"
	r0=$(tail -1 "$BATS_TEST_TMPDIR/rss0") r1=$(tail -1 "$BATS_TEST_TMPDIR/rss1")
	echo "# peak RSS: fixture $r0 KiB, 300,000 samples $r1 KiB" >&3
	rss_under "$r1" $((r0 + 16384))
}

# A real recording of build/hot with its objects retained, in $b; skips
# where the sampling collector could not run here (call it directly, not in
# $(...), so that its skip skips the test).
record_retained() {
	needs_backend linux
	b="$BATS_TEST_TMPDIR/rec.bundle"
	pmurec --mode full --retain-binaries -o "$b" -- "$PMU_BUILD/hot" 50 child >/dev/null 2>"$BATS_TEST_TMPDIR/rec.err" ||
		fail "pmurec failed: $(cat "$BATS_TEST_TMPDIR/rec.err")"
	[ -f "$b/data/$SAMPLES" ] ||
		skip "the sampling collector did not run here: $(grep -o '"reason":"[^"]*"' "$b/data/collectors/sampling/lifecycle.jsonl" | head -1)"
}

@test "a real recording with --retain-binaries is valid, its retained ELF notes checked" {
	record_retained
	run pmuvalidate "$b"
	assert_success
	n=$(grep -c '"type":"retained","build_id"' "$b/data/$MAPS")
	[ "$n" -ge 2 ] || fail "only $n retained objects with a build-id (hot and libhot.so at least)"
}

@test "RETAINED: a real retained binary swapped for another real ELF is refused" {
	record_retained
	hot=$($PY -c 'import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "retained" and r["path"].endswith("/hot"): print(r["file"])' "$b/data/$MAPS")
	lib=$($PY -c 'import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "retained" and r["path"].endswith("/libhot.so"): print(r["file"])' "$b/data/$MAPS")
	[ -n "$hot" ] && [ -n "$lib" ] || fail "hot or libhot.so was not retained"
	cp "$b/data/$lib" "$b/data/$hot"
	rebag "$b"
	run pmuvalidate "$b"
	assert_failure
	assert_output --partial "RETAINED"
	assert_output --partial "has build-id $(basename "$(dirname "$lib")")$(basename "$lib")"
	run verdict "$b"
	assert_output RETAINED
}

@test "MAPS-SHAPE: samples without a maps stream are refused" {
	b=$(mk b sampled)
	rm "$b/data/$MAPS" "$b/data/build-id/3f/"* "$b/data/collectors/sampling/perf-7000.map"
	rmdir "$b/data/build-id/3f" "$b/data/build-id"
	rebag "$b"
	run verdict "$b"
	assert_output MAPS-SHAPE
}

@test "two repetitions with --retain-binaries share data/build-id/ and are valid; a copy under repeats/ is refused" {
	needs_backend linux
	b="$BATS_TEST_TMPDIR/rep.bundle"
	pmurec --mode full --retain-binaries --repeat 2 -o "$b" -- "$PMU_BUILD/hot" 30 >/dev/null 2>"$BATS_TEST_TMPDIR/rec.err" ||
		fail "pmurec failed: $(cat "$BATS_TEST_TMPDIR/rec.err")"
	[ -f "$b/data/repeats/2/$SAMPLES" ] || skip "the sampling collector did not run here"
	run pmuvalidate "$b"
	assert_success
	f=$(cd "$b/data" && find build-id -type f | head -1)
	mkdir -p "$b/data/repeats/2/$(dirname "$f")"
	cp "$b/data/$f" "$b/data/repeats/2/$f"
	rebag "$b"
	run verdict "$b"
	assert_output FILE-UNKNOWN
}

@test "MAPS-SHAPE: kernel code sampled, but no kmap, is refused" {
	run maps_case "R.pop(at(R, type='kmap'))"
	assert_output MAPS-SHAPE
}

@test "SAMPLES-SHAPE: a --call-graph dwarf sample with a register fewer than regs_mask names is refused" {
	needs_backend linux
	b="$BATS_TEST_TMPDIR/dwarf.bundle"
	pmurec --mode full --call-graph dwarf -o "$b" -- "$PMU_BUILD/hot-nofp" 30 >/dev/null 2>"$BATS_TEST_TMPDIR/rec.err" ||
		fail "pmurec failed: $(cat "$BATS_TEST_TMPDIR/rec.err")"
	[ -f "$b/data/$SAMPLES" ] && grep -q '"regs":' "$b/data/$SAMPLES" ||
		skip "no sample with user registers was recorded here"
	run pmuvalidate "$b"
	assert_success
	edit "$b" "R = records('$SAMPLES')
k = [i for i, r in enumerate(R) if 'regs' in r][0]
R[k]['regs'] = R[k]['regs'].rsplit(' ', 1)[0]
put_records('$SAMPLES', R)"
	run verdict "$b"
	assert_output SAMPLES-SHAPE
}
