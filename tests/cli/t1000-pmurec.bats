#!/usr/bin/env bats
# pmurec records real commands: cohort, exit status, bounds, signals,
# provenance, capability probe. Every bundle is checked by pmuvalidate.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	needs_backend linux
	cd "$BATS_TEST_TMPDIR"
}

# jq-like: py 'expression using d' FILE
py() {
	$PY -c "import json,sys; d=json.load(open(sys.argv[1])); print(($1))" "$2"
}

# cpy 'expression using d' COHORT.jsonl: d is the cohort stream read by
# cohort_doc.load() (which fails the test when the stream breaks its rules)
cpy() {
	$PY -c "import sys; sys.path.insert(0, '$BATS_TEST_DIRNAME'); import json, cohort_doc; d=cohort_doc.load(sys.argv[1]); print(($1))" "$2"
}

# recs 'expression using r (the records of a JSON Lines file, header excluded)' FILE
recs() {
	$PY -c "import json,sys; r=[json.loads(l) for l in open(sys.argv[1]).read().splitlines()[1:]]; print(($1))" "$2"
}

@test "pmurec --help documents the options and exit codes" {
	run pmurec --help
	assert_success
	assert_output --partial "usage: pmurec [options] -o BUNDLE -- COMMAND"
	assert_output --partial "--max-duration MS"
	assert_output --partial "125 when pmurec"
}

@test "pmurec --version names the version and the spec" {
	run pmurec --version
	assert_success
	assert_output --regexp '^pmurec [0-9]+\.[0-9]+\.[0-9]+ \(spec 1\.8, revision '
}

@test "records sh, ls and sleep as incarnations with parents and exit codes" {
	run pmurec -o r.bundle -- sh -c 'ls / >/dev/null; sleep 0.1 & wait'
	assert_success
	run pmuvalidate r.bundle
	assert_success
	run cpy '" ".join("%s:%s:%s:%s" % (i["comm"], i.get("parent", "-"), i["exit"]["kind"], i["exit"].get("code")) for i in d["incarnations"])' r.bundle/data/cohort.jsonl
	assert_output "sh:-:exited:0 ls:i1:exited:0 sleep:i1:exited:0"
	run cpy '[e["path"] for i in d["incarnations"] for e in i["exec"]]' r.bundle/data/cohort.jsonl
	assert_output --regexp "'/usr/bin/(dash|bash)', '/usr/bin/ls', '/usr/bin/sleep'"
}

@test "the command's exit status is pmurec's and is recorded" {
	run pmurec -o r.bundle -- sh -c 'exit 7'
	assert_failure 7
	run py 'd["exit"]' r.bundle/data/run.json
	assert_output "{'kind': 'exited', 'code': 7}"
	run pmuvalidate -q r.bundle
	assert_success
}

@test "a command killed by a signal gives 128+N and a signaled exit" {
	run pmurec -o r.bundle -- sh -c 'kill -USR1 $$'
	assert_failure $((128 + 10))
	run py 'd["exit"]' r.bundle/data/run.json
	assert_output "{'kind': 'signaled', 'signal': 10}"
}

@test "a missing command exits 127 and leaves no bundle and no staging" {
	run -127 pmurec -o r.bundle -- nosuch-command-xyz
	assert_failure 127
	assert_output "pmurec: cannot run 'nosuch-command-xyz': No such file or directory"
	[ -z "$(ls -A)" ]
}

@test "a command that is not executable exits 126 and leaves no bundle" {
	printf 'x' >notexec
	run pmurec -o r.bundle -- ./notexec
	assert_failure 126
	assert_output --partial "Permission denied"
	[ ! -e r.bundle ]
}

@test "an existing bundle is kept unless --force; --force replaces it" {
	pmurec -m none -o r.bundle -- true
	run pmurec -o r.bundle -- true
	assert_failure 125
	assert_output --partial "already exists (use --force to replace it)"
	run pmurec --force -o r.bundle -- true
	assert_success
	run pmuvalidate -q r.bundle
	assert_success
}

@test "kill -9 of pmurec leaves nothing at the final path and kills the cohort" {
	pmurec -o k.bundle -- sh -c 'sleep 31; :' &
	pid=$!
	# the command line of sleep itself, not pmurec's or sh's
	for i in $(seq 50); do pgrep -f '^sleep 31$' >/dev/null && break; sleep 0.1; done
	pgrep -f '^sleep 31$'
	kill -9 "$pid"
	wait "$pid" || true
	[ ! -e k.bundle ]
	for i in $(seq 50); do pgrep -f '^sleep 31$' >/dev/null || break; sleep 0.1; done
	run pgrep -f '^sleep 31$'
	assert_failure
	# the next run in the same directory removes the stale staging area
	ls -A | grep -q '^\.k\.bundle\.pmu-staging\.'
	run pmurec -o k.bundle -- true
	assert_success
	run bash -c "ls -A | grep -c pmu-staging"
	assert_output 0
}

