#!/usr/bin/env bats
# A bundle written by the library survives copying and re-packing, checks
# out with standard tools, and fails on any single tampering.

load helpers

@test "sha256sum -c manifest-sha256.txt passes inside a valid bundle" {
	b=$(mk b multiproc)
	cd "$b"
	run sha256sum -c manifest-sha256.txt
	assert_success
	run sha256sum -c tagmanifest-sha256.txt
	assert_success
}

@test "a bundle copied with cp -r still validates" {
	b=$(mk b multiproc)
	cp -r "$b" "$BATS_TEST_TMPDIR/copy"
	run pmuvalidate "$BATS_TEST_TMPDIR/copy"
	assert_success
	assert_output --partial "valid (spec 1.8, 11 payload files"
}

@test "a bundle packed and unpacked with tar still validates" {
	b=$(mk b multiproc)
	tar -C "$BATS_TEST_TMPDIR" -czf "$BATS_TEST_TMPDIR/re.tar.gz" b
	run pmuvalidate "$BATS_TEST_TMPDIR/re.tar.gz"
	assert_success
	mkdir "$BATS_TEST_TMPDIR/un" && tar -C "$BATS_TEST_TMPDIR/un" -xzf "$BATS_TEST_TMPDIR/re.tar.gz"
	run pmuvalidate "$BATS_TEST_TMPDIR/un/b"
	assert_success
}

@test "the archive forms validate and unpack with tar to the same bag" {
	for f in tar tar.gz tar.zst; do
		b=$(mk "a.bundle.$f" multiproc)
		run pmuvalidate "$b"
		assert_success
	done
	d=$(mk d.bundle multiproc)
	mkdir "$BATS_TEST_TMPDIR/x"
	tar -C "$BATS_TEST_TMPDIR/x" --zstd -xf "$BATS_TEST_TMPDIR/a.bundle.tar.zst"
	run diff -r "$d" "$BATS_TEST_TMPDIR/x/a.bundle"
	assert_success
}

@test "flipping one payload byte fails CHECKSUM-PAYLOAD" {
	b=$(mk b multiproc)
	f="$b/data/cohort.jsonl"
	printf 'X' | dd of="$f" bs=1 seek=10 conv=notrunc status=none
	run pmuvalidate --json "$b"
	assert_failure 1
	echo "$output" >"$BATS_TEST_TMPDIR/r.json"
	run ids "$BATS_TEST_TMPDIR/r.json"
	assert_output --partial CHECKSUM-PAYLOAD
}

@test "flipping one byte of a tag file fails CHECKSUM-TAG" {
	b=$(mk b minimal)
	sed -i 's/Bagging-Date: 2025/Bagging-Date: 2024/' "$b/bag-info.txt"
	run pmuvalidate --json "$b"
	assert_failure 1
	echo "$output" >"$BATS_TEST_TMPDIR/r.json"
	run ids "$BATS_TEST_TMPDIR/r.json"
	assert_output "CHECKSUM-TAG"
}

@test "deleting one payload file fails validation" {
	b=$(mk b multiproc)
	rm "$b/data/collectors/syscalls/events.jsonl"
	run pmuvalidate --json "$b"
	assert_failure 1
	echo "$output" >"$BATS_TEST_TMPDIR/r.json"
	run ids "$BATS_TEST_TMPDIR/r.json"
	assert_output --partial MANIFEST-MISSING
}

@test "adding one file fails validation" {
	b=$(mk b multiproc)
	echo extra >"$b/data/notes.txt"
	run pmuvalidate --json "$b"
	assert_failure 1
	echo "$output" >"$BATS_TEST_TMPDIR/r.json"
	run ids "$BATS_TEST_TMPDIR/r.json"
	assert_output --partial MANIFEST-UNLISTED
}

@test "an edit that is re-bagged consistently is still caught by the semantic checks" {
	b=$(mk b multiproc)
	sed -i 's/"tid":5002,"name":"clock_nanosleep","ph":"E"/"tid":5009,"name":"clock_nanosleep","ph":"E"/' \
		"$b/data/collectors/syscalls/events.jsonl"
	rebag "$b"
	run pmuvalidate --json "$b"
	assert_failure 1
	echo "$output" >"$BATS_TEST_TMPDIR/r.json"
	run ids "$BATS_TEST_TMPDIR/r.json"
	assert_output "ATTRIBUTION PAIRING"
}

@test "a symbolic link inside a directory bundle fails BAG-STRUCTURE" {
	b=$(mk b minimal)
	ln -s /etc/passwd "$b/data/link"
	run pmuvalidate "$b"
	assert_failure 1
	assert_output --partial BAG-STRUCTURE
}
