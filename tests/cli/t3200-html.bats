#!/usr/bin/env bats
# pmuanalyze --html: one self-contained file (no URL, no script), its
# sections in a fixed order with stable ids, and, rendered by headless
# Chromium, the same numbers as the text report.

load helpers

setup() {
	T=$BATS_TEST_TMPDIR
}

# chromium_setup: skip unless Debian's chromium is installed (scripts/deps)
chromium_setup() {
	command -v chromium >/dev/null ||
		skip "chromium is not installed (Debian package chromium; scripts/deps installs it)"
}

# chromium ARGS...: headless, with a private profile.  --no-sandbox: the
# sandbox cannot start as root (nor in most containers); the page is ours
# and has no script.
headless() {
	timeout 60 chromium --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
		--no-default-browser-check --user-data-dir="$T/chromium" "$@" 2>>"$T/chromium.log"
}

# render FILE: the DOM Chromium builds from FILE, into FILE.dom
render() {
	headless --dump-dom "file://$1" >"$1.dom" || { cat "$T/chromium.log" >&2; return 1; }
	[ -s "$1.dom" ]
}

# text FILE [ID]: the text of the HTML document in FILE, or of its element
# with id ID, markup dropped and whitespace collapsed (cells apart by one
# space); with ID "--sections", the ids of the body's sections in order
text() {
	$PY - "$@" <<'EOF'
import sys, html.parser
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
class P(html.parser.HTMLParser):
    def __init__(self, want):
        super().__init__(convert_charrefs=True)
        self.want, self.depth, self.cap, self.skip, self.out, self.secs = want, 0, 0, 0, [], []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section" and self.depth == 2:
            self.secs.append(a.get("id", ""))
        if tag in VOID:
            return
        self.depth += 1
        if self.want is None and self.cap == 0 or a.get("id") == self.want:
            self.cap = self.cap or self.depth
        if tag in ("style", "title"):
            self.skip += 1
    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if tag in ("style", "title"):
            self.skip -= 1
        if self.cap and self.depth == self.cap:
            self.cap = -1
        self.depth -= 1
    def handle_data(self, d):
        if self.cap > 0 and not self.skip:
            self.out.append(d)
want = sys.argv[2] if len(sys.argv) > 2 else None
p = P(want)
p.feed(open(sys.argv[1], encoding="utf-8").read())
if want == "--sections":
    print(" ".join(p.secs))
else:
    print(" ".join(" ".join(p.out).split()))
EOF
}

# self_contained FILE: nothing refers outside the file
self_contained() {
	run grep -Eio 'https?://|<script|src=|url\(|@import|<link' "$1"
	assert_failure
	run head -c 15 "$1"
	assert_output "<!DOCTYPE html>"
	run grep -c '<meta charset="utf-8">' "$1"
	assert_output 1
}

@test "one bundle: a self-contained file, its sections in order" {
	b=$(mk b multiproc)
	run pmuanalyze --html "$T/r.html" "$b"
	assert_success
	self_contained "$T/r.html"
	run text "$T/r.html" --sections
	# (the fixture's spans and warmup-end mark make the runtime section)
	assert_output "warnings summary run not-measured collectors processes flamegraph runtime counters repetitions"
	# a chart per metric with values (in this fixture wall, task-clock,
	# page-faults, the five command.* totals, three span names)
	n=$(pmuanalyze --json "$b" | $PY -c 'import json,sys; print(sum(1 for s in json.load(sys.stdin)["repetitions"]["summary"] if s["status"] == "ok"))')
	[ "$n" -ge 11 ]
	run grep -c '<svg class="strip"' "$T/r.html"
	assert_output "$n"
}

