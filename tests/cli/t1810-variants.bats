#!/usr/bin/env bats
# pmurec --variants: several commands recorded interleaved (A B A B ...),
# one bundle each, one campaign (spec 1.4: campaign kind, variants,
# variant); the usage errors it refuses with exit 2.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# py 'expression using d (a JSON document)' FILE
py() {
	$PY -c "import json,sys; d=json.load(open(sys.argv[1])); print(($1))" "$2"
}

# runs BUNDLE: 'position argv' of each repetition's run.json
runs() {
	$PY -c 'import json, os, sys
b = sys.argv[1]
k = 1
while True:
    p = os.path.join(b, "data", "run.json") if k == 1 else os.path.join(b, "data", "repeats", str(k), "run.json")
    if not os.path.exists(p): break
    d = json.load(open(p))
    print(d["campaign"]["position"], " ".join(d["argv"]))
    k += 1' "$1"
}

@test "--variants a,b --repeat 3: two bundles, each with its own argv, positions interleaved, one campaign, both valid" {
	needs_backend linux
	run pmurec -o v --repeat 3 --variants a,b -- sh -c 'echo a >>log' ::: sh -c 'echo b >>log; true'
	assert_success
	run pmuvalidate v/a.bundle v/b.bundle
	assert_success
	run runs v/a.bundle
	assert_output "0 sh -c echo a >>log
2 sh -c echo a >>log
4 sh -c echo a >>log"
	run runs v/b.bundle
	assert_output "1 sh -c echo b >>log; true
3 sh -c echo b >>log; true
5 sh -c echo b >>log; true"
	# the commands really ran in that order
	run cat log
	assert_output "a
b
a
b
a
b"
	run py '(d["campaign"]["kind"], d["campaign"]["variants"], d["campaign"]["variant"], d["campaign"]["modes"], d["mode"])' v/b.bundle/data/repeats/2/run.json
	assert_output "('variants', ['a', 'b'], 'b', ['light', 'light'], 'light')"
	ids=$(for f in v/a.bundle/data/run.json v/a.bundle/data/repeats/3/run.json v/b.bundle/data/run.json v/b.bundle/data/repeats/2/run.json; do py 'd["campaign"]["id"]' "$f"; done | sort -u | wc -l)
	[ "$ids" -eq 1 ]
}

@test "--variants with three commands in mode none: NAME.bundle each, A B C A B C" {
	needs_backend linux
	run pmurec -m none -o v --repeat 2 --variants x.1,y_2,z-3 -- sh -c 'echo x >>log' ::: sh -c 'echo y >>log' ::: sh -c 'echo z >>log'
	assert_success
	run pmuvalidate v/x.1.bundle v/y_2.bundle v/z-3.bundle
	assert_success
	run cat log
	assert_output "x
y
z
x
y
z"
	run py '(d["mode"], d["campaign"]["position"], d["campaign"]["variant"])' v/z-3.bundle/data/repeats/2/run.json
	assert_output "('none', 5, 'z-3')"
}

@test "--variants with --warmup runs each command N times first, unrecorded" {
	needs_backend linux
	run pmurec -o v --warmup 1 --variants a,b -- sh -c 'echo a >>log' ::: sh -c 'echo b >>log'
	assert_success
	run cat log
	assert_output "a
b
a
b"
	run py 'd["warmup"]' v/a.bundle/data/run.json
	assert_output 1
}

@test "an --ab campaign's run.json says kind modes and names no variants" {
	needs_backend linux
	run pmurec --ab none,light -o ab -- true
	assert_success
	run py '(d["campaign"]["kind"], "variants" in d["campaign"], "variant" in d["campaign"])' ab/light.bundle/data/run.json
	assert_output "('modes', False, False)"
}

@test "without --variants, ':::' is an argument like any other" {
	needs_backend linux
	run pmurec -o r.bundle -- echo a ::: b
	assert_success
	assert_output "a ::: b"
	run py 'd["argv"]' r.bundle/data/run.json
	assert_output "['echo', 'a', ':::', 'b']"
	run py '"campaign" in d' r.bundle/data/run.json
	assert_output False
}

# usage ARGS...: pmurec refuses with exit 2, says why, and writes nothing
usage() {
	run pmurec -o v "$@"
	assert_failure 2
	[ ! -e v ] || { ls -la v; fail "pmurec wrote '$BATS_TEST_TMPDIR/v' on a usage error"; }
}

@test "--variants: more names than commands, or fewer, is a usage error" {
	usage --variants a,b -- true
	assert_output --partial "--variants names 2 variants but 1 command was given"
	usage --variants a,b -- true ::: true ::: true
	assert_output --partial "--variants names 2 variants but 3 commands were given"
}

@test "--variants: a name that is not [A-Za-z0-9._-]+, or empty, is a usage error" {
	usage --variants a/b,c -- true ::: true
	assert_output --partial "'a/b' is not a variant name"
	usage --variants 'a,,b' -- true ::: true ::: true
	assert_output --partial "'' is not a variant name"
	usage --variants 'a, b' -- true ::: true
	assert_output --partial "' b' is not a variant name"
	usage --variants "a,$(printf 'x%.0s' {1..65})" -- true ::: true
	assert_output --partial "is not a variant name"
}

@test "--variants: a name given twice is a usage error" {
	usage --variants a,a -- true ::: true
	assert_output --partial "the name 'a' is given twice"
}

@test "--variants: one name only is a usage error" {
	usage --variants a -- true
	assert_output --partial "--variants needs at least two names"
}

@test "--variants: an empty command is a usage error" {
	usage --variants a,b -- ::: true
	assert_output --partial "command 1 is empty"
	usage --variants a,b -- true :::
	assert_output --partial "command 2 is empty"
	usage --variants a,b,c -- true ::: ::: true
	assert_output --partial "command 2 is empty"
}

@test "--variants with --ab, or with --pid, is a usage error" {
	usage --ab none,light --variants a,b -- true ::: true
	assert_output --partial "give either --ab"
	usage --variants a,b --pid $$
	assert_output --partial "takes no --repeat, --warmup, --ab or --variants"
}

@test "pmuvalidate: a campaign of kind variants without variant, or naming one not listed, is refused (SCHEMA-FIELD)" {
	b=$(mk b minimal)
	$PY - "$b/data/run.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
r["campaign"] = {"id": "c1", "modes": ["light", "light"], "position": 0, "kind": "variants", "variants": ["a", "b"], "variant": "c"}
open(sys.argv[1], "w").write(json.dumps(r))
EOF
	rebag "$b"
	run pmuvalidate "$b"
	assert_failure 1
	assert_output --partial "run.campaign: variant 'c' is not one of variants"
	$PY - "$b/data/run.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
del r["campaign"]["variant"]
open(sys.argv[1], "w").write(json.dumps(r))
EOF
	rebag "$b"
	run pmuvalidate "$b"
	assert_failure 1
	assert_output --partial "a campaign of kind 'variants' needs 'variant'"
	$PY - "$b/data/run.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
r["campaign"] = {"id": "c1", "modes": ["none", "light"], "position": 0, "kind": "modes", "variant": "a"}
open(sys.argv[1], "w").write(json.dumps(r))
EOF
	rebag "$b"
	run pmuvalidate "$b"
	assert_failure 1
	assert_output --partial "'variant' belongs to a campaign of kind 'variants'"
}