@test "SIGTERM to pmurec is forwarded; the bundle is written and marked interrupted" {
	pmurec -o s.bundle -- sleep 32 &
	pid=$!
	for i in $(seq 50); do pgrep -f '^sleep 32$' >/dev/null && break; sleep 0.1; done
	kill -TERM "$pid"
	rc=0
	wait "$pid" || rc=$?
	assert_equal "$rc" 143
	run py 'd["result"], d["exit"]' s.bundle/data/run.json
	assert_output "('interrupted', {'kind': 'signaled', 'signal': 15})"
	run pmuvalidate s.bundle
	assert_failure 1
	assert_output --partial "RESULT"
}

@test "a second SIGINT aborts without leaving a bundle" {
	pmurec -o a.bundle -- sh -c 'trap "" INT; sleep 33' &
	pid=$!
	for i in $(seq 50); do pgrep -f '^sleep 33$' >/dev/null && break; sleep 0.1; done
	kill -INT "$pid"
	sleep 0.3
	kill -INT "$pid"
	rc=0
	wait "$pid" || rc=$?
	assert_equal "$rc" 130
	[ ! -e a.bundle ]
	run bash -c "ls -A | grep -c pmu-staging"
	assert_output 0
}

@test "--max-duration stops the cohort and marks the bundle truncated" {
	run pmurec --max-duration 200 -o t.bundle -- sh -c 'sleep 30; echo never'
	assert_failure 143
	refute_output --partial never
	run py 'd["result"], d["result_reason"]' t.bundle/data/run.json
	assert_output "('truncated', '--max-duration 200 ms reached: the cohort was sent SIGTERM')"
	run pmuvalidate t.bundle
	assert_failure 1
}

@test "every incarnation's totals carry a status and a source; unread ones have no value" {
	run pmurec -o r.bundle -- sh -c 'head -c 100000 /dev/zero | wc -c >/dev/null'
	assert_success
	run cpy '[(i["comm"], i["resources"]["fields"]["read_bytes"]["status"], i["resources"].get("read_bytes", 0) >= (100000 if i["comm"] == "wc" else 0)) for i in d["incarnations"]]' r.bundle/data/cohort.jsonl
	assert_output --partial "('wc', 'ok', True)"
	run cpy 'all(("ok" == f["status"]) == (k in i["resources"]) for i in d["incarnations"] for k, f in i["resources"]["fields"].items())' r.bundle/data/cohort.jsonl
	assert_output True
}

@test "a parent is not charged for the bytes its children read" {
	run pmurec -o r.bundle -- sh -c 'head -c 1000000 /dev/zero >/dev/null'
	assert_success
	run cpy '[(i["comm"], i["resources"]["read_bytes"] >= 1000000) for i in d["incarnations"]]' r.bundle/data/cohort.jsonl
	assert_output "[('sh', False), ('head', True)]"
}

@test "mode none: only the command, with wait4 totals; byte counts unavailable with a reason" {
	run pmurec -m none -o n.bundle -- sh -c 'ls / >/dev/null'
	assert_success
	run pmuvalidate -q n.bundle
	assert_success
	run cpy 'len(d["incarnations"]), d["incarnations"][0]["resources"]["fields"]["read_bytes"]["status"], "cpu_user_ns" in d["incarnations"][0]["resources"]' n.bundle/data/cohort.jsonl
	assert_output "(1, 'unavailable', True)"
	run py '[(c["name"], c["requested"]) for c in d["collectors"]]' n.bundle/data/run.json
	assert_output "[('cohort', False), ('control', False), ('counting', False), ('sampling', False), ('syscalls', False), ('sched', False), ('probes', False), ('alloc', False)]"
}

@test "mode full: the syscalls and sched collectors run, or say why not and what to do" {
	run pmurec -m full -o f.bundle -- true
	assert_success
	run pmuvalidate -q f.bundle
	assert_success
	for c in syscalls sched; do
		run jq -r 'select(.event == "final") | if .status == "ok" then "ok" elif .status == "unavailable" and (.reason | length) > 0 and (.remedy | length) > 0 then "explained" else "bad \(.)" end' "f.bundle/data/collectors/$c/lifecycle.jsonl"
		assert_output --regexp '^(ok|explained)$'
	done
}

