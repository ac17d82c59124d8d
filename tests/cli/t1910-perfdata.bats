#!/usr/bin/env bats
# The bundle's perf.data (lib/perfdata.c) as Debian's perf reads it: a
# real recording of build/hot (parent, shared library, forked child) by
# pmurec --mode full, then perf script, perf report and perf buildid-list
# on collectors/sampling/perf.data, compared with the bundle's own
# samples and maps streams.

load helpers

setup_file() {
	B="$BATS_FILE_TMPDIR/s.bundle"
	export B
	[ "$(cat "$PMU_BUILD/backend" 2>/dev/null)" = linux ] || return 0
	pmurec --mode full -o "$B" -- "$PMU_BUILD/hot" 300 child >"$BATS_FILE_TMPDIR/rec.out" 2>&1 || true
}

setup() {
	T=$BATS_TEST_TMPDIR
	F=$B/data/collectors/sampling/perf.data
	S=$B/data/collectors/sampling/samples.jsonl
}

# recorded: skip unless perf is there and the recording has samples, with
# the reason the sampling collector gave
recorded() {
	needs_backend linux
	command -v perf >/dev/null || skip "perf is not installed (Debian: linux-perf)"
	local lc="$B/data/collectors/sampling/lifecycle.jsonl"
	[ -d "$B" ] || fail "pmurec wrote no bundle: $(cat "$BATS_FILE_TMPDIR/rec.out")"
	if [ ! -s "$S" ]; then
		[ -s "$lc" ] && grep -q '"status":"unavailable"' "$lc" &&
			skip "sampling is unavailable here: $(grep -o '"reason":"[^"]*' "$lc" | head -1)"
		fail "no samples stream: $(cat "$BATS_FILE_TMPDIR/rec.out")"
	fi
	[ -s "$F" ] || fail "the bundle has samples but no perf.data"
}

@test "perf script lists as many samples as the samples stream, of the same pids" {
	recorded
	perf script -i "$F" -G -F pid,ip,sym >"$T/out" 2>"$T/err"
	[ ! -s "$T/err" ] || fail "perf script warned: $(cat "$T/err")"
	want=$(grep -c '"type":"sample"' "$S")
	got=$(wc -l <"$T/out")
	[ "$got" -eq "$want" ] || fail "perf script: $got samples, the stream: $want"
	$PY -c 'import json,sys; print("\n".join(sorted({str(json.loads(l)["pid"]) for l in open(sys.argv[1]) if "\"sample\"" in l})))' "$S" >"$T/want-pids"
	awk '{print $1}' "$T/out" | sort -u >"$T/got-pids"
	diff "$T/want-pids" "$T/got-pids" || fail "pids differ"
}

@test "perf report names the hot functions of the program, its library and its child" {
	recorded
	perf report -i "$F" --stdio --no-children -g none --sort sym >"$T/out" 2>"$T/err"
	for f in hot_loop child_loop lib_work; do
		grep -q "\] $f" "$T/out" || fail "perf report has no $f: $(head -40 "$T/out")"
	done
}

@test "perf report says nothing on stderr" {
	recorded
	perf report -i "$F" --stdio >/dev/null 2>"$T/err"
	if grep -q "Kernel address maps" "$T/err" &&
		! perf script -i "$F" --show-mmap-events 2>/dev/null | grep -q 'kernel.kallsyms\]_text'; then
		skip "the recorder wrote no kernel MMAP (pmu_perfdata_kernel_mmap): perf report warns that kernel maps were restricted"
	fi
	[ ! -s "$T/err" ] || fail "perf report warned: $(cat "$T/err")"
}

@test "perf buildid-list prints the build-id of every map with one in the maps stream" {
	recorded
	perf buildid-list -i "$F" >"$T/out" 2>"$T/err"
	[ ! -s "$T/err" ] || fail "perf buildid-list warned: $(cat "$T/err")"
	bid=$(readelf -n "$PMU_BUILD/hot" | sed -n 's/.*Build ID: *//p')
	grep -q "^$bid .*/hot\$" "$T/out" || fail "no $bid for build/hot: $(cat "$T/out")"
	$PY -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("type") == "map" and r.get("build_id"):
        print(r["build_id"])' "$B/data/collectors/sampling/maps.jsonl" | sort -u >"$T/want"
	awk '{print $1}' "$T/out" | sort -u >"$T/got"
	missing=$(comm -23 "$T/want" "$T/got")
	[ -z "$missing" ] || fail "build-ids of maps missing from perf.data: $missing"
}
