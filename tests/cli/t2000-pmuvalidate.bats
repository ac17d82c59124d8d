#!/usr/bin/env bats
# pmuvalidate's interface: exit codes, reports, JSON, JUnit, check list.

load helpers

@test "a valid bundle exits 0 and says valid" {
	b=$(mk b multiproc)
	run pmuvalidate "$b"
	assert_success
	assert_output --regexp "^$b: valid \(spec 1\.8, 11 payload files, [0-9]+ bytes\)\$"
}

@test "no bundle argument is a usage error (exit 2)" {
	run pmuvalidate
	assert_failure 2
	assert_output --partial "no bundle given"
}

@test "an unknown option is a usage error (exit 2)" {
	run pmuvalidate --frobnicate x
	assert_failure 2
}

@test "a missing path is an I/O error (exit 2) naming the path" {
	run pmuvalidate "$BATS_TEST_TMPDIR/nope.bundle"
	assert_failure 2
	assert_output --partial "cannot open '$BATS_TEST_TMPDIR/nope.bundle': No such file or directory"
}

@test "one invalid bundle among valid ones makes the exit status 1" {
	a=$(mk a minimal)
	b=$(mk b minimal)
	rm "$b/tagmanifest-sha256.txt"
	run pmuvalidate "$a" "$b"
	assert_failure 1
	assert_line --regexp "^$a: valid \(spec 1\.8, 6 payload files, [0-9]+ bytes\)\$"
	assert_line --partial "$b: INVALID"
	assert_output --partial MANIFEST-FORMAT
}

@test "-q prints nothing and keeps the exit status" {
	b=$(mk b minimal)
	run pmuvalidate -q "$b"
	assert_success
	assert_output ""
	echo junk >>"$b/data/run.json"
	run pmuvalidate -q "$b"
	assert_failure 1
	assert_output ""
}

@test "--json reports findings with check, file, record and message" {
	b=$(mk b multiproc)
	sed -i '3s/"t_ns":1000000110/"t_ns":999/' "$b/data/collectors/syscalls/lifecycle.jsonl"
	rebag "$b"
	run pmuvalidate --json "$b"
	assert_failure 1
	echo "$output" >"$BATS_TEST_TMPDIR/r.json"
	run $PY -c 'import json,sys
d=json.load(open(sys.argv[1])); b=d["bundles"][0]
assert d["valid"] is False and b["valid"] is False
f=[x for x in b["findings"] if x["severity"]=="error"]
print(sorted({(x["check"], x["file"], x["record"]) for x in f}))
assert "TIME-WINDOW" not in b["not_evaluated"]' "$BATS_TEST_TMPDIR/r.json"
	assert_success
	assert_output "[('TIME-ORDER', 'data/collectors/syscalls/lifecycle.jsonl', 3), ('TIME-WINDOW', 'data/collectors/syscalls/lifecycle.jsonl', 3)]"
}

@test "--junit writes one testcase per check, with failures and skips" {
	b=$(mk b minimal)
	g=$(mk g minimal)
	echo "BagIt-Version: 0.97" >"$b/bagit.txt"
	run pmuvalidate --junit "$BATS_TEST_TMPDIR/j.xml" "$b" "$g"
	assert_failure 1
	run $PY -c 'import sys, xml.etree.ElementTree as E
r=E.parse(sys.argv[1]).getroot(); n=int(sys.argv[2])
s=r.findall("testsuite"); assert len(s)==2
for t in s: assert len(t.findall("testcase"))==n
bad=[c.get("name") for c in s[0].findall("testcase") if c.find("failure") is not None]
good=[c.get("name") for c in s[1].findall("testcase") if c.find("failure") is not None]
skip=[c.get("name") for c in s[1].findall("testcase") if c.find("skipped") is not None]
print(bad, good, "ARCHIVE-PATH" in skip)' "$BATS_TEST_TMPDIR/j.xml" "$(pmuvalidate --list-checks | wc -l)"
	assert_success
	assert_output "['BAG-DECLARATION', 'CHECKSUM-TAG'] [] True"
}

@test "--list-checks lists every check once; --json and --markdown agree" {
	run pmuvalidate --list-checks
	assert_success
	n=$(echo "$output" | wc -l)
	[ "$n" -ge 40 ]
	run bash -c "pmuvalidate --list-checks --json | $PY -c 'import json,sys; print(len(json.load(sys.stdin)))'"
	assert_output "$n"
	run bash -c "pmuvalidate --list-checks --markdown | grep -c '^| \`'"
	assert_output "$n"
}

@test "a directory bundle is read, never written" {
	b=$(mk b multiproc)
	before=$(find "$b" -printf '%p %s %T@\n' | sort | sha256sum)
	chmod -R a-w "$b"
	run pmuvalidate "$b"
	assert_success
	chmod -R u+w "$b"
	after=$(find "$b" -printf '%p %s %T@\n' | sort | sha256sum)
	[ "$before" = "$after" ]
}

@test "archive validation leaves no temporary files behind" {
	b=$(mk a.tar.gz multiproc)
	mkdir "$BATS_TEST_TMPDIR/tmp"
	TMPDIR="$BATS_TEST_TMPDIR/tmp" run pmuvalidate "$b"
	assert_success
	[ -z "$(ls -A "$BATS_TEST_TMPDIR/tmp")" ]
	echo garbage >"$BATS_TEST_TMPDIR/bad.tar.gz"
	TMPDIR="$BATS_TEST_TMPDIR/tmp" run pmuvalidate "$BATS_TEST_TMPDIR/bad.tar.gz"
	assert_failure 1
	assert_output --partial ARCHIVE-FORMAT
	[ -z "$(ls -A "$BATS_TEST_TMPDIR/tmp")" ]
}

@test "a bundle of a newer spec major version is refused for SPEC-VERSION" {
	b=$(mk b minimal)
	sed -i 's/^PMU-Spec-Version: 1.8/PMU-Spec-Version: 2.0/' "$b/bag-info.txt"
	(cd "$b" && sha256sum bag-info.txt bagit.txt manifest-sha256.txt >tagmanifest-sha256.txt)
	run pmuvalidate "$b"
	assert_failure 1
	assert_output --partial "SPEC-VERSION"
	assert_output --partial "major version of '2.0' is unknown"
}

@test "pmuvalidate --help and --version tell the truth" {
	run pmuvalidate --help
	assert_success
	assert_output --partial "Exit status: 0 all bundles valid, 1 a bundle is invalid, 2 usage or I/O error."
	run pmuvalidate --version
	assert_success
	assert_output --regexp '^pmuvalidate [0-9.]+ \(spec 1\.8'
}

@test "writing the report to a full device fails loudly (exit 2)" {
	[ -w /dev/full ] || skip "/dev/full is not available"
	b=$(mk b minimal)
	run bash -c "pmuvalidate --json '$b' >/dev/full"
	assert_failure 2
	assert_output --partial "cannot write standard output"
}
