#!/usr/bin/env bats
# The argv of every exec (spec 1.4): each follower records it in the cohort
# stream's exec records, bounded (64 strings, 4096 bytes counting each NUL)
# with argv_truncated when cut, invalid UTF-8 as U+FFFD; pmuvalidate holds
# every exec to exactly one of argv / argv_reason and to the bounds; the
# Chrome trace export shows it.

load helpers

setup() {
	cd "$BATS_TEST_TMPDIR"
}


# follower NAME: the prerequisites of --follower NAME
follower() {
	needs_backend linux
	[ "$1" = ebpf ] && needs_ebpf
	F=$1
}

# rec BUNDLE CMD...: record CMD with follower $F, check that follower ran
# and that the bundle is valid
rec() {
	local b=$1
	shift
	run pmurec --follower "$F" -o "$b" -- "$@"
	assert_success
	grep -q "\"evidence\":\"$F follower" "$b/data/collectors/cohort/lifecycle.jsonl"
	run pmuvalidate "$b"
	assert_success
}

# execs BUNDLE: one JSON line per exec record of the cohort stream
execs() {
	jq -c 'select(.type == "exec") | del(.type, .inc, .t_ns)' "$1/data/cohort.jsonl"
}

# argv_of BUNDLE PROGRAM: the argv of the exec of PROGRAM's basename, one
# JSON array per exec of it
argv_of() {
	jq -c --arg p "$2" 'select(.type == "exec" and (.path | split("/") | last) == $p) | .argv' \
		"$1/data/cohort.jsonl"
}

tree_argv() {
	follower "$1"
	rec r.bundle sh -c 'sleep 0.01; /bin/echo alpha beta; exec env PMU_T=1 /bin/true gamma "d e" ""'
	execs r.bundle
	# every exec carries its argv, none a reason
	run jq -s '[.[] | select(.type == "exec")] | length > 0 and all(has("argv") and (has("argv_reason") | not))' \
		r.bundle/data/cohort.jsonl
	assert_output true
	run argv_of r.bundle sleep
	assert_output '["sleep","0.01"]'
	run argv_of r.bundle echo
	assert_output '["/bin/echo","alpha","beta"]'
	# the root's exec is the command as given, and one incarnation's chain
	# of execs (sh -> env -> true) keeps each exec's own argv, empty
	# strings included
	run jq -c 'select(.type == "exec" and .inc == "i1") | .argv' r.bundle/data/cohort.jsonl
	assert_line --index 0 '["sh","-c","sleep 0.01; /bin/echo alpha beta; exec env PMU_T=1 /bin/true gamma \"d e\" \"\""]'
	assert_line --index 1 '["env","PMU_T=1","/bin/true","gamma","d e",""]'
	assert_line --index 2 '["/bin/true","gamma","d e",""]'
}

@test "ptrace: every exec of a sh -c tree has its own argv, in the order of the chain" {
	tree_argv ptrace
}

@test "ebpf: every exec of a sh -c tree has its own argv, in the order of the chain" {
	tree_argv ebpf
}

git_gc() {
	follower "$1"
	command -v git >/dev/null || skip "git is not installed"
	git init -q repo
	for i in 1 2 3; do
		echo "$i" >"repo/f$i"
		git -C repo add "f$i"
		git -C repo -c user.name=t -c user.email=t@t commit -q -m "$i"
	done
	rec g.bundle git -C repo gc --quiet
	execs g.bundle
	# git's children are all "git": their argv says what each one did
	run jq -r 'select(.type == "exec") | .argv | join(" ")' g.bundle/data/cohort.jsonl
	assert_line "git -C repo gc --quiet"
	assert_line --regexp '^[^ ]*git repack( |$)'
	assert_line --regexp '^[^ ]*git pack-objects( |$)'
}

@test "ptrace: git gc shows each child's argv (repack, pack-objects)" {
	git_gc ptrace
}

