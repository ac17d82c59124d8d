#!/usr/bin/env bats
# Nothing pmurec starts outlives it unasked: external collectors, what they
# start (also a helper that leaves their process group with setsid), the
# keeper that ends them, and the cohort; after kill -9 of pmurec, and when a
# collector ends or fails.  Every process of a test carries a marker in its
# environment (given to pmurec alone, so bats' own processes lack it).

load helpers
bats_require_minimum_version 1.5.0

HELLO='{"type":"hello","name":"sh","version":"1","schema":"events"}'
BYE='{"type":"bye","status":"no-events"}'

setup() {
	cd "$BATS_TEST_TMPDIR"
	MARK="t1250-$$-$BATS_TEST_NUMBER-$RANDOM$RANDOM"
	needs_backend linux
}

teardown() {
	# what the old code left: kill it, so that it does not run on for minutes
	local p
	for p in $(marked); do
		kill -9 "$p" 2>/dev/null || true
	done
}

# the pids of the live processes that carry this test's marker (a zombie
# has no environment left to read)
marked() {
	grep -lzxF "PMU_T1250=$MARK" /proc/[0-9]*/environ 2>/dev/null | sed 's,^/proc/,,; s,/environ$,,' || true
}

# "pid comm args" of each of them, for the assertions and their messages
left() {
	local p
	for p in $(marked); do
		printf '%s %s\n' "$p" "$({ tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null)"
	done
}

# wait_for SECONDS CONDITION: poll CONDITION every 0.1 s
wait_for() {
	local i
	for ((i = 0; i < $1 * 10; i++)); do
		eval "$2" && return 0
		sleep 0.1
	done
	return 1
}

# the number of marked processes whose command line matches an ERE
count() {
	left | grep -cE "$1" || true
}

# PDEATHSIG and the keeper's clean-up are asynchronous: give them 10 s
assert_none_left() {
	wait_for 10 '[ -z "$(marked)" ]' || true
	run left
	assert_output ""
}

# collector ARGS...: coll.sh starts a helper in its process group (sleep 301)
# and one that leaves it (setsid sleep 302), both holding its standard output;
# with "hello" it says hello, then it never reads its input (exec sleep 303)
collector() {
	cat >coll.sh <<EOF
#!/bin/sh
sleep 301 &
setsid sleep 302 &
[ "\$1" = hello ] && echo '$HELLO'
exec sleep 303
EOF
	chmod +x coll.sh
}

# rec ARGS...: pmurec in the background with the marker; pid in $P
rec() {
	env PMU_T1250="$MARK" pmurec "$@" >out 2>err 3>&- &
	P=$!
}

@test "kill -9 of pmurec while a collector starts leaves nothing running" {
	collector
	rec --collector-timeout 60000 --collector "exec:$PWD/coll.sh,quiet" -o k.bundle -- sleep 304
	wait_for 10 '[ "$(count "^[0-9]+ sleep 30[123]")" -eq 3 ]'
	kill -9 "$P"
	wait "$P" || true
	assert_none_left
}

@test "kill -9 of pmurec while the command runs leaves no collector, helper or cohort process" {
	collector
	rec --collector-timeout 60000 --collector "exec:$PWD/coll.sh,hello" -o k.bundle -- \
		sh -c 'setsid sleep 304 & exec sleep 305'
	wait_for 10 '[ "$(count "^[0-9]+ sleep 30[1-5]")" -eq 5 ]'
	run left
	assert_output --partial "sleep 305"
	kill -9 "$P"
	wait "$P" || true
	assert_none_left
}

@test "kill -9 of pmurec while it waits for a collector to end leaves nothing running" {
	collector
	rec --collector-timeout 60000 --collector "exec:$PWD/coll.sh,hello" -o k.bundle -- sh -c ': >ran'
	wait_for 10 '[ -e ran ] && [ "$(count "^[0-9]+ sh -c")" -eq 0 ]'
	sleep 0.3 # the collector's input is closed now; it does not notice
	run left
	assert_output --partial "sleep 303"
	kill -9 "$P"
	wait "$P" || true
	assert_none_left
}

@test "kill -9 of pmurec at any moment of a run leaves nothing running" {
	collector
	for d in 0 0.05 0.2 0.5 1 1.5 2.5; do
		rec --collector-timeout 1500 --collector "exec:$PWD/coll.sh,hello" -o "k$d.bundle" -- sleep 0.8
		sleep "$d"
		kill -9 "$P" 2>/dev/null || true
		wait "$P" || true
		assert_none_left
	done
}

@test "kill -9 of pmurec in mode none ends the command" {
	rec -m none -o n.bundle -- sleep 306
	wait_for 10 '[ "$(count "^[0-9]+ sleep 306")" -eq 1 ]'
	kill -9 "$P"
	wait "$P" || true
	assert_none_left
}

