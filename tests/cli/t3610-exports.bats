#!/usr/bin/env bats
# pmuanalyze --folded, --speedscope, --pprof and the HTML flame graph, on a
# real bundle: build/hot (a known hot function with an inlined helper, a
# shared library function, a forked child) sampled by pmurec --mode full,
# then read by the outside tools themselves: go tool pprof (Debian's
# golang-go), jq, headless Chromium.

load helpers

# One recording for the file: sampling costs a few seconds of CPU.
setup_file() {
	B="$BATS_FILE_TMPDIR/s.bundle"
	export B
	[ "$(cat "$PMU_BUILD/backend" 2>/dev/null)" = linux ] || return 0
	pmurec --mode full -o "$B" -- "$PMU_BUILD/hot" 400 child >"$BATS_FILE_TMPDIR/rec.out" 2>&1 || true
}

setup() {
	T=$BATS_TEST_TMPDIR
}

# recorded: skip unless the file's recording has samples, with the reason
# the sampling collector gave (no perf_event_open, ...)
recorded() {
	needs_backend linux
	local s="$B/data/collectors/sampling/samples.jsonl" lc="$B/data/collectors/sampling/lifecycle.jsonl"
	[ -d "$B" ] || fail "pmurec wrote no bundle: $(cat "$BATS_FILE_TMPDIR/rec.out")"
	if [ ! -s "$s" ]; then
		[ -s "$lc" ] && grep -q '"status":"unavailable"' "$lc" &&
			skip "sampling is unavailable here: $(grep -o '"reason":"[^"]*' "$lc" | head -1)"
		fail "the bundle has no samples stream: $(cat "$BATS_FILE_TMPDIR/rec.out")"
	fi
	N=$(grep -c '"type":"sample"' "$s")
	[ "$N" -gt 0 ] || fail "no sample records in $s"
}

# go_setup: go tool pprof with a private HOME and build cache
go_setup() {
	command -v go >/dev/null || skip "go is not installed (Debian package golang-go; scripts/deps installs it)"
	export HOME="$T/home" GOCACHE="$T/gocache" GOFLAGS=-mod=mod
	mkdir -p "$HOME"
}

# the function pmuanalyze ranks first by self samples, over the whole cohort
top_function() {
	pmuanalyze --json "$B" | jq -r '[.profile.programs[].self[]] | max_by(.samples) | .symbol // .function'
}

@test "pprof: go tool pprof -top reads it, with pmuanalyze's top function first" {
	recorded
	go_setup
	run pmuanalyze --pprof "$T/p.pb.gz" "$B"
	assert_success
	gzip -t "$T/p.pb.gz"
	go tool pprof -top "$T/p.pb.gz" >"$T/top.txt" 2>"$T/top.err" || fail "go tool pprof: $(cat "$T/top.err")"
	# all the samples are there, counted as samples
	run grep -Eo "of $N total" "$T/top.txt"
	assert_success
	for f in hot_loop child_loop lib_work; do
		grep -qw "$f" "$T/top.txt" || fail "$f is not in go tool pprof -top: $(cat "$T/top.txt")"
	done
	# hot_loop's inlined helper is a line of hot_loop's locations
	grep -q 'mix (inline)' "$T/top.txt" || fail "no inline frame: $(cat "$T/top.txt")"
	# pmuanalyze counts an inlined function's samples in the function it
	# was inlined into: so does -noinlines.  The first row under the
	# header: flat, flat%, sum%, cum, cum%, name
	go tool pprof -top -noinlines "$T/p.pb.gz" >"$T/top.txt" 2>"$T/top.err" ||
		fail "go tool pprof -noinlines: $(cat "$T/top.err")"
	first=$(awk 'h { $1=$2=$3=$4=$5=""; sub(/^ +/, ""); print; exit } /flat%/ { h=1 }' "$T/top.txt")
	top=$(top_function)
	[ -n "$top" ] || fail "pmuanalyze --json names no top function"
	[ "$first" = "$top" ] || fail "go tool pprof's top is '$first', pmuanalyze's '$top': $(cat "$T/top.txt")"
}

@test "pprof: samples and the event's own unit (cpu-clock: cpu nanoseconds), mappings with build-ids" {
	recorded
	go_setup
	pmuanalyze --pprof "$T/p.pb.gz" "$B" >/dev/null
	# a frequency gives no fixed period, and none is made up
	go tool pprof -raw "$T/p.pb.gz" >"$T/raw.txt" 2>"$T/raw.err" || fail "go tool pprof -raw: $(cat "$T/raw.err")"
	event=$(grep -m1 '"type":"config"' "$B/data/collectors/sampling/samples.jsonl" | jq -r .event)
	case $event in
	cpu-clock) grep -Eq '^samples/count(\[dflt\])? cpu/nanoseconds$' "$T/raw.txt" ||
		fail "not samples/count cpu/nanoseconds: $(head -8 "$T/raw.txt")" ;;
	cycles) grep -Eq '^samples/count(\[dflt\])? cycles/count$' "$T/raw.txt" ||
		fail "not samples/count cycles/count: $(head -8 "$T/raw.txt")" ;;
	*) skip "event $event" ;;
	esac
	grep -q '^Period: 0$' "$T/raw.txt" || fail "a period at $(grep Period "$T/raw.txt")"
	# the test workload's mapping, with the build-id the maps stream recorded
	bid=$(jq -r 'select(.type == "map" and (.path // "" | endswith("/hot"))) | .build_id // empty' \
		"$B/data/collectors/sampling/maps.jsonl" | head -1)
	[ -n "$bid" ] || fail "the maps stream has no build-id for build/hot"
	grep -q "$bid" "$T/raw.txt" || fail "build-id $bid is not in the profile's mappings"
}