@test "ebpf: git gc shows each child's argv (repack, pack-objects)" {
	git_gc ebpf
}

many_args() {
	follower "$1"
	rec m.bundle sh -c '/bin/true $(seq 1 5000)'
	run jq -c 'select(.type == "exec" and (.path | endswith("/true"))) |
		[(.argv | length), (.argv | map(utf8bytelength + 1) | add), .argv_truncated, .argv[0:3], .argv[-1]]' \
		m.bundle/data/cohort.jsonl
	assert_output '[64,190,true,["/bin/true","1","2"],"63"]'
}

@test "ptrace: an exec of 5001 strings keeps the first 64, marked argv_truncated" {
	many_args ptrace
}

@test "ebpf: an exec of 5001 strings keeps the first 64, marked argv_truncated" {
	many_args ebpf
}

long_arg() {
	follower "$1"
	rec l.bundle sh -c '/bin/true aa "$(head -c 10000 /dev/zero | tr "\0" b)" cc'
	# 4096 bytes with the NULs: "/bin/true" (10), "aa" (3), 4083 of the b's
	run jq -c 'select(.type == "exec" and (.path | endswith("/true"))) |
		[(.argv | length), (.argv | map(utf8bytelength + 1) | add), .argv_truncated, .argv[1],
		 (.argv[2] | test("^b+$")), (.argv[2] | length)]' l.bundle/data/cohort.jsonl
	assert_output '[3,4096,true,"aa",true,4082]'
}

@test "ptrace: an argv over 4096 bytes is cut at 4096, the string at the bound cut short, marked" {
	long_arg ptrace
}

@test "ebpf: an argv over 4096 bytes is cut at 4096 (the kernel-side capture), marked" {
	long_arg ebpf
}

non_utf8() {
	follower "$1"
	rec u.bundle sh -c '/bin/echo "$(printf "x\377y")" "$(printf "\303\251")" >/dev/null'
	run argv_of u.bundle echo
	assert_output '["/bin/echo","x�y","é"]'
	# the stream holds valid UTF-8 (jq read it), and no argv is truncated
	run jq -s '[.[] | select(has("argv_truncated"))] | length' u.bundle/data/cohort.jsonl
	assert_output 0
}

@test "ptrace: a byte that is not UTF-8 is recorded as U+FFFD, valid UTF-8 as it is" {
	non_utf8 ptrace
}

@test "ebpf: a byte that is not UTF-8 is recorded as U+FFFD, valid UTF-8 as it is" {
	non_utf8 ebpf
}

@test "the two followers record the same argv for the same tree" {
	needs_backend linux
	needs_ebpf
	cmd='for a in one "two three" ""; do /bin/echo "$a" x; done; sh -c "exec /bin/true q"'
	F=ptrace rec p.bundle sh -c "$cmd"
	F=ebpf rec e.bundle sh -c "$cmd"
	run diff <(jq -c 'select(.type == "exec") | .argv' p.bundle/data/cohort.jsonl | sort) \
		<(jq -c 'select(.type == "exec") | .argv' e.bundle/data/cohort.jsonl | sort)
	assert_success
	[ "$(jq -c 'select(.type == "exec") | .argv' p.bundle/data/cohort.jsonl | wc -l)" -eq 6 ]
}

# ---- the validator ---------------------------------------------------------

# exec_edit BUNDLE PY: apply the Python statement PY to each exec record r
# (a dict) of the bundle's cohort stream, then recompute the manifests
exec_edit() {
	$PY - "$1/data/cohort.jsonl" "$2" <<'EOF'
import json, sys
p, code = sys.argv[1], sys.argv[2]
out = []
for line in open(p, encoding="utf-8"):
    r = json.loads(line)
    if r.get("type") == "exec":
        exec(code)
    out.append(json.dumps(r, separators=(",", ":"), ensure_ascii=False))
open(p, "w", encoding="utf-8").write("\n".join(out) + "\n")
EOF
	rebag "$1"
}