@test "one recorded bundle, rendered by Chromium: the text report's dominant cost and every metric's summary" {
	needs_backend linux
	chromium_setup
	pmurec --repeat 3 -o "$T/s.bundle" -- sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; ls / >/dev/null'
	pmuanalyze --html "$T/s.html" "$T/s.bundle" >"$T/s.txt"
	self_contained "$T/s.html"
	render "$T/s.html"
	run text "$T/s.html.dom" --sections
	assert_output "warnings summary run not-measured collectors processes flamegraph counters repetitions"

	# the report's statement, which the text report prints whole
	statement=$(pmuanalyze --json "$T/s.bundle" | $PY -c 'import json,sys; print(json.load(sys.stdin)["dominant_cost"]["statement"])')
	[ -n "$statement" ]
	grep -qF -- "$statement" "$T/s.txt"
	# in the summary, under its heading (and the level it names, when the
	# report gives one)
	run text "$T/s.html.dom" dominant-cost
	[[ $output == "Dominant cost "*"$statement" ]] || fail "not the text report's statement: $output"
	run text "$T/s.html.dom" summary
	assert_output --partial "$statement"

	# every metric line of the text report is one row of the table, the
	# same strings in the same order: NAME MEDIAN MIN MAX Q1 .. Q3 N OUTLIERS
	text "$T/s.html.dom" repetitions >"$T/rep.txt"
	n=0
	while IFS= read -r line; do
		if [[ $line =~ ^\ \ ([^ ]+)\ +(~?[0-9.]+( [A-Za-z]+)?)\ \[([^]]+)\ \.\.\ ([^]]+)\],\ IQR\ (.+)\ \.\.\ (.+),\ n\ ([0-9]+)(,\ outliers:\ (repetition[ 0-9]+))?(,\ [0-9]+\ without\ a\ value)?$ ]]; then
			row="${BASH_REMATCH[1]} ${BASH_REMATCH[2]} ${BASH_REMATCH[4]} ${BASH_REMATCH[5]} ${BASH_REMATCH[6]} .. ${BASH_REMATCH[7]} ${BASH_REMATCH[8]}${BASH_REMATCH[11]} ${BASH_REMATCH[10]:-none}"
		elif [[ $line =~ ^\ \ ([^ ]+)\ +(n/a: .*)$ ]]; then
			row="${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"
		else
			continue
		fi
		grep -qF -- "$row" "$T/rep.txt" || { echo "not in the HTML: $row"; false; }
		n=$((n + 1))
	done < <(sed -n '/^metrics across 3 repetitions/,/^$/p' "$T/s.txt")
	[ "$n" -ge 8 ]
	run grep -c '^  wall .* n 3' "$T/s.txt"
	assert_output 1
}

@test "the process tree and cohort counters, rendered: every count labelled as in the text report" {
	chromium_setup
	b=$(mk b multiproc)
	pmuanalyze --html "$T/m.html" "$b" >"$T/m.txt"
	render "$T/m.html"
	# the text report's lines, then the same values in the table rows
	grep -qxF "  i1 pid 5000 sh (/bin/sh), 189.999 ms, exit 0, 2 threads" "$T/m.txt"
	grep -qxF "       task-clock 5.200 ms  page-faults 96  r00c0 ~2400000 (estimate, counted 50.0% of the time)" "$T/m.txt"
	grep -qxF "       task-clock 0.700 ms  page-faults 51  r00c0 not counted" "$T/m.txt"
	grep -qF "user 4.0 ms  sys 1.0 ms  rss 2.2 MiB  minflt 103  majflt 0  vcsw n/a  ivcsw n/a  rchar 8.8 KiB  wchar 0.2 KiB" "$T/m.txt"
	# the counts' labels are the text report's (one formatter for both);
	# the rest of the text report's layout is its own
	grep -qF "r00c0 ~2400000 (estimate, counted 50.0% of the time)" "$T/m.txt"
	grep -qF "r00c0 not counted" "$T/m.txt"
	# the tree: who (then, when recorded, the exec chain and argv), lifetime
	# and resources; then each incarnation's counters, by the same id
	run text "$T/m.html.dom" tree
	assert_output --partial "i1 5000 sh /bin/sh"
	assert_output --partial "189.999 ms exit 0 2 4.0 ms 1.0 ms 2.2 MiB 103 0 n/a n/a 8.8 KiB 0.2 KiB"
	assert_output --partial "i2 5001 ls /usr/bin/ls"
	assert_output --partial "7.000 ms exit 0 1 4.0 ms 1.0 ms 2.2 MiB 103 0 3 0 8.8 KiB 0.2 KiB"
	assert_output --partial "i3 5002 sleep /usr/bin/sleep"
	assert_output --partial "110.000 ms exit 0 1 n/a n/a n/a n/a n/a n/a n/a n/a n/a"
	run text "$T/m.html.dom" processes
	assert_output --partial "i1 sh 2.400 ms 142 940000"
	assert_output --partial "i2 ls 5.200 ms 96 ~2400000 (estimate, counted 50.0% of the time)"
	assert_output --partial "i3 sleep 0.700 ms 51 not counted"
	run text "$T/m.html.dom" counters
	assert_output --partial "task-clock sum of procs 8.300 ms task-clock cgroup 8.400 ms page-faults sum of procs 289 page-faults cgroup 301 r00c0 sum of procs not counted r00c0 cgroup not counted"
	run text "$T/m.html.dom" not-measured
	assert_output --partial "Not measured (4)"
	assert_output --partial "counter cycles unavailable perf_event_open: No such file or directory"
	assert_output --partial "read_format-lost degraded read_format LOST refused"
}

