#!/usr/bin/env bats
# Regressions found by review: hangs, lost signals, odd names, reused ids.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	needs_backend linux
	cd "$BATS_TEST_TMPDIR"
}

hello_collector() { # a collector script: hello after $1 s, helpers per $2
	printf '#!/bin/sh\nsleep %s\necho %s\n%s\ncat >/dev/null\necho %s\n' "$1" \
		"'{\"type\":\"hello\",\"name\":\"sh\",\"version\":\"1\",\"schema\":\"events\"}'" "$2" \
		"'{\"type\":\"bye\",\"status\":\"no-events\"}'" >coll.sh
	chmod +x coll.sh
}

@test "a signal to the command before its exec does not deadlock the recorder" {
	hello_collector 1 ""
	timeout 30 pmurec -o h.bundle --collector "exec:$PWD/coll.sh" -- echo ran &
	p=$!
	sleep 0.4
	kill -WINCH $(pgrep -P "$p" -x pmurec) 2>/dev/null || true
	rc=0
	wait "$p" || rc=$?
	assert_equal "$rc" 0
	run pmuvalidate h.bundle
	assert_success
}

@test "a command that stops itself stays stopped until SIGCONT, as untraced" {
	pmurec -o s.bundle -- sh -c 'kill -STOP $$; echo resumed >out' &
	p=$!
	sleep 0.5
	[ ! -e out ]
	pkill -CONT -f '^sh -c kill -STOP'
	wait "$p"
	[ "$(cat out)" = resumed ]
	run pmuvalidate s.bundle
	assert_success
}

@test "a collector's helper that holds its output does not hold the recorder" {
	hello_collector 0 "sleep 36 &"
	SECONDS=0
	run pmurec --collector-timeout 1000 --collector "exec:$PWD/coll.sh" -o c.bundle -- true
	assert_success
	[ "$SECONDS" -lt 5 ]
	run pgrep -f '^sleep 36$'
	assert_failure
}

@test "mode none escalates to SIGKILL when SIGTERM is ignored" {
	SECONDS=0
	run pmurec -m none --max-duration 300 -o d.bundle -- sh -c 'trap "" TERM; while :; do sleep 0.1; done'
	assert_failure 137
	[ "$SECONDS" -lt 6 ]
}

@test "warm-up runs are bounded by --max-duration too" {
	SECONDS=0
	run pmurec --warmup 1 --max-duration 300 -o w.bundle -- sleep 5
	[ "$SECONDS" -lt 5 ]
}

@test "a signal during --repeat ends the recording: the last repetition says interrupted, exit 128+N" {
	pmurec --repeat 5 -o r.bundle -- sleep 0.4 &
	p=$!
	sleep 0.6
	kill -INT "$p"
	rc=0
	wait "$p" || rc=$?
	assert_equal "$rc" 130
	run pmuvalidate r.bundle
	assert_failure 1
	assert_output --partial "RESULT"
	assert_output --partial "interrupted"
	run /usr/bin/python3 -c 'import json; print(json.load(open("r.bundle/data/run.json"))["repeat"] < 5)'
	assert_output True
}

@test "--pid refuses pmurec's own ancestors and skips zombies" {
	run timeout 10 pmurec --pid $$ -o self.bundle
	assert_failure 2
	assert_output --partial "cannot record itself"
	/usr/bin/python3 -c 'import os, time
if os.fork() == 0:
    os._exit(0)
time.sleep(1.5)' &
	tp=$!
	sleep 0.5
	run timeout 20 pmurec -o z.bundle --pid "$tp" --collector "exec:$PMU_BUILD/test-collector,ok"
	assert_success
	run pmuvalidate z.bundle
	assert_success
}

@test "names that are not UTF-8 are kept, marked with U+FFFD, and the bundle validates" {
	cp /bin/true "./$(printf 'tr\377ue')"
	cp /bin/true ./ääääääää
	run pmurec -o a.bundle -- "./$(printf 'tr\377ue')"
	assert_success
	run pmurec -o b.bundle -- ./ääääääää
	assert_success
	run pmuvalidate a.bundle b.bundle
	assert_success
	run grep -c 'tr\\ufffdue\|tr�ue' a.bundle/data/cohort.jsonl
	assert_output --regexp '^[1-9]'
}

@test "a span id used again is a new span; a parent ending before its child is malformed" {
	cat >reuse.c <<'SRC'
#include <string.h>
#include <unistd.h>
#include "pmu/mark.h"
int main(int argc, char **argv)
{
	for (int i = 0; i < 2; i++) {
		pmu_span_begin("req", "handle", NULL);
		pmu_span_begin("x", "inner", "req");
		usleep(1000);
		pmu_span_end("x");
		pmu_span_end("req");
	}
	if (argc > 1) {
		pmu_span_begin("p", "parent", NULL);
		pmu_span_begin("c", "child", "p");
		pmu_span_end("p");
		pmu_span_end("c");
	}
	return 0;
}
SRC
	cc -I "$BATS_TEST_DIRNAME/../../include" reuse.c -o reuse
	run pmurec -o r.bundle -- ./reuse
	assert_success
	run pmuvalidate r.bundle
	assert_success
	run grep -c '"id":"i1:req#2"' r.bundle/data/spans.jsonl
	assert_output 1
	run pmurec -o p.bundle -- ./reuse parent-first
	run pmuvalidate p.bundle
	assert_failure 1
	assert_output --partial MALFORMED
	refute_output --partial SPAN-NESTING
}

@test "BAG-INFO: a continued value of a label the spec reads is refused" {
	b=$(mk b.bundle minimal)
	sed -i 's/^PMU-Spec-Version: \(1\.[0-9]*\)$/PMU-Spec-Version: \1\n  and more/' "$b/bag-info.txt"
	rebag "$b"
	run pmuvalidate "$b"
	assert_failure 1
	assert_output --partial "'PMU-Spec-Version' must be on one line"
}
