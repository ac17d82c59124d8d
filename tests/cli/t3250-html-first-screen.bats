#!/usr/bin/env bats
# pmuanalyze --html as a reader sees it: rendered by headless Chromium in a
# 1280x800 window, what the first screen shows (the dominant cost, the wall
# time, what was not measured, a comparison's verdict), that nothing needs a
# horizontal scroll, that charts have axes with units, and that rendering
# fetches nothing.  Measured in the browser, not read from the markup: a
# copy of the page gets a probe script that writes its measurements into the
# DOM, which Chromium dumps (the page itself has no script).

load helpers

setup_file() {
	# one recorded bundle for the file: a command that spends most of its
	# wall time asleep, runs a few programs, one of them through env (two
	# execs in one process), and has an argument too long for any column
	# (it must wrap, not widen the page)
	export R=$BATS_FILE_TMPDIR
	[ "$(cat "$PMU_BUILD/backend" 2>/dev/null)" = linux ] || return 0
	long=/nonexistent/$(printf 'a%.0s' $(seq 1 220))
	pmurec --repeat 3 -o "$R/s.bundle" -- sh -c "ls / >/dev/null; sleep 0.3; cat /etc/passwd | wc -l >/dev/null; ls $long 2>/dev/null; (exec env A=1 ls / >/dev/null); true" >/dev/null 2>&1 || true
}

setup() {
	T=$BATS_TEST_TMPDIR
}

chromium_setup() {
	command -v chromium >/dev/null ||
		skip "chromium is not installed (Debian package chromium; scripts/deps installs it)"
}

# recorded: skip unless setup_file could record the bundle
recorded() {
	needs_backend linux
	[ -d "$R/s.bundle" ] || fail "setup_file could not record $R/s.bundle"
}

headless() {
	timeout 90 chromium --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
		--no-default-browser-check --user-data-dir="$T/chromium" --window-size=1280,800 "$@" 2>>"$T/chromium.log"
}

# probe HTML: render a copy of HTML with a measuring script in a 1280x800
# window; the measurements, as JSON, into HTML.probe:
#   w, h: the window; cw: its width less a scrollbar; sw: the document's
#   scroll width; fetched: resources
#   the page loaded; ids: per element id its box (top, bottom, right, in
#   page pixels, with <details> as the page has them), visible, text;
#   wide: elements reaching past the window (the outermost of them) or
#   scrolling sideways inside,
#   with every <details> opened; charts: each chart's class, label, ticks
probe() {
	cat >"$T/probe.js" <<'EOF'
addEventListener("load", () => {
  const cw = document.documentElement.clientWidth;
  const r = { w: innerWidth, h: innerHeight, cw: cw, fetched: performance.getEntriesByType("resource").length, ids: {}, wide: [], charts: [] };
  for (const id of ["summary", "dominant-cost", "wall-time", "programs", "not-measured-summary", "verdict", "comparability-warnings", "warnings", "run", "tree"]) {
    const e = document.getElementById(id);
    if (!e) continue;
    const b = e.getBoundingClientRect();
    r.ids[id] = { top: b.top + scrollY, bottom: b.bottom + scrollY, right: b.right, visible: e.checkVisibility(), text: e.innerText, items: e.querySelectorAll("li").length };
  }
  document.querySelectorAll("details").forEach(d => d.open = true);
  r.sw = document.documentElement.scrollWidth;
  for (const e of document.body.querySelectorAll("*")) {
    const b = e.getBoundingClientRect(), name = e.tagName + (e.id ? "#" + e.id : "") + (e.className && e.className.baseVal === undefined ? "." + e.className : "");
    const up = e.parentElement.getBoundingClientRect();
    if (b.right > cw + 0.5 && up.right <= cw + 0.5) r.wide.push(name + " reaches " + b.right);
    if (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX != "visible") r.wide.push(name + " scrolls " + e.scrollWidth + " > " + e.clientWidth);
  }
  for (const s of document.querySelectorAll("svg")) r.charts.push({ cls: s.getAttribute("class"), label: s.getAttribute("aria-label"), ticks: [...s.querySelectorAll("text.tick")].map(t => t.textContent) });
  const p = document.createElement("pre"); p.id = "probe"; p.textContent = JSON.stringify(r); document.body.append(p);
});
EOF
	$PY - "$1" "$T/probe.js" <<'EOF'
import sys
page = open(sys.argv[1], encoding="utf-8").read()
assert page.count("</body>") == 1
open(sys.argv[1] + ".probe.html", "w", encoding="utf-8").write(page.replace("</body>", "<script>" + open(sys.argv[2]).read() + "</script></body>"))
EOF
	headless --virtual-time-budget=5000 --dump-dom "file://$1.probe.html" >"$1.dom" || { cat "$T/chromium.log" >&2; return 1; }
	$PY - "$1.dom" >"$1.probe" <<'EOF'
import html, re, sys
m = re.search(r'<pre id="probe">(.*?)</pre>', open(sys.argv[1], encoding="utf-8").read(), re.S)
if not m:
    sys.exit("the probe wrote nothing")
print(html.unescape(m.group(1)))
EOF
}

