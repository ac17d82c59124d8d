#!/usr/bin/env bats
# pmuanalyze A B on variants of one interleaved campaign (spec 1.4,
# pmurec --variants), on bundles recorded one after the other, with a
# minimum effect, and with the host's load outside the cohort.
#
# Every bundle here is recorded by pmurec and valid, except where a test
# says otherwise (a run.json without host_load stands for a bundle
# recorded before spec 1.4).

load helpers

setup() {
	T=$BATS_TEST_TMPDIR
}

# record_variants DIR REPEAT NAME_A NAME_B CMD_A CMD_B: an interleaved
# variant campaign of two shell commands, DIR/NAME_A.bundle and
# DIR/NAME_B.bundle, both valid
record_variants() {
	local dir=$1 n=$2 a=$3 b=$4 ca=$5 cb=$6
	pmurec --repeat "$n" -o "$dir" --variants "$a,$b" -- sh -c "$ca" ::: sh -c "$cb"
	pmuvalidate -q "$dir/$a.bundle" && pmuvalidate -q "$dir/$b.bundle"
}

# field JSON EXPR: evaluate a Python expression over the report d
field() {
	$PY -c 'import json,sys
d = json.load(open(sys.argv[1])); c = d.get("comparison", {})
m = {x["name"]: x for x in c.get("metrics", [])}
print(eval(sys.argv[2]))' "$1" "$2"
}


# awk loops: CPU-bound, deterministic, no I/O
loop() { echo "awk 'BEGIN{for(i=0;i<$1;i++)s+=i}'"; }

@test "variants of one interleaved campaign are comparable although their commands differ" {
	needs_backend linux
	record_variants "$T/v" 4 base more "$(loop 300000)" "$(loop 330000)"
	run pmuanalyze "$T/v/base.bundle" "$T/v/more.bundle"
	assert_success
	assert_line "comparability: comparable"
	assert_line --regexp '^  variants of one interleaved campaign \([0-9a-f]+\): A is variant .base., B variant .more.; their commands differ by design$'
	assert_line --regexp '^  note +command \(argv\): A '
	refute_line --partial 'WARNING: A and B were recorded one after the other'
	pmuanalyze --json "$T/v/base.bundle" "$T/v/more.bundle" >"$T/r.json"
	run field "$T/r.json" 'c["comparable"], c["comparability"]["basis"], c["comparability"]["interleaved"], [x["refusing"] for x in c["differences"] if x["what"] == "command (argv)"]'
	assert_output "(True, 'variants', True, [False])"
	run schema_check "$T/r.json"
	assert_output "schema errors: 0"
	run pmuanalyze --csv "$T/v/base.bundle" "$T/v/more.bundle"
	assert_success
	assert_line --regexp '^comparability,variants,true,2,"?variants of one interleaved campaign '
	pmuanalyze --junit "$T/j.xml" "$T/v/base.bundle" "$T/v/more.bundle" >/dev/null
	run grep -c 'variants of one interleaved campaign' "$T/j.xml"
	assert_output 1
}

@test "two variants, B with twice the work: task-clock higher in B, the interval excluding 0" {
	needs_backend linux
	# The issue's case is +10% work.  On the shared 2-vCPU VM these tests
	# were written on (load average 15 to 22 from parallel builds), CPU
	# time itself moves by +-40% between identical runs (steal counts as
	# the task's CPU time on a VM), and +10% work (1.5M against 1.65M
	# iterations, 15 a side) was honestly "no significant difference
	# (cannot rule out -4.4% .. +12.6%)" in three campaigns of three,
	# +50% was missed in one campaign of three.  So twice the work, 11
	# repetitions a side, and up to three campaigns before failing.
	# task-clock carries the claim; wall, noisier still, must not be
	# called lower.
	for try in 1 2 3; do
		rm -rf "$T/v"
		record_variants "$T/v" 11 base more "$(loop 1000000)" "$(loop 2000000)"
		pmuanalyze --json "$T/v/base.bundle" "$T/v/more.bundle" >"$T/r.json"
		run field "$T/r.json" 'm["task-clock"]["verdict_code"] in ("higher", "higher-maybe-below-min-effect") and m["task-clock"]["ci_low_percent"] > 0'
		[ "$output" = True ] && break
		echo "# campaign $try: task-clock $(field "$T/r.json" 'm["task-clock"]["verdict"], m["task-clock"]["a_values"], m["task-clock"]["b_values"]')" >&3
	done
	assert_output True
	run field "$T/r.json" 'm["wall"]["verdict_code"] not in ("lower", "lower-maybe-below-min-effect")'
	assert_output True
	run pmuanalyze "$T/v/base.bundle" "$T/v/more.bundle"
	assert_success
	assert_line --regexp '^task-clock .* higher in B(, significant, but may be below the 2% minimum effect| by at least [0-9.]+%)$'
}