@test "folded: one line per distinct stack, the counts summing to the stream's samples" {
	recorded
	run pmuanalyze --folded "$T/s.folded" "$B"
	assert_success
	sum=$(awk '{ s += $NF } END { print s }' "$T/s.folded")
	[ "$sum" -eq "$N" ] || fail "the folded counts sum to $sum, the stream has $N samples"
	summary=$(jq -r 'select(.type == "summary") | .samples' "$B/data/collectors/sampling/samples.jsonl")
	[ "$sum" -eq "$summary" ]
	run sh -c "sed 's/ [0-9]*\$//' '$T/s.folded' | sort | uniq -d"
	assert_output ""
	# program;outer;...;inner count, the hot function within hot's stacks
	run grep -Ec '^hot;.*;hot_loop(;[^ ]*)? [0-9]+$' "$T/s.folded"
	assert_success
	run grep -Ec '^[^;]+(;[^;]+)* [0-9]+$' "$T/s.folded"
	assert_output "$(wc -l <"$T/s.folded")"
}

@test "speedscope: JSON that jq parses, with every sample" {
	recorded
	run pmuanalyze --speedscope "$T/s.json" "$B"
	assert_success
	run jq -r '."$schema"' "$T/s.json"
	assert_output "https://www.speedscope.app/file-format-schema.json"
	run jq '[.profiles[].weights[]] | add' "$T/s.json"
	assert_output "$N"
	run jq '[.profiles[] | .type == "sampled" and (.samples | length) == (.weights | length) and
		.endValue == (.weights | add)] | all' "$T/s.json"
	assert_output true
	# every stack's frames are in the shared table
	run jq '(.shared.frames | length) as $n | [.profiles[].samples[][] | . >= 0 and . < $n] | all' "$T/s.json"
	assert_output true
	run jq -r '.shared.frames[] | select(.name == "hot_loop") | .file' "$T/s.json"
	assert_output --partial "hot.c"
}

# chromium, as tests/cli/t3200-html.bats runs it
headless() {
	timeout 60 chromium --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
		--no-default-browser-check --user-data-dir="$T/chromium" "$@" 2>>"$T/chromium.log"
}

@test "HTML: the flame graph, rendered by Chromium, names hot_loop and states the event and sample count" {
	recorded
	command -v chromium >/dev/null ||
		skip "chromium is not installed (Debian package chromium; scripts/deps installs it)"
	run pmuanalyze --html "$T/s.html" "$B"
	assert_success
	run grep -Eio 'https?://|<script|src=|url\(|@import|<link' "$T/s.html"
	assert_failure
	headless --dump-dom "file://$T/s.html" >"$T/s.dom" || fail "chromium: $(cat "$T/chromium.log")"
	[ -s "$T/s.dom" ]
	flame=$($PY - "$T/s.dom" <<'EOF'
import sys, html.parser
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.depth, self.cap, self.out, self.boxes = 0, 0, [], 0
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.depth += 1
        if a.get("id") == "flamegraph":
            self.cap = self.depth
        if self.cap and tag == "rect":
            self.boxes += 1
    def handle_endtag(self, tag):
        if self.cap and self.depth == self.cap:
            self.cap = 0
        self.depth -= 1
    def handle_data(self, d):
        if self.cap:
            self.out.append(d)
p = P()
p.feed(open(sys.argv[1], encoding="utf-8").read())
print(p.boxes, " ".join(" ".join(p.out).split()))
EOF
)
	[[ $flame == [1-9]* ]] || fail "no boxes in the flame graph: $flame"
	[[ $flame == *hot_loop* ]] || fail "hot_loop is not in the flame graph: $flame"
	event=$(grep -m1 '"type":"config"' "$B/data/collectors/sampling/samples.jsonl" | jq -r .event)
	[[ $flame == *"$N samples of $event"* ]] || fail "the legend does not say '$N samples of $event': $flame"
	[[ $flame == *"share of the $N $event samples"* ]] || fail "no axis: $flame"
}