# q FILE EXPR: a Python expression over the probe's JSON (as p) and, when
# FILE.json exists, the report's (as rep)
q() {
	$PY - "$@" <<'EOF'
import json, os, sys
p = json.load(open(sys.argv[1] + ".probe"))
rep = json.load(open(sys.argv[1] + ".json")) if os.path.exists(sys.argv[1] + ".json") else None
v = eval(sys.argv[2])
print(v if not isinstance(v, (list, dict)) else json.dumps(v))
EOF
}

# report OUT BUNDLE...: pmuanalyze's HTML into OUT and its JSON into OUT.json
report() {
	local out=$1
	shift
	pmuanalyze --html "$out" "$@" >/dev/null
	pmuanalyze --json "$@" >"$out.json"
}

# window FILE: the probe ran in a window 1280 px wide, or the measurements
# mean nothing.  The first screen is the page's first 800 px, as a 1280x800
# --screenshot shows them: boxes are measured in page pixels, and headless
# Chromium's --dump-dom gives the page less than the window's height (its
# window frame), which the layout does not depend on (no vh units).
window() {
	run q "$1" 'p["w"]'
	assert_output 1280
}

@test "a recorded bundle at 1280x800: the dominant cost is whole within the first screen" {
	chromium_setup
	recorded
	report "$T/s.html" "$R/s.bundle"
	probe "$T/s.html"
	window "$T/s.html"
	run q "$T/s.html" 'p["ids"]["dominant-cost"]["bottom"] <= 800 and p["ids"]["dominant-cost"]["visible"]'
	assert_output True
	# the report's statement, as the reader sees it
	run q "$T/s.html" 'rep["dominant_cost"]["statement"] in " ".join(p["ids"]["dominant-cost"]["text"].split())'
	assert_output True
	# and it is the first thing after the title and the warnings line
	run q "$T/s.html" 'p["ids"]["summary"]["top"] < p["ids"]["run"]["top"]'
	assert_output True
}

@test "a recorded bundle: the wall time, split on-CPU and off-CPU, is within the first screen when the report has it" {
	chromium_setup
	recorded
	report "$T/s.html" "$R/s.bundle"
	probe "$T/s.html"
	window "$T/s.html"
	run q "$T/s.html" '(rep.get("wall_time") or {}).get("status")'
	if [ "$output" != ok ]; then
		# an older report (no wall_time): nothing pretends to decompose it
		run q "$T/s.html" '"wall-time" in p["ids"]'
		assert_output False
		return
	fi
	run q "$T/s.html" 'p["ids"]["wall-time"]["bottom"] <= 800 and p["ids"]["wall-time"]["visible"]'
	assert_output True
	run q "$T/s.html" 'p["ids"]["wall-time"]["text"]'
	assert_output --partial "on-CPU"
	assert_output --partial "off-CPU at least"
	# the bar is on a time axis
	run q "$T/s.html" '[c["ticks"] for c in p["charts"] if c["cls"] == "wall"][0]'
	assert_output --regexp '^\["0 (ms|s)", "[0-9.]+ (ms|s)"'
}