@test "an interleaved A/A pair: no practical or no significant difference, and a +5% gate passes" {
	needs_backend linux
	# At 95% a true "no difference" is still called significant now and
	# then: a second, independent campaign is run before failing.
	for try in 1 2; do
		rm -rf "$T/v"
		record_variants "$T/v" 9 a1 a2 "$(loop 600000)" "$(loop 600000)"
		pmuanalyze --json "$T/v/a1.bundle" "$T/v/a2.bundle" >"$T/r.json"
		run field "$T/r.json" 'all(m[k]["verdict_code"] in ("no-practical-difference", "no-significant-difference") for k in ("wall", "task-clock"))'
		[ "$output" = True ] && break
		echo "# campaign $try flagged a difference by chance" >&3
	done
	assert_output True
	run pmuanalyze --fail-if wall:+5% --fail-if task-clock:+5% "$T/v/a1.bundle" "$T/v/a2.bundle"
	assert_success
	assert_line --regexp '^  pass +wall:\+5%: '
}

@test "--fail-if on a variant campaign works without --force: exit 3 when the gate trips" {
	needs_backend linux
	# twice the work, up to three campaigns: see the test above
	for try in 1 2 3; do
		rm -rf "$T/v"
		record_variants "$T/v" 9 base more "$(loop 1000000)" "$(loop 2000000)"
		run pmuanalyze --fail-if task-clock:+5% "$T/v/base.bundle" "$T/v/more.bundle"
		[ "$status" -eq 3 ] && break
		echo "# campaign $try: exit $status" >&3
	done
	assert_failure 3
	refute_output --partial "not comparable"
	assert_line --regexp '^pmuanalyze: regression: task-clock: \+[0-9.]+% \(95% CI \+[0-9.]+% \.\. \+[0-9.]+%, p [0-9.]+\) against a threshold of \+5\.00%: crossed$'
	# the other way round, a speed-up does not trip an increase gate
	run pmuanalyze --fail-if task-clock:+5% "$T/v/more.bundle" "$T/v/base.bundle"
	assert_success
}

@test "a variant campaign's bundle against another campaign's with another command is still refused" {
	needs_backend linux
	record_variants "$T/v" 1 base more "$(loop 1000)" "$(loop 2000)"
	# B now from another campaign: different commands outside one variant campaign
	$PY - "$T/v/more.bundle/data/run.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1])); r["campaign"]["id"] = "0" * 32
json.dump(r, open(sys.argv[1], "w"), indent=2)
PYEOF
	rebag "$T/v/more.bundle"
	run pmuanalyze "$T/v/base.bundle" "$T/v/more.bundle"
	assert_failure 4
	assert_output --partial "command (argv): A"
	run pmuanalyze --force "$T/v/base.bundle" "$T/v/more.bundle"
	assert_success
	assert_line --partial "different commands, not variants of one campaign: not comparable"
}

@test "the same command recorded one after the other: compared, with a warning that host drift is not controlled" {
	needs_backend linux
	pmurec --repeat 4 -o "$T/a.bundle" -- sh -c "$(loop 20000)"
	pmurec --repeat 4 -o "$T/b.bundle" -- sh -c "$(loop 20000)"
	run pmuanalyze "$T/a.bundle" "$T/b.bundle"
	assert_success
	assert_line --regexp '^WARNING: A and B were recorded one after the other, not interleaved in one campaign: drift of the host .* is not controlled'
	assert_line "  the same command recorded one after the other, not interleaved in one campaign"
	pmuanalyze --json "$T/a.bundle" "$T/b.bundle" >"$T/r.json"
	run field "$T/r.json" 'c["comparability"]["basis"], c["comparability"]["interleaved"], any("host between the recordings" in w for w in c["comparability"]["warnings"]), any("host between the recordings" in w for w in d["warnings"])'
	assert_output "('sequential', False, True, True)"
}