@test "provenance: executed images with size, SHA-256, build-id and DWARF producer; settings recorded" {
	# the shared objects are read from /proc/PID/maps at each exit event,
	# which only the ptrace follower stops at
	run pmurec --follower ptrace -o r.bundle -- ls /
	assert_success
	sum=$(sha256sum /usr/bin/ls | cut -d' ' -f1)
	run py '[(i["status"], i["sha256"], i["size_bytes"]) for i in d["images"] if i["path"] == "/usr/bin/ls" and i["role"] == "exec"]' r.bundle/data/provenance.json
	assert_output "[('ok', '$sum', $(stat -c %s /usr/bin/ls))]"
	bid=$(readelf -n /usr/bin/ls | awk '/Build ID/ {print $3}')
	run py '[i.get("build_id") for i in d["images"] if i["path"] == "/usr/bin/ls"]' r.bundle/data/provenance.json
	assert_output "['$bid']"
	run py 'any(i["role"] == "object" and "libc.so" in i["path"] for i in d["images"])' r.bundle/data/provenance.json
	assert_output True
	run pmurec -o g.bundle -- env ASAN_OPTIONS=detect_leaks=0 "$PMU_BUILD/test-marker"
	run py '[i.get("producer", "")[:5] for i in d["images"] if i["path"].endswith("/test-marker")]' g.bundle/data/provenance.json
	assert_output "['GNU C']"
	run py 'sorted(s["name"] for s in d["settings"])' r.bundle/data/provenance.json
	assert_output "['clocksource', 'cpufreq-governor', 'smt-active', 'turbo-disabled']"
}

@test "environment: nothing by default; --env-allow records names, secrets redacted" {
	run pmurec -o a.bundle -- true
	run py 'd["environment"]' a.bundle/data/provenance.json
	assert_output "{}"
	MY_API_TOKEN=hunter2 PLAIN=yes run pmurec --env-allow PLAIN --env-allow MY_API_TOKEN -o b.bundle -- true
	assert_success
	run py 'd["environment"]' b.bundle/data/provenance.json
	assert_output "{'PLAIN': 'yes', 'MY_API_TOKEN': '<redacted>'}"
	run grep -r hunter2 b.bundle
	assert_failure
}

@test "--seed is exported as PMUREC_SEED and recorded" {
	run pmurec --seed 42 -o s.bundle -- sh -c 'test "$PMUREC_SEED" = 42'
	assert_success
	run py 'd["seed"]' s.bundle/data/run.json
	assert_output 42
}

@test "threads are attributed to their process incarnation" {
	run pmurec -o t.bundle -- /usr/bin/python3 -c 'import threading; t=[threading.Thread(target=lambda: sum(range(10000))) for _ in range(3)]; [x.start() for x in t]; [x.join() for x in t]'
	assert_success
	run cpy '[(i["comm"], len(i["tids"]) >= 4, i["pid"] in i["tids"]) for i in d["incarnations"]]' t.bundle/data/cohort.jsonl
	assert_output "[('python3', True, True)]"
	run pmuvalidate -q t.bundle
	assert_success
}

@test "an archive output validates" {
	run pmurec -o r.bundle.tar.zst -- true
	assert_success
	run pmuvalidate r.bundle.tar.zst
	assert_success
}

@test "every document of a recorded bundle conforms to the JSON Schemas (python3-jsonschema)" {
	run pmurec -o r.bundle -- sh -c 'ls / >/dev/null'
	assert_success
	run $PY -c 'import json, os, sys, jsonschema
top = sys.argv[1]
# the schemas of the version the bundle declares (schema/ is the newest)
v = json.load(open("r.bundle/data/run.json"))["spec"]
cur = json.load(open(top + "/bundle-spec/schema/run.schema.json"))["properties"]["spec"]["const"]
sd = top + "/bundle-spec/schema/" + ("" if v == cur else v + "/")
docs = ["run", "capabilities", "provenance"] + (["cohort"] if os.path.exists("r.bundle/data/cohort.json") else [])
for n in docs:
    s = json.load(open(sd + "%s.schema.json" % n))
    jsonschema.Draft202012Validator(s).validate(json.load(open("r.bundle/data/%s.json" % n)))
streams = [("lifecycle", "r.bundle/data/collectors/cohort/lifecycle.jsonl")]
if not os.path.exists("r.bundle/data/cohort.json"):
    streams.append(("cohort", "r.bundle/data/cohort.jsonl"))
for n, f in streams:
    s = json.load(open(sd + "%s.schema.json" % n))
    for line in open(f):
        jsonschema.Draft202012Validator(s).validate(json.loads(line))
print("conform")' "$BATS_TEST_DIRNAME/../.."
	assert_output conform
}