@test "a recorded bundle: what was not measured starts in the first screen, one line per cause, every item named" {
	chromium_setup
	recorded
	report "$T/s.html" "$R/s.bundle"
	probe "$T/s.html"
	window "$T/s.html"
	run q "$T/s.html" 'len(rep["not_measured"])'
	[ "$output" -gt 0 ] || skip "everything was measured on this host: nothing to group"
	run q "$T/s.html" 'p["ids"]["not-measured-summary"]["top"] < 800'
	assert_output True
	# at most one line per item; fewer when one cause refuses several
	# (the report's groups when it has them)
	run q "$T/s.html" 'p["ids"]["not-measured-summary"]["items"] <= len(rep["not_measured"])'
	assert_output True
	run q "$T/s.html" '"not_measured_groups" not in rep or p["ids"]["not-measured-summary"]["items"] == len(rep["not_measured_groups"])'
	assert_output True
	# every item's name is on its cause's line (a shared first word, as in
	# "counter cycles, instructions", is written once)
	run q "$T/s.html" '[w for w in ([w for g in rep["not_measured_groups"] for w in g["what"]] if "not_measured_groups" in rep else [x["what"] for x in rep["not_measured"]]) if w.split(" ")[-1] not in p["ids"]["not-measured-summary"]["text"]]'
	assert_output "[]"
}

@test "a recorded bundle: the top programs, when the report aggregates them, in the summary with their process counts" {
	chromium_setup
	recorded
	report "$T/s.html" "$R/s.bundle"
	probe "$T/s.html"
	window "$T/s.html"
	run q "$T/s.html" 'len((rep.get("programs") or {}).get("rows", []))'
	if [ "$output" -eq 0 ]; then
		# an older report (no programs): no empty table in their place
		run q "$T/s.html" '"programs" in p["ids"]'
		assert_output False
		return
	fi
	run q "$T/s.html" 'p["ids"]["programs"]["top"] < 800'
	assert_output True
	# the first five, by name, each with its count of processes
	run q "$T/s.html" '[r["program"] for r in rep["programs"]["rows"][:5] if not __import__("re").search(__import__("re").escape(r["program"]) + r".*\t" + str(r["processes"]) + r"\t", p["ids"]["programs"]["text"])]'
	assert_output "[]"
}

@test "a recorded bundle: the process tree shows a process's exec chain, and each exec's argv when the bundle has it" {
	chromium_setup
	recorded
	report "$T/s.html" "$R/s.bundle"
	probe "$T/s.html"
	# (exec env A=1 ls /): one process, two images
	run q "$T/s.html" '" ".join(p["ids"]["tree"]["text"].split())'
	assert_output --regexp 'exec chain: ([^ ]+ → )?env → ls'
	# argv of the last exec of every listed process, when recorded (1.4)
	# (as a shell reads it back: shlex.join)
	run q "$T/s.html" '[c["id"] for c in rep["cohort"] if c["exec"] and "argv" in c["exec"][-1] and " ".join(__import__("shlex").join(c["exec"][-1]["argv"]).split()) not in " ".join(p["ids"]["tree"]["text"].split())]'
	assert_output "[]"
}

@test "a recorded bundle at 1280 px: no horizontal scroll, no table wider than the page, every <details> opened" {
	chromium_setup
	recorded
	report "$T/s.html" "$R/s.bundle"
	probe "$T/s.html"
	window "$T/s.html"
	run q "$T/s.html" 'p["sw"] <= p["cw"]'
	assert_output True
	run q "$T/s.html" 'p["wide"]'
	assert_output "[]"
}