@test "a collector's setsid helper that holds its output is gone once the collector is failed" {
	cat >coll.sh <<EOF
#!/bin/sh
setsid sleep 307 &
echo '$HELLO'
cat >/dev/null
EOF
	chmod +x coll.sh
	# to files, not through run: a helper left holding stderr would hold bats
	rc=0
	env PMU_T1250="$MARK" pmurec --collector-timeout 1000 --collector "exec:$PWD/coll.sh" -o f.bundle -- true \
		>out 2>err 3>&- || rc=$?
	assert_equal "$rc" 125
	run cat err
	assert_output --partial "collector 'sh' failed"
	assert_output --partial "ended without a bye"
	run pmuvalidate f.bundle
	assert_failure 1
	assert_output --partial COLLECTOR-FAILED
	# pmurec has waited for the collector's keeper, which ended it all
	run left
	assert_output ""
}

@test "a well-behaved collector's setsid helper is ended with it, and the bundle is complete" {
	cat >coll.sh <<EOF
#!/bin/sh
setsid sleep 308 &
echo '$HELLO'
cat >/dev/null
echo '$BYE'
EOF
	chmod +x coll.sh
	SECONDS=0
	env PMU_T1250="$MARK" pmurec --collector-timeout 5000 --collector "exec:$PWD/coll.sh" -o c.bundle -- true \
		>out 2>err 3>&-
	[ "$SECONDS" -lt 5 ] # not held for a timeout by the helper
	run pmuvalidate c.bundle
	assert_success
	run left
	assert_output ""
}

@test "a collector that ends during the run takes its helpers with it" {
	cat >coll.sh <<EOF
#!/bin/sh
sleep 301 &
setsid sleep 302 &
echo '$HELLO'
while [ ! -e go ]; do sleep 0.05; done
EOF
	chmod +x coll.sh
	rec --collector-timeout 2000 --collector "exec:$PWD/coll.sh" -o e.bundle -- sleep 8
	wait_for 10 '[ "$(count "^[0-9]+ sleep 30[12]")" -eq 2 ]'
	: >go
	wait_for 4 '[ "$(count "^[0-9]+ (sleep 30[12]|/bin/sh .*coll.sh)")" -eq 0 ]' || true
	run count "^[0-9]+ (sleep 30[12]|/bin/sh .*coll.sh)"
	assert_output 0
	# while the command still runs
	run count "^[0-9]+ sleep 8"
	assert_output 1
	rc=0
	wait "$P" || rc=$?
	assert_equal "$rc" 125
	run cat err
	assert_output --partial "ended without a bye"
	assert_none_left
}

@test "a collector that says no hello in time is ended at once, with its helpers" {
	collector
	rec --collector-timeout 500 --collector "exec:$PWD/coll.sh,quiet" -o h.bundle -- sleep 8
	wait_for 10 '[ "$(count "^[0-9]+ sleep 8")" -eq 1 ]' # released after the timeout
	wait_for 3 '[ "$(count "^[0-9]+ (sleep 30[123]|/bin/sh .*coll.sh)")" -eq 0 ]' || true
	run count "^[0-9]+ (sleep 30[123]|/bin/sh .*coll.sh)"
	assert_output 0
	# while the command still runs
	run count "^[0-9]+ sleep 8"
	assert_output 1
	rc=0
	wait "$P" || rc=$?
	assert_equal "$rc" 125
	run cat err
	assert_output --partial "no hello within 500 ms"
	assert_none_left
}

@test "two collectors: a keeper holds nothing of the other collector's, both end at once" {
	# the second keeper is forked while the first collector's input is
	# open: if it kept that pipe, the first would wait out its timeout
	SECONDS=0
	run pmurec --collector-timeout 5000 --collector "exec:$PMU_BUILD/test-collector,ok" \
		--collector "exec:$PMU_BUILD/test-collector,ok" -o two.bundle -- true
	assert_success
	[ "$SECONDS" -lt 5 ]
	run pmuvalidate two.bundle
	assert_success
}

@test "a collector dies with its keeper (PR_SET_PDEATHSIG)" {
	collector
	rec --collector-timeout 60000 --collector "exec:$PWD/coll.sh,hello" -o d.bundle -- sleep 309
	wait_for 10 '[ "$(count "^[0-9]+ sleep 30[1239]")" -eq 4 ]'
	keeper=$(for p in $(marked); do grep -qx pmurec-keeper "/proc/$p/comm" 2>/dev/null && echo "$p"; done || true)
	[ -n "$keeper" ]
	kill -9 $keeper
	# the helpers were the keeper's to end; the collector goes by itself
	wait_for 10 '[ "$(count "^[0-9]+ sleep 303")" -eq 0 ]' || true
	run count "^[0-9]+ sleep 303"
	assert_output 0
}