@test "--min-effect: a change within it is no practical difference; the default and the source are in the report" {
	needs_backend linux
	pmurec --repeat 4 -o "$T/a.bundle" -- sh -c "$(loop 20000)"
	cp -r "$T/a.bundle" "$T/b.bundle"
	# the command's user CPU (run.json command_rusage) set to 100.0 ..
	# 100.3 ms in A and 1% more in B: every B above every A, so the change
	# is significant (exact U test p 0.029, the interval +0.7% .. +1.3%),
	# but within the default 2% minimum effect
	for s in a:100000000 b:101000000; do
		$PY - "$T/${s%%:*}.bundle" "${s#*:}" <<'PYEOF'
import glob, json, sys
ps = sorted(glob.glob(sys.argv[1] + "/data/run.json") + glob.glob(sys.argv[1] + "/data/repeats/*/run.json"))
for k, p in enumerate(ps):
    r = json.load(open(p))
    r["command_rusage"]["cpu_user_ns"] = int(sys.argv[2]) + k * 100000
    r["command_rusage"]["cpu_system_ns"] = 0
    json.dump(r, open(p, "w"), indent=2)
PYEOF
		rebag "$T/${s%%:*}.bundle"
	done
	run pmuanalyze "$T/a.bundle" "$T/b.bundle"
	assert_success
	assert_line "minimum effect 2% (default): a change whose 95% interval lies within it is no practical difference"
	assert_line --regexp '^command.cpu_user .* no practical difference \(the 95% interval lies within \+-2%; significant, but smaller than the minimum effect\)$'
	pmuanalyze --json "$T/a.bundle" "$T/b.bundle" >"$T/r.json"
	run field "$T/r.json" 'c["min_effect_percent"], c["min_effect_source"], m["command.cpu_user"]["significant"], m["command.cpu_user"]["verdict_code"]'
	assert_output "(2.0, 'default', True, 'no-practical-difference')"
	run pmuanalyze --min-effect 0.5% "$T/a.bundle" "$T/b.bundle"
	assert_success
	assert_line "minimum effect 0.5% (--min-effect): a change whose 95% interval lies within it is no practical difference"
	assert_line --regexp '^command.cpu_user .* higher in B by at least 0\.[5-9][0-9]*%$'
	# a gate is the user's own threshold: +0.5% is crossed whatever the minimum effect
	run pmuanalyze --fail-if command.cpu_user:+0.5% "$T/a.bundle" "$T/b.bundle"
	assert_failure 3
	assert_line --regexp '^pmuanalyze: regression: command.cpu_user: .*: crossed \(the threshold is below the 2% minimum effect: honoured as given\)$'
	for bad in x -1 101 2%% ''; do
		run pmuanalyze --min-effect "$bad" "$T/a.bundle" "$T/b.bundle"
		assert_failure 2
		assert_output --partial "--min-effect needs a percentage"
	done
	run pmuanalyze --min-effect 2 "$T/a.bundle"
	assert_failure 2
	assert_output --partial "compare two bundles"
}

# host_load BUNDLE OUTSIDE_PCT STEAL_PCT: give every repetition's run.json
# a host_load (spec 1.4) whose busy time is the command's own CPU plus
# OUTSIDE_PCT of the host's CPU time, and whose steal is STEAL_PCT of it
set_host_load() {
	$PY - "$@" <<'PYEOF'
import glob, json, sys
b, outside, steal = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
for p in glob.glob(b + "/data/run.json") + glob.glob(b + "/data/repeats/*/run.json"):
    r = json.load(open(p))
    # inside the run window (TIME-WINDOW), a round number so that the
    # shares below come out exact
    iv, cpus = (r["end_ns"] - r["start_ns"]) // 1000 * 1000, 2
    cap = iv * cpus
    own = r["command_rusage"]["cpu_user_ns"] + r["command_rusage"]["cpu_system_ns"]
    busy = own + int(cap * outside / 100)
    st = int(cap * steal / 100)
    r["host_load"] = {"scope": "system", "status": "ok", "source": "/proc/stat", "interval_ns": iv, "cpus": cpus,
                      "resolution_ns": 10000000, "busy_ns": busy, "steal_ns": st,
                      "idle_ns": max(0, cap - busy - st), "iowait_ns": 0, "recorder_cpu_ns": 0}
    json.dump(r, open(p, "w"), indent=2)
PYEOF
	rebag "$1"
	pmuvalidate -q "$1"
}