@test "--probe reports every capability with status, and reasons for what is missing" {
	run pmurec --probe --json
	assert_success
	echo "$output" >p.json
	run py 'all(c["status"] == "ok" or (c.get("reason") and c.get("remedy")) for c in d["capabilities"])' p.json
	assert_output True
	run py 'sorted(c["name"] for c in d["capabilities"])' p.json
	assert_output --partial "'hardware-events'"
	assert_output --partial "'perf_event_paranoid'"
	assert_output --partial "'tracefs'"
	run pmurec --probe
	assert_success
	assert_output --partial "hardware-events"
}

@test "on this host, missing hardware counters are unavailable with the true reason" {
	run pmurec --probe --json
	echo "$output" >p.json
	echo "$output" >p.json
	run py '[c for c in d["capabilities"] if c["name"] == "hardware-events"][0]' p.json
	if [[ $output == *"'status': 'ok'"* ]]; then
		skip "this host has a hardware PMU: cycles opened"
	fi
	assert_output --partial "perf_event_open(cycles)"
	assert_output --partial "remedy"
}

@test "usage errors exit 2" {
	run pmurec -- true
	assert_failure 2
	assert_output --partial "no output bundle given"
	run pmurec -o x.bundle
	assert_failure 2
	run pmurec -m turbo -o x.bundle -- true
	assert_failure 2
	assert_output --partial "unknown mode 'turbo'"
	run pmurec --max-duration -5 -o x.bundle -- true
	assert_failure 2
	[ ! -e x.bundle ]
}

@test "an external collector's records land in the bundle, attributed to the cohort" {
	run pmurec --collector "exec:$PMU_BUILD/test-collector,ok" -o x.bundle -- sh -c 'sleep 0.05'
	assert_success
	run pmuvalidate x.bundle
	assert_success
	run bash -c "grep -o '\"event\":\"[a-z]*\"' x.bundle/data/collectors/test-collector/lifecycle.jsonl | cut -d'\"' -f4 | tr '\n' ' '"
	assert_output "requested probed opened attached stopped detached final "
	run bash -c "tail -n1 x.bundle/data/collectors/test-collector/events.jsonl"
	assert_output --regexp '"inc":"i1","pid":[0-9]+,"tid":[0-9]+,"name":"seen","ph":"i","value":1'
}

@test "the failing collector, run live: bundle written, pmurec exits 125, pmuvalidate rejects it as COLLECTOR-FAILED" {
	run pmurec --collector "exec:$PMU_BUILD/failing-collector" -o f.bundle -- sh -c 'sleep 0.05'
	assert_failure 125
	assert_output --partial "collector 'failing-collector' failed: killed by signal 6 (SIGABRT) before its bye"
	run pmuvalidate --json f.bundle
	assert_failure 1
	echo "$output" >r.json
	run ids r.json
	assert_output --partial COLLECTOR-FAILED
	run py 'd["result"], d["result_reason"]' f.bundle/data/run.json
	assert_output "('invalid', \"collector 'failing-collector' failed\")"
}

@test "a collector that hangs after the cohort ends is killed at the timeout and failed" {
	run timeout 60 pmurec --collector-timeout 300 --collector "exec:$PMU_BUILD/test-collector,hang" -o h.bundle -- true
	assert_failure 125
	assert_output --partial "did not exit within 300 ms after its input closed"
	run pmuvalidate h.bundle
	assert_failure 1
	assert_output --partial COLLECTOR-FAILED
}

@test "a collector that never says hello is failed; one that sends a malformed line is failed" {
	run pmurec --collector-timeout 300 --collector "exec:$PMU_BUILD/test-collector,nohello" -o a.bundle -- true
	assert_failure 125
	assert_output --partial "no hello within 300 ms"
	run pmurec --collector "exec:$PMU_BUILD/test-collector,malformed" -o b.bundle -- true
	assert_failure 125
	assert_output --partial "1 malformed line(s)"
	run pmuvalidate b.bundle
	assert_failure 1
	assert_output --partial MALFORMED
}