@test "a bundle without samples: exports refused with the reason, no file; the page says why" {
	b=$(mk b multiproc)
	for o in --folded --speedscope --pprof; do
		run pmuanalyze $o "$T/out" "$b"
		assert_failure 2
		assert_output --partial "no samples"
		[ ! -e "$T/out" ] || fail "$o left $T/out behind"
	done
	run pmuanalyze --html "$T/r.html" "$b"
	assert_success
	run grep -o 'No flame graph: [^<]*' "$T/r.html"
	assert_output --partial "no samples"
}

@test "an output path that cannot be written: an error, exit 2, nothing left behind" {
	recorded
	for o in --folded --speedscope --pprof; do
		run pmuanalyze $o "$T/no/such/dir/x" "$B"
		assert_failure 2
		assert_output --partial "cannot write '$T/no/such/dir/x'"
		[ ! -e "$T/no" ]
		# a directory in the way: no temporary file left beside it either
		mkdir -p "$T/d/x"
		run pmuanalyze $o "$T/d/x" "$B"
		assert_failure 2
		assert_output --partial "cannot write '$T/d/x'"
		run ls -A "$T/d"
		assert_output "x"
		run ls -A "$T/d/x"
		assert_output ""
	done
}

@test "the exports compare nothing: two bundles are refused" {
	b=$(mk b multiproc)
	run pmuanalyze --pprof "$T/p.pb.gz" "$b" "$b"
	assert_failure 2
	assert_output --partial "export one bundle's samples"
}

@test "a rebuilt binary: its frames are placeholders that say stale, in every export, never a wrong name" {
	needs_backend linux
	command -v cc >/dev/null || skip "no C compiler to rebuild the workload"
	go_setup
	cp "$PMU_BUILD/hot" "$PMU_BUILD/libhot.so" "$T/"
	pmurec --mode full -o "$T/r.bundle" -- "$T/hot" 200 >"$T/rec.out" 2>&1 || fail "pmurec: $(cat "$T/rec.out")"
	grep -q '"type":"sample"' "$T/r.bundle/data/collectors/sampling/samples.jsonl" ||
		skip "no samples recorded: $(cat "$T/rec.out")"
	# the same source at the same path, another build-id
	cc -std=gnu11 -g -O2 -fno-omit-frame-pointer -Wl,--build-id=0x00112233445566778899aabbccddeeff00112233 \
		-o "$T/hot" "$BATS_TEST_DIRNAME/../helpers/hot.c" -L"$T" -lhot -Wl,-rpath,'$ORIGIN'
	pmuanalyze --folded "$T/r.folded" --pprof "$T/r.pb.gz" --speedscope "$T/r.json" "$T/r.bundle" >/dev/null
	grep -Eq ';\[stale hot 0x[0-9a-f]+\]' "$T/r.folded" || fail "no stale placeholder: $(cat "$T/r.folded")"
	run grep -c 'hot_loop' "$T/r.folded"
	assert_output 0
	# the shared library was not rebuilt: still named
	grep -q ';lib_work ' "$T/r.folded"
	go tool pprof -top "$T/r.pb.gz" >"$T/top.txt" 2>&1
	grep -Eq '\[stale hot 0x[0-9a-f]+\]' "$T/top.txt" || fail "no stale placeholder in pprof: $(cat "$T/top.txt")"
	run jq -r '[.shared.frames[].name | select(startswith("[stale hot 0x"))] | length > 0' "$T/r.json"
	assert_output true
}

@test "the flame graph of 300000 distinct unmapped addresses (JIT code without a perf map) is built in bounded time" {
	recorded
	cp -a "$B" "$T/u.bundle"
	# one frame per address under the program: each is a child of one node
	$PY - "$T/u.bundle/data/collectors/sampling/samples.jsonl" 300000 <<'PYEOF'
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
lines = open(path).read().splitlines()
last = max(json.loads(l).get("t_ns", 0) for l in lines)
pid = [json.loads(l) for l in lines if '"type":"sample"' in l and '"inc":"i1"' in l][0]["pid"]
out = []
for l in lines:
    if json.loads(l)["type"] in ("ksym", "summary") and n:
        for i in range(n):
            a = "0x%x" % (0x10000000 + 16 * i)
            out.append(json.dumps({"type": "sample", "t_ns": last, "inc": "i1", "pid": pid, "tid": pid, "cpu": 0, "ip": a,
                                   "kernel_ip": False, "period": 1, "chain": a, "kframes": 0, "chain_cut": False},
                                  separators=(",", ":")))
        n = 0
    out.append(l)
open(path, "w").write("\n".join(out) + "\n")
PYEOF
	st=0
	# a hang guard, not a timing: a walk of the siblings per frame takes
	# tens of minutes here, a hashed lookup a few seconds
	timeout 300 pmuanalyze --allow-invalid --html "$T/u.html" "$T/u.bundle" >/dev/null 2>"$T/u.err" || st=$?
	[ "$st" -ne 124 ] || fail "the flame graph of 300000 distinct frames did not finish in 300 s"
	grep -q '<section id="flamegraph">' "$T/u.html"
	grep -q '<svg class="flame"' "$T/u.html"
}