@test "SCHEMA-FIELD (1.4): an exec record with neither argv nor argv_reason is refused" {
	b=$(mk b multiproc)
	exec_edit "$b" 'r.pop("argv", None)'
	run pmuvalidate "$b"
	assert_failure 1
	assert_output --partial "an exec record has neither 'argv' nor 'argv_reason'"
	pmuvalidate --json "$b" >r.json || true
	[ "$(ids r.json)" = SCHEMA-FIELD ]
}

@test "SCHEMA-FIELD (1.4): an exec record with both argv and argv_reason is refused" {
	b=$(mk b multiproc)
	exec_edit "$b" 'r["argv_reason"] = "gone"'
	run pmuvalidate "$b"
	assert_failure 1
	assert_output --partial "an exec record has both 'argv' and 'argv_reason'"
}

@test "an exec record with argv_reason alone, or a truncated argv, is valid" {
	b=$(mk b multiproc)
	exec_edit "$b" 'r.pop("argv"); r["argv_reason"] = "the process was gone"'
	run pmuvalidate "$b"
	assert_success
	b=$(mk c multiproc)
	exec_edit "$b" 'r["argv"] = [""] * 64; r["argv_truncated"] = True'
	run pmuvalidate "$b"
	assert_success
}

@test "SCHEMA-FIELD (1.4): argv past 64 strings or 4096 bytes, or not of strings, is refused" {
	for code in 'r["argv"] = ["a"] * 65' 'r["argv"] = ["a" * 4095, "b"]' 'r["argv"] = ["a", 1]' \
		'r["argv"] = [["a"]]' 'r["argv"] = "a"' 'r["argv"] = {"a": "b"}'; do
		b=$(mk "b$RANDOM" multiproc)
		exec_edit "$b" "$code"
		run pmuvalidate "$b"
		assert_failure 1
		assert_output --partial "'argv' must be an array of at most 64 strings of at most 4096 bytes"
	done
	# the bound itself is valid: 4096 bytes with the NULs
	b=$(mk edge multiproc)
	exec_edit "$b" 'r["argv"] = ["a" * 4094, ""]'
	run pmuvalidate "$b"
	assert_success
}

@test "SCHEMA-FIELD (1.4): argv_truncated false, or without argv, is refused" {
	b=$(mk b multiproc)
	exec_edit "$b" 'r["argv_truncated"] = False'
	run pmuvalidate "$b"
	assert_failure 1
	assert_output --partial "'argv_truncated' is present only as true, with 'argv'"
}

@test "SCHEMA-FIELD: argv in a bundle of 1.3 is a field of a later version; 1.3 without it is valid" {
	run pmuvalidate "$BATS_TEST_DIRNAME/../../fixtures/valid/multiproc-1.3"
	assert_success
	b=$BATS_TEST_TMPDIR/old
	mkfixture multiproc "$b" --spec 1.3 >/dev/null
	exec_edit "$b" 'r["argv"] = ["x"]'
	run pmuvalidate "$b"
	assert_failure 1
	assert_output --partial "unknown field 'argv' in a c_exec record (added in a later minor version of the spec)"
}

# ---- the trace export -------------------------------------------------------

@test "pmuanalyze --trace: each exec instant carries its argv, the process event its last exec's" {
	follower ptrace
	rec t.bundle sh -c '/bin/echo alpha beta >/dev/null; /bin/true $(seq 1 100)'
	run pmuanalyze --trace trace.json t.bundle
	assert_success
	run jq -c '.traceEvents[] | select(.ph == "i" and .cat == "exec") | .args |
		select(.path | endswith("/echo")) | .argv' trace.json
	assert_output '["/bin/echo","alpha","beta"]'
	run jq -c '.traceEvents[] | select(.ph == "i" and .cat == "exec") | .args |
		select(.path | endswith("/true")) | [(.argv | length), .argv_truncated]' trace.json
	assert_output '[64,true]'
	run jq -c '.traceEvents[] | select(.ph == "X" and .cat == "process" and (.name | startswith("echo"))) | .args.argv' \
		trace.json
	assert_output '["/bin/echo","alpha","beta"]'
}