@test "host load outside the cohort: equal and low, no warning; steal and other load in B only, warned as host-wide" {
	needs_backend linux
	# Constructed values (a background spinner during B only would be a
	# timing test): an interleaved A/A campaign, then each repetition's
	# host_load written as pmurec (spec 1.4) records it.
	pmurec --ab light,light --repeat 4 -o "$T/aa" -- sh -c "$(loop 20000)"
	set_host_load "$T/aa/light.bundle" 5 0.5
	set_host_load "$T/aa/light-2.bundle" 5 0.5
	pmuanalyze --json "$T/aa/light.bundle" "$T/aa/light-2.bundle" >"$T/r.json"
	run field "$T/r.json" 'c["host_load"]["status"], c["host_load"]["scope"], c["host_load"]["estimate"], round(c["host_load"]["a"]["outside_busy_percent_median"], 3), round(c["host_load"]["b"]["steal_percent_median"], 3), [w for w in c["comparability"]["warnings"] if "host" in w]'
	assert_output "('ok', 'system', True, 5.0, 0.5, [])"
	run pmuanalyze "$T/aa/light.bundle" "$T/aa/light-2.bundle"
	assert_success
	assert_line "host load (system-wide, not the cohort's; estimates from /proc/stat clock ticks; medians)"
	assert_line "  A busy outside the cohort 5.0% of the host's CPU time, steal 0.5% (4 repetitions)"
	refute_line --partial "WARNING: host steal"

	set_host_load "$T/aa/light-2.bundle" 80 10
	run pmuanalyze "$T/aa/light.bundle" "$T/aa/light-2.bundle"
	assert_success
	assert_line --regexp "^WARNING: host steal time \(system-wide, estimate\) was 0\.5% of the host's CPU time in A and 10\.0% in B .* unequally between A and B$"
	assert_line --regexp "^WARNING: the host was busy outside the cohort for 5\.0% of its CPU time in A and 80\.0% in B \(system-wide estimate, the recorder's own CPU left out where recorded; .* unequally between A and B$"
	pmuanalyze --json "$T/aa/light.bundle" "$T/aa/light-2.bundle" >"$T/r.json"
	run field "$T/r.json" 'len([w for w in c["comparability"]["warnings"] if "host" in w]), "steal" in " ".join(d["warnings"])'
	assert_output "(2, True)"
	run schema_check "$T/r.json"
	assert_output "schema errors: 0"
	run pmuanalyze --csv "$T/aa/light.bundle" "$T/aa/light-2.bundle"
	assert_success
	assert_line "table,side,repetition,outside_busy_percent,steal_percent,cohort_cpu_source,scope,estimate"
	assert_line "host_load,A,1,5,0.5,command.cpu,system,true"
	assert_line "host_load,B,4,80,10,command.cpu,system,true"
}

@test "bundles without host load: the comparison says it is unknown, and warns of nothing it did not see" {
	needs_backend linux
	pmurec --ab light,light --repeat 2 -o "$T/aa" -- true
	$PY - "$T/aa" <<'PYEOF'
import glob, json, sys
for p in glob.glob(sys.argv[1] + "/*.bundle/data/run.json") + glob.glob(sys.argv[1] + "/*.bundle/data/repeats/*/run.json"):
    r = json.load(open(p)); r.pop("host_load", None); json.dump(r, open(p, "w"), indent=2)
PYEOF
	rebag "$T/aa/light.bundle"
	rebag "$T/aa/light-2.bundle"
	# a 1.4 run.json without host_load is invalid: it stands for an older bundle
	run pmuvalidate -q "$T/aa/light.bundle"
	assert_failure 1
	run pmuanalyze --allow-invalid "$T/aa/light.bundle" "$T/aa/light-2.bundle"
	assert_success
	assert_line "  host load n/a: host load recorded in neither A nor B: whether other load or steal differed between A and B is unknown"
	refute_line --partial "WARNING: host steal"
	refute_line --partial "WARNING: the host was busy"
}

@test "one bundle: the host's load is shown as host-wide, and a busy host or steal above its level is warned of" {
	needs_backend linux
	pmurec --repeat 2 -o "$T/one.bundle" -- sh -c "$(loop 20000)"
	set_host_load "$T/one.bundle" 5 0.5
	run pmuanalyze "$T/one.bundle"
	assert_success
	assert_line "  host load    system-wide, not the cohort's (estimates from /proc/stat clock ticks; medians): busy outside the cohort 5.0% of the host's CPU time, steal 0.5%"
	refute_line --partial "WARNING: host steal"
	refute_line --partial "WARNING: the host was busy"
	set_host_load "$T/one.bundle" 80 10
	run pmuanalyze "$T/one.bundle"
	assert_success
	assert_line "WARNING: host steal time (system-wide, estimate) was 10.0% of the host's CPU time (median; warned above 2%): the hypervisor took CPU time from this machine, which lengthens the cohort's times"
	assert_line --regexp "^WARNING: the host was busy outside the cohort for 80\.0% of its CPU time \(system-wide estimate"
	pmuanalyze --json "$T/one.bundle" >"$T/r.json"
	run field "$T/r.json" 'd["host_load"]["scope"], d["host_load"]["estimate"], d["host_load"]["status"], len(d["warnings"]) >= 2'
	assert_output "('system', True, 'ok', True)"
	run schema_check "$T/r.json"
	assert_output "schema errors: 0"
}
