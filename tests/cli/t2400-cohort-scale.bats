#!/usr/bin/env bats
# The cohort at scale (issue 12): 100,000 incarnations, wide and as a
# 100,000-deep parent chain, in the stream of 1.3 (cohort.jsonl) and in the
# document of 1.2 (cohort.json), generated here by `mkfixture cohort`,
# validate correctly, in bounded time and under 64 MiB of peak RSS.  The
# `timeout 120` guards against quadratic work (the old validator took 239 s
# on the chain, 38 s and 304 MiB on the wide 1.2 cohort), it is not a
# benchmark: bench/cohort measures.

load helpers

# scale NAME MKFIXTURE-ARGS...: write the bundle, validate it under the
# time guard; $rss is the peak RSS in KiB
scale() {
	[ -x /usr/bin/time ] || skip "GNU time (/usr/bin/time) is not installed"
	b=$BATS_TEST_TMPDIR/$1
	shift
	mkfixture cohort "$b" --incarnations 100000 "$@" >/dev/null
	run timeout 120 /usr/bin/time -f '%M' -o "$BATS_TEST_TMPDIR/rss" pmuvalidate "$b"
	rss=$(tail -1 "$BATS_TEST_TMPDIR/rss")
}

@test "100,000 incarnations in a cohort stream (1.3) validate, under 64 MiB" {
	scale wide13
	assert_success
	assert_output --partial "valid (spec 1.8, 5 payload files"
	[ "$(grep -c '"type":"incarnation"' "$b/data/cohort.jsonl")" -eq 100000 ]
	echo "peak RSS $rss KiB"
	rss_under "$rss"
}

@test "a 100,000-deep parent chain in a cohort stream (1.3) validates, under 64 MiB" {
	scale chain13 --chain
	assert_success
	assert_output --partial "valid (spec 1.8, 5 payload files"
	echo "peak RSS $rss KiB"
	rss_under "$rss"
}

@test "100,000 incarnations in a cohort.json (1.2) validate, in flat memory" {
	scale wide12 --spec 1.2
	assert_success
	assert_output --partial "valid (spec 1.2, 5 payload files"
	echo "peak RSS $rss KiB"
	rss_under "$rss"
}

@test "a 100,000-deep parent chain in a cohort.json (1.2) validates, in linear time" {
	scale chain12 --chain --spec 1.2
	assert_success
	assert_output --partial "valid (spec 1.2, 5 payload files"
	echo "peak RSS $rss KiB"
	rss_under "$rss"
}

@test "the 100,000-deep chain with a cycle at its bottom is refused (1.2), in linear time" {
	b=$BATS_TEST_TMPDIR/cyc
	mkfixture cohort "$b" --incarnations 100000 --chain --spec 1.2 >/dev/null
	# the root's parent becomes the deepest incarnation: no root is left
	# without one, and the chain is a ring of 100,000
	$PY - "$b/data/cohort.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["incarnations"][0]["parent"] = "i100000"
d["root"] = "i1"
json.dump(d, open(sys.argv[1], "w"), indent=2)
EOF
	rebag "$b"
	run timeout 120 pmuvalidate "$b"
	assert_failure 1
	assert_output --partial "root incarnation 'i1' has a parent"
}

@test "the 100,000-deep chain whose middle points back down is refused (1.2): a cycle, found in linear time" {
	b=$BATS_TEST_TMPDIR/cyc2
	mkfixture cohort "$b" --incarnations 100000 --chain --spec 1.2 >/dev/null
	$PY - "$b/data/cohort.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["incarnations"][50000]["parent"] = "i100000"
json.dump(d, open(sys.argv[1], "w"), indent=2)
EOF
	rebag "$b"
	run timeout 120 pmuvalidate --json "$b"
	assert_failure 1
	echo "$output" >"$BATS_TEST_TMPDIR/r.json"
	run ids "$BATS_TEST_TMPDIR/r.json"
	assert_output COHORT
	run pmuvalidate "$b"
	assert_output --partial "is its own ancestor"
}

@test "COHORT (1.3): more than PMU_COHORT_MAX_INCARNATIONS (262144) incarnations are refused, once, in flat memory" {
	[ -x /usr/bin/time ] || skip "GNU time (/usr/bin/time) is not installed"
	b=$BATS_TEST_TMPDIR/over
	mkfixture cohort "$b" --incarnations 262145 >/dev/null
	run timeout 120 /usr/bin/time -f '%M' -o "$BATS_TEST_TMPDIR/rss" pmuvalidate "$b"
	assert_failure 1
	assert_output --partial "error   COHORT             data/cohort.jsonl:1048576: more than 262144 incarnations: the limit of spec 1.8"
	assert_output --partial "INVALID (1 error)"
	rss_under "$(tail -1 "$BATS_TEST_TMPDIR/rss")"
}