@test "a collector record about a process outside the cohort is left out and counted as dropped" {
	run pmurec --collector "exec:$PMU_BUILD/test-collector,stranger" -o s.bundle -- true
	run pmuvalidate s.bundle
	assert_failure 1
	assert_output --partial "dropped 1 records"
	[ ! -e s.bundle/data/collectors/test-collector/events.jsonl ]
}

@test "a collector path that cannot run is unavailable with the reason, and recording goes on" {
	run pmurec --collector exec:/nonexistent/collector -o u.bundle -- true
	assert_success
	run pmuvalidate -q u.bundle
	assert_success
	run bash -c "tail -n1 u.bundle/data/collectors/collector/lifecycle.jsonl"
	assert_output --partial '"status":"unavailable","reason":"cannot run '"'"'/nonexistent/collector'"'"': No such file or directory"'
}

@test "spans and marks sent through pmu/mark.h are recorded, attributed to their threads" {
	# (LeakSanitizer cannot run under ptrace: off for the workload of a SANITIZE build)
	run pmurec -o m.bundle -- env ASAN_OPTIONS=detect_leaks=0 "$PMU_BUILD/test-marker"
	assert_success
	run pmuvalidate m.bundle
	assert_success
	run recs '[(x["type"], x.get("id", x["name"]), x.get("parent")) for x in r]' m.bundle/data/spans.jsonl
	assert_output --partial "('mark', 'start', None)"
	assert_output --partial "('span', 'i1:inner-a', 'i1:work-a')"
	assert_output --partial "('span', 'i1:work-b', None)"
	assert_output --partial "('mark', 'warmup-end', None)"
	run recs 'len({x["tid"] for x in r if x["name"] == "work"})' m.bundle/data/spans.jsonl
	assert_output 2
}

@test "a span left open when the program ends makes the bundle invalid (MALFORMED)" {
	run pmurec -o o.bundle -- env ASAN_OPTIONS=detect_leaks=0 "$PMU_BUILD/test-marker" open
	assert_success
	run pmuvalidate o.bundle
	assert_failure 1
	assert_output --partial "MALFORMED"
	run grep -c "span 'dangling' begun and never ended" o.bundle/data/collectors/control/lifecycle.jsonl
	assert_output 1
}

@test "--delay marks the end of start-up; mode none gives no control channel" {
	run pmurec --delay 5 -o d.bundle -- sh -c 'sleep 0.1'
	assert_success
	run grep -c '"name":"pmurec:delay-end"' d.bundle/data/spans.jsonl
	assert_output 1
	run pmurec -m none -o n.bundle -- sh -c 'test -z "$PMUREC_CTL_FD"'
	assert_success
	run pmurec -m none --delay 5 -o x.bundle -- true
	assert_failure 2
	run pmurec -o c.bundle -- sh -c 'test -n "$PMUREC_CTL_FD"'
	assert_success
	run bash -c "tail -n1 c.bundle/data/collectors/control/lifecycle.jsonl"
	assert_output --partial '"status":"no-events"'
}

@test "--max-output-bytes stops the cohort, keeps nothing more and marks the bundle truncated" {
	run timeout 60 pmurec --max-output-bytes 100000 --collector "exec:$PMU_BUILD/test-collector,flood" -o f.bundle -- sleep 30
	# SIGTERM, or SIGKILL when the flood kept the recorder from letting
	# the SIGTERM through within the 2 s grace
	[[ $status -eq 143 || $status -eq 137 ]]
	assert_output --partial "--max-output-bytes 100000 reached"
	run pmuvalidate --json f.bundle
	echo "$output" >r.json
	run ids r.json
	assert_output "RESULT TRUNCATED"
	run bash -c "tail -n1 f.bundle/data/collectors/test-collector/events.jsonl"
	assert_output --partial '"type":"truncation"'
}

@test "--pid attaches to a running tree, records it, and detaches leaving it running" {
	sh -c 'while :; do ls / >/dev/null; sleep 0.05; done' &
	target=$!
	sleep 0.2
	run pmurec --max-duration 400 --pid "$target" -o a.bundle
	assert_success
	assert_output --partial "detached from the running tree on --max-duration"
	kill -0 "$target"
	kill "$target"
	run pmuvalidate a.bundle
	assert_success
	run cpy '(d["incarnations"][0]["pid"], d["incarnations"][0]["preexisting"], "end_ns" in d["incarnations"][0], d["incarnations"][0]["exit"]["kind"], any(i["comm"] == "ls" and not i["preexisting"] for i in d["incarnations"]))' a.bundle/data/cohort.jsonl
	assert_output "($target, True, False, 'unknown', True)"
	run py 'd["argv"][:2], d["result"]' a.bundle/data/run.json
	assert_output "(['sh', '-c'], 'complete')"
	run bash -c "tail -n1 a.bundle/data/collectors/control/lifecycle.jsonl"
	assert_output --partial "attached to a running process"
}