@test "per-process counters with estimates and a forced comparison at 1280 px: nothing wider than the page" {
	chromium_setup
	a=$(mk a minimal)
	b=$(mk b multiproc)
	report "$T/m.html" "$b"
	probe "$T/m.html"
	window "$T/m.html"
	run q "$T/m.html" '(p["sw"] <= p["cw"], p["wide"])'
	assert_output "(True, [])"
	pmuanalyze --force --html "$T/f.html" "$a" "$b" >/dev/null
	probe "$T/f.html"
	run q "$T/f.html" '(p["sw"] <= p["cw"], p["wide"])'
	assert_output "(True, [])"
}

@test "a recorded bundle: every strip chart has a value axis, time in ms or s and bytes in KiB, MiB or GiB on every tick" {
	chromium_setup
	recorded
	report "$T/s.html" "$R/s.bundle"
	probe "$T/s.html"
	run q "$T/s.html" 'len([c for c in p["charts"] if c["cls"] == "strip"])'
	[ "$output" -ge 8 ]
	run q "$T/s.html" '[c["label"] for c in p["charts"] if c["cls"] == "strip" and len(c["ticks"]) < 2]'
	assert_output "[]"
	# the unit of each metric, from the report, on each of its ticks
	run q "$T/s.html" '[(c["label"], t) for s in rep["repetitions"]["summary"] if s.get("status") == "ok" for c in p["charts"] if c["label"] == s["name"] + " per repetition" for t in c["ticks"] if not __import__("re").fullmatch({"ns": r"[0-9.]+ (ns|µs|ms|s)", "bytes": r"[0-9.]+ (B|KiB|MiB|GiB)"}.get(s["unit"], r"[0-9.]+"), t)]'
	assert_output "[]"
	run q "$T/s.html" '[c["ticks"] for c in p["charts"] if c["label"] == "wall per repetition"][0]'
	assert_output --regexp '^\["[0-9.]+ (ms|s)", "[0-9.]+ (ms|s)"'
}

@test "a recorded bundle: one self-contained file, nothing fetched while it renders" {
	chromium_setup
	recorded
	report "$T/s.html" "$R/s.bundle"
	run grep -Eio 'https?://|<script|src=|url\(|@import|<link|xlink:href' "$T/s.html"
	assert_failure
	probe "$T/s.html"
	run q "$T/s.html" 'p["fetched"]'
	assert_output 0
}

@test "an --ab pair at 1280x800: the verdict, then the comparability warnings, within the first screen" {
	needs_backend linux
	chromium_setup
	pmurec --ab none,light --repeat 3 -o "$T/ab" -- sh -c 'ls / >/dev/null; sleep 0.05' >/dev/null 2>&1
	report "$T/c.html" "$T/ab/none.bundle" "$T/ab/light.bundle"
	probe "$T/c.html"
	window "$T/c.html"
	run q "$T/c.html" 'p["ids"]["verdict"]["bottom"] <= 800 and p["ids"]["verdict"]["top"] < p["ids"]["run"]["top"]'
	assert_output True
	# the verdict names each compared metric once
	run q "$T/c.html" '[m["name"] for m in rep["comparison"]["metrics"] if m["n_a"] and m["n_b"] and m["name"] not in p["ids"]["verdict"]["text"]]'
	assert_output "[]"
	run q "$T/c.html" '" ".join(p["ids"]["verdict"]["text"].split())'
	assert_output --regexp '^Verdict comparable; [0-9]+ metrics compared: '
	# 3 repetitions a side: the weak-statistics warning, above the fold
	run q "$T/c.html" 'p["ids"]["warnings"]["text"]'
	assert_output --partial "fewer than 9 repetitions per side"
	run q "$T/c.html" 'p["ids"]["warnings"]["bottom"] <= 800'
	assert_output True
	# the comparison's own warnings the warnings section does not already
	# show are listed under the verdict, still in the first screen
	run q "$T/c.html" '"comparability-warnings" not in p["ids"] or (p["ids"]["comparability-warnings"]["top"] < 800 and p["ids"]["comparability-warnings"]["top"] > p["ids"]["verdict"]["top"])'
	assert_output True
	run q "$T/c.html" '(p["sw"] <= p["cw"], p["wide"])'
	assert_output "(True, [])"
}