@test "an --ab pair, rendered: wall's medians, change and interval, a chart per metric, and the overhead statement, as in the report" {
	needs_backend linux
	chromium_setup
	pmurec --ab none,light --repeat 4 -o "$T/ab" -- sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done'
	pmuanalyze --html "$T/c.html" "$T/ab/none.bundle" "$T/ab/light.bundle" >"$T/c.txt"
	self_contained "$T/c.html"
	render "$T/c.html"
	run text "$T/c.html.dom" --sections
	assert_output "warnings summary run comparability comparison overhead gates"

	# wall's row: the report's medians, change and interval, formatted as
	# the text report formats them (an_fmt_compared)
	pmuanalyze --json "$T/ab/none.bundle" "$T/ab/light.bundle" >"$T/c.json"
	row=$($PY - "$T/c.json" <<'EOF'
import json, sys
m = [x for x in json.load(open(sys.argv[1]))["comparison"]["metrics"] if x["name"] == "wall"][0]
row = "wall %.3f ms %.3f ms %+.1f%%" % (m["a_median"] / 1e6, m["b_median"] / 1e6, m["delta_percent"])
if "ci_low_percent" in m:
    row += " %+.1f%% .. %+.1f%%" % (m["ci_low_percent"], m["ci_high_percent"])
print(row)
EOF
)
	run text "$T/c.html.dom" comparison
	assert_output --partial "$row"
	# a chart per metric both sides have
	rows=$($PY -c 'import json,sys; print(sum(1 for m in json.load(open(sys.argv[1]))["comparison"]["metrics"] if m["n_a"] and m["n_b"]))' "$T/c.json")
	run grep -c '<svg class="ab"' "$T/c.html"
	assert_output "$rows"

	# the overhead statement, as the text report prints it
	statement=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["comparison"]["overhead"]["statement"])' "$T/c.json")
	[ -n "$statement" ]
	grep -qF -- "$statement" "$T/c.txt"
	run text "$T/c.html.dom" overhead
	assert_output --partial "$statement"
	run text "$T/c.html.dom" warnings
	assert_output --partial "WARNING: fewer than 9 repetitions per side (A 4, B 4): the statistics are weak"
	run text "$T/c.html.dom" comparability
	assert_output --partial "comparability: comparable"
	assert_output --partial 'note mode "none" "light"'
}

@test "a forced comparison is the first thing in the file" {
	a=$(mk a minimal)
	b=$(mk b multiproc)
	run pmuanalyze --force --html "$T/f.html" "$a" "$b"
	assert_success
	self_contained "$T/f.html"
	run text "$T/f.html" warnings
	assert_output --regexp '^Warnings WARNING: FORCED COMPARISON: the bundles are not comparable'
	run text "$T/f.html" comparability
	assert_output --partial "comparability: NOT comparable (compared anyway: --force)"
	assert_output --partial 'differs command (argv) ["true"] ["sh","-c","ls / >/dev/null; sleep 0.1 & wait"]'
	run text "$T/f.html" gates
	assert_output "Gates No --fail-if gates were given."
}

@test "--allow-invalid: the failed checks head the file" {
	b=$(mk b minimal)
	sed -i 's/"result": "complete"/"result": "interrupted"/' "$b/data/run.json"
	rebag "$b"
	run pmuanalyze --allow-invalid --html "$T/i.html" "$b"
	assert_success
	run text "$T/i.html" warnings
	assert_output --partial "WARNING: the bundle is invalid and was analyzed on request (--allow-invalid)"
	assert_output --partial "INVALID BUNDLE (analyzed on request): "
	assert_output --regexp 'RESULT data/run.json'
}

@test "text from the bundle is escaped: a command line with markup stays text" {
	needs_backend linux
	chromium_setup
	pmurec -o "$T/e.bundle" -- sh -c ': "<script>x</script>" "<b>&amp;" '"'"'q'"'"''
	pmuanalyze --html "$T/e.html" "$T/e.bundle" >/dev/null
	run grep -c '<script\|<b>' "$T/e.html"
	assert_output 0
	grep -qF '&lt;script&gt;x&lt;/script&gt;' "$T/e.html"
	render "$T/e.html"
	run text "$T/e.html.dom" run
	assert_output --partial "command sh -c : \"<script>x</script>\" \"<b>&amp;\" 'q'"
}

@test "Chromium renders the report to a PNG" {
	chromium_setup
	b=$(mk b multiproc)
	pmuanalyze --html "$T/p.html" "$b" >/dev/null
	headless --window-size=1280,2000 --screenshot="$T/p.png" "file://$T/p.html" >/dev/null
	[ -s "$T/p.png" ]
	run od -An -tx1 -N8 "$T/p.png"
	assert_output " 89 50 4e 47 0d 0a 1a 0a"
	[ "$(stat -c %s "$T/p.png")" -gt 10000 ]
}

@test "an --html file that cannot be written: exit 2, naming it" {
	b=$(mk b minimal)
	run pmuanalyze --html "$T/no/such/dir/r.html" "$b"
	assert_failure 2
	assert_output --partial "cannot write '$T/no/such/dir/r.html'"
	[ ! -e "$T/no/such/dir/r.html" ]
}