@test "--pid: usage errors and a process that cannot be traced" {
	run pmurec --pid 999999999 -o x.bundle
	assert_failure 2
	run pmurec -m none --pid $$ -o x.bundle
	assert_failure 2
	assert_output --partial "--pid needs --mode light or full"
	run pmurec --pid $$ -o x.bundle -- true
	assert_failure 2
	[ ! -e x.bundle ]
	if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
		sleep 5 &
		victim=$!
		W=$(mktemp -d /tmp/pmu-nobody.XXXXXX)
		chmod 777 "$W"
		run setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all -- "$PMU_BUILD/pmurec" --pid "$victim" -o "$W/x.bundle"
		kill "$victim"
		assert_failure 125
		assert_output --partial "cannot attach to thread $victim of $victim: Operation not permitted"
		[ ! -e "$W/x.bundle" ]
		rm -rf "$W"
	fi
}

@test "--repeat keeps each repetition on its own; --warmup runs unrecorded first" {
	run pmurec --repeat 3 --warmup 2 -o r.bundle -- sh -c 'echo x >>count; ls / >/dev/null'
	assert_success
	[ "$(wc -l <count)" -eq 5 ]
	run pmuvalidate r.bundle
	assert_success
	run py '(d["repeat"], d["repetition"], d["warmup"])' r.bundle/data/run.json
	assert_output "(3, 1, 2)"
	for k in 2 3; do
		run py '(d["repetition"], "repeat" in d)' "r.bundle/data/repeats/$k/run.json"
		assert_output "($k, False)"
		run cpy '[i["comm"] for i in d["incarnations"]]' "r.bundle/data/repeats/$k/cohort.jsonl"
		assert_output "['sh', 'ls']"
	done
	run py '(d["end_ns"] < json.load(open("r.bundle/data/repeats/2/run.json"))["start_ns"])' r.bundle/data/run.json
	assert_output True
}

@test "--ab runs the modes interleaved into one bundle per mode, with the campaign recorded" {
	run pmurec --ab none,light --repeat 2 -o ab -- true
	assert_success
	run pmuvalidate ab/none.bundle ab/light.bundle
	assert_success
	run py '[(json.load(open(p))["campaign"]["position"], json.load(open(p))["mode"]) for p in ["ab/none.bundle/data/run.json", "ab/light.bundle/data/run.json", "ab/none.bundle/data/repeats/2/run.json", "ab/light.bundle/data/repeats/2/run.json"]]' /dev/stdin <<<'{}'
	assert_output "[(0, 'none'), (1, 'light'), (2, 'none'), (3, 'light')]"
	run py 'len({json.load(open("ab/%s.bundle/data/run.json" % m))["campaign"]["id"] for m in ("none", "light")})' /dev/stdin <<<'{}'
	assert_output 1
	run pmurec --ab none -o ab3 -- true
	assert_failure 2
	run pmurec --ab none,bogus -o ab3 -- true
	assert_failure 2
	run pmurec --ab none,light,full,none,light -o ab3 -- true
	assert_failure 2
}

@test "--ab with a mode given twice is an A/A campaign: MODE.bundle and MODE-2.bundle, interleaved" {
	run pmurec --ab light,light --repeat 2 -o aa -- true
	assert_success
	run pmuvalidate aa/light.bundle aa/light-2.bundle
	assert_success
	run py '[json.load(open(p))["campaign"]["position"] for p in ["aa/light.bundle/data/run.json", "aa/light-2.bundle/data/run.json", "aa/light.bundle/data/repeats/2/run.json", "aa/light-2.bundle/data/repeats/2/run.json"]]' /dev/stdin <<<'{}'
	assert_output "[0, 1, 2, 3]"
}

@test "a recorder killed at once never lets the command run unobserved" {
	for i in 1 2 3 4 5; do
		pmurec -o "q$i.bundle" -- sleep 34 &
		kill -9 $!
		wait $! || true
	done
	sleep 0.5
	run pgrep -f '^sleep 34$'
	assert_failure
	[ -z "$(ls -d q*.bundle 2>/dev/null)" ]
}