@test "pmurec(1) and pmu-bundle(5) say every exec's argv is recorded, bounded, secrets included" {
	top=$BATS_TEST_DIRNAME/../..
	grep -qF 'Both followers record the argv of every exec of the cohort' "$top/man/pmurec.1"
	grep -qF 'at most 64 strings and 4096 bytes' "$top/man/pmurec.1"
	grep -qF 'is recorded as it was given' "$top/man/pmurec.1"
	grep -qF 'argv_truncated' "$top/man/pmu-bundle.5"
	grep -qF 'argv_reason' "$top/man/pmu-bundle.5"
	grep -qF 'secret passed on a' "$top/man/pmu-bundle.5"
}

# ---- the eBPF follower's exec record, as the decoder takes it ----------------

@test "bpf decode: an exec record's argv_len, size and truncation must agree (untrusted bytes)" {
	needs_backend linux
	local seeds=$BATS_TEST_DIRNAME/../fuzz/corpus/bpfrec d=$BATS_TEST_TMPDIR
	[ -x "$PMU_BUILD/bpf-follow-dump" ] || skip "bpf-follow-dump is not built (no eBPF toolchain)"
	run "$PMU_BUILD/bpf-follow-dump" --decode "$seeds"/exec "$seeds"/exec-truncated
	assert_success
	[ "$(grep -c ' ok exec' <<<"$output")" -eq 2 ]
	# the exec record: the header (24 bytes), fields to 320, argv_total at
	# 320, argv_len at 324, argv from 328; flags at 36, h.size at 18
	$PY - "$seeds" "$d" <<'PY'
import struct, sys
seeds, d = sys.argv[1], sys.argv[2]
def put(name, seed, fn):
    b = bytearray(open(f"{seeds}/{seed}", "rb").read())
    b = fn(b) or b
    open(f"{d}/{name}", "wb").write(bytes(b))
put("len-lies", "exec", lambda b: struct.pack_into("<I", b, 324, 11))
put("total-short", "exec", lambda b: struct.pack_into("<I", b, 320, 3))
put("cut-unmarked", "exec", lambda b: struct.pack_into("<I", b, 320, 99))
put("mark-unfounded", "exec", lambda b: struct.pack_into("<I", b, 36, 2))
put("fault-with-argv", "exec", lambda b: struct.pack_into("<I", b, 36, 4))
put("unknown-flag", "exec", lambda b: struct.pack_into("<I", b, 36, 8))
def longer(b):
    b += b"x"
    struct.pack_into("<H", b, 18, len(b))
    struct.pack_into("<I", b, 324, len(b) - 328)
put("past-bound", "exec-truncated", longer)
put("no-argv-fields", "exec", lambda b: b[:320])
PY
	run "$PMU_BUILD/bpf-follow-dump" --decode "$d"/len-lies "$d"/total-short "$d"/cut-unmarked "$d"/mark-unfounded \
		"$d"/fault-with-argv "$d"/unknown-flag "$d"/past-bound "$d"/no-argv-fields
	assert_success
	refute_output --partial ' ok '
	[ "$(grep -c ' corrupt: ' <<<"$output")" -eq 8 ]
	assert_line --partial 'len-lies corrupt: bpf record seq 3: exec argv_len disagrees with the record'
	assert_line --partial 'total-short corrupt: bpf record seq 3: exec argv longer than the process'
	assert_line --partial 'cut-unmarked corrupt: bpf record seq 3: exec argv short of its length and of the bound'
	assert_line --partial 'mark-unfounded corrupt: bpf record seq 3: exec argv truncation flag disagrees'
	assert_line --partial 'fault-with-argv corrupt: bpf record seq 3: exec argv both unread and present'
}
