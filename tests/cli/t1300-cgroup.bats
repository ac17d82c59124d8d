#!/usr/bin/env bats
# The cohort's cgroup v2 leaf (backends/linux/cgroup.c), driven for real by
# the cg-smoke helper: created under the recorder's own cgroup, entered by
# a child before exec, read at start and end, removed at the end, also when
# the cohort leaves a process behind or a recorder died without cleaning up.

load helpers

setup() {
	needs_backend linux
	[ "$(id -u)" -eq 0 ] || skip "needs root to create cgroups"
	CG2=$(findmnt -n -t cgroup2 -o TARGET 2>/dev/null | head -n 1)
	[ -n "$CG2" ] || skip "no cgroup2 hierarchy is mounted"
	grep -q '^0::/' /proc/self/cgroup || skip "this process has no cgroup v2 path"
	SMOKE=$PMU_BUILD/cg-smoke
	T= ROOT_ENABLED= OTHER=
}

teardown() {
	nobody_teardown
	if [ -n "${OTHER:-}" ]; then
		kill "$OTHER" 2>/dev/null
		wait "$OTHER" 2>/dev/null
	fi
	if [ -n "$T" ] && [ -d "$T" ]; then
		for d in "$T"/*/; do
			[ -d "$d" ] || continue
			echo 1 >"$d/cgroup.kill" 2>/dev/null
			sleep 0.1
			rmdir "$d"
		done
		rmdir "$T"
	fi
	if [ -n "$ROOT_ENABLED" ]; then
		echo "-$ROOT_ENABLED" >"$CG2/cgroup.subtree_control"
	fi
}

# the value of the output line "WORD value"
field() {
	sed -n "s/^$1 //p" <<<"$output" | head -n 1
}

@test "the cohort's cgroup counts its CPU time and is gone after destroy" {
	run "$SMOKE" run
	assert_success
	assert_line "entered yes"
	assert_line "exit 0"
	assert_line "cohort-file cpu.stat ok"
	assert_line --regexp '^cohort-row cpu\.stat usage_ns [1-9][0-9]* ns counter$'
	assert_line --regexp '^usage_grew yes [1-9][0-9]* ns$'
	assert_line "destroyed yes"
	assert_line "gone yes"
	leaf=$(field leaf)
	[ -n "$leaf" ]
	[ ! -e "$leaf" ]
}

@test "every cohort file is ok or says why not and how to get it; rows are numbers" {
	run "$SMOKE" run
	assert_success
	files=$(grep -E '^cohort-file ' <<<"$output")
	rows=$(grep -E '^cohort-row ' <<<"$output")
	[ -n "$files" ]
	[ -n "$rows" ]
	# no file line that is neither ok nor explained
	run grep -vE '^cohort-file [a-z.]+ (ok|unavailable reason: .+ \| remedy: .+|failed reason: .+)$' <<<"$files"
	assert_failure
	# never a negative or wrapped number: a value with its unit and kind, or a failure
	run grep -vE '^cohort-row [a-z.]+ [a-z_.]+ ([0-9]{1,19} (ns|bytes|count) (counter|gauge)|failed: .+)$' <<<"$rows"
	assert_failure
}

@test "the leaf's directory fd counts task-clock with PERF_FLAG_PID_CGROUP" {
	if awk -F: '$1 != 0 && $2 ~ /(^|,)perf_event(,|$)/' /proc/self/cgroup | grep -q .; then
		skip "perf_event is bound to a cgroup v1 hierarchy"
	fi
	run "$SMOKE" run
	assert_success
	assert_line --regexp '^perf-cgroup ok task-clock [1-9][0-9]* ns on [1-9][0-9]* cpus$'
}

@test "a leaf left by a killed recorder is removed by the next create" {
	run "$SMOKE" stale
	assert_success
	stale=$(field leaf)
	[ -d "$stale" ]
	run "$SMOKE" create
	assert_success
	assert_output --partial "removed stale leaf '${stale##*/}'"
	[ ! -e "$stale" ]
	[ ! -e "$(field leaf)" ]
}

@test "destroy kills what the cohort left behind and removes the leaf" {
	run "$SMOKE" leave
	assert_success
	assert_line "left-behind 1"
	assert_line --regexp '^killed [0-9]+ yes$'
	assert_line "gone yes"
	[ ! -e "$(field leaf)" ]
	run pgrep -f '^sleep 1307$'
	assert_failure
}

@test "as nobody, create is refused as unsupported with the reason and a remedy" {
	nobody_setup
	cp "$SMOKE" "$W/cg-smoke"
	chmod 755 "$W" "$W/cg-smoke"
	run as_nobody "$W/cg-smoke" create
	assert_failure 2
	assert_line --regexp '^error UNSUPPORTED: .*[Pp]ermission'
	assert_line "remedy run as root, or under a delegated cgroup: systemd-run --user --scope -p Delegate=yes pmurec ..."
}

# test_parent: a fresh cgroup T below the cgroup2 root that has a domain
# controller $ctrl available (enabled in the root for the test if need be)
test_parent() {
	# a controller that cgroup v2 has (not bound to v1), cheap ones first
	local avail c
	avail=$(cat "$CG2/cgroup.controllers")
	ctrl=
	for c in pids hugetlb memory io; do
		if [[ " $avail " == *" $c "* ]]; then ctrl=$c; break; fi
	done
	[ -n "$ctrl" ] || skip "no domain controller is on cgroup v2 here (cgroup.controllers: '$avail')"
	if [[ " $(cat "$CG2/cgroup.subtree_control") " != *" $ctrl "* ]]; then
		echo "+$ctrl" >"$CG2/cgroup.subtree_control"
		ROOT_ENABLED=$ctrl
	fi
	T=$(mktemp -u "$CG2/pmutest.XXXXXX")
	mkdir "$T"
}

@test "alone in its cgroup, the recorder steps aside to enable a controller and steps back" {
	test_parent
	run sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" --want "$3" run' sh "$T" "$SMOKE" "$ctrl"
	assert_success
	assert_line "controllers $ctrl"
	assert_output --partial "enabled '$ctrl' in '$T/cgroup.subtree_control', moving the recorder into a sibling leaf"
	assert_line "gone yes"
	# back where it started, the parent as it was
	assert_line "self-cgroup ${T#"$CG2"}"
	[ -z "$(cat "$T/cgroup.subtree_control")" ]
	[ -z "$(find "$T" -mindepth 1 -type d)" ]
}

@test "not alone in its cgroup, the recorder moves no one and says why the controller is off" {
	test_parent
	sh -c 'echo $$ >"$1/cgroup.procs" && exec sleep 1308' sh "$T" &
	OTHER=$!
	for _ in 1 2 3 4 5 6 7 8 9 10; do grep -qx "$OTHER" "$T/cgroup.procs" && break; sleep 0.1; done
	run sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" --want "$3" run' sh "$T" "$SMOKE" "$ctrl"
	assert_success
	assert_line "controllers "
	assert_output --partial "$ctrl: not enabled in '$T': it has member processes besides the recorder"
	assert_line "gone yes"
	assert_line "self-cgroup ${T#"$CG2"}"
	run cat "$T/cgroup.procs"
	assert_output "$OTHER"
	[ -z "$(cat "$T/cgroup.subtree_control")" ]
	[ -z "$(find "$T" -mindepth 1 -type d)" ]
}
