#!/usr/bin/env bats
# pmurec's output path (issue 12): --force replaces a pmu bundle and nothing
# else; bundles are private whatever the umask, unless --file-mode shares
# them.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	needs_backend linux
	cd "$BATS_TEST_TMPDIR"
}

# no_staging: no staging directory or .part file was left anywhere here
no_staging() {
	local left
	left=$(find . -name '*.pmu-staging*')
	[ -z "$left" ] || fail "left behind: $left"
}

# modes_of PATH: the distinct "MODE TYPE" pairs of PATH and everything below it
modes_of() {
	find "$1" -printf '%m %y\n' | sort -u | tr '\n' ' '
}

# refused PATH: pmurec --force over PATH exits 2 naming it, before running
# anything, and leaves nothing beside it
refused() {
	run pmurec -f -m none -o "$1" -- touch ran
	assert_failure 2
	assert_output --partial "pmurec: refusing to replace '$1': "
	[ ! -e ran ] || fail "the command ran"
	no_staging
}

@test "--force over a directory that is not a bundle refuses and deletes nothing" {
	mkdir d
	echo x >d/important.txt
	refused d
	assert_output "pmurec: refusing to replace 'd': it is not a pmu bundle (it holds 'important.txt', which a bundle does not)"
	[ "$(cat d/important.txt)" = x ]
	[ "$(ls -A d)" = important.txt ]
}

@test "--force over a/b/c/ (a trailing slash) refuses and deletes nothing" {
	mkdir -p a/b/c
	echo y >a/b/c/f
	refused a/b/c/
	assert_output --partial "it is not a pmu bundle (it holds 'f'"
	[ "$(cat a/b/c/f)" = y ]
}

@test "--force over a directory with a planted bagit.txt and a user file refuses" {
	mkdir p
	printf 'BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n' >p/bagit.txt
	printf 'PMU-Spec-Version: 1.2\n' >p/bag-info.txt
	echo mine >p/notes.txt
	refused p
	assert_output --partial "(it holds 'notes.txt', which a bundle does not)"
	[ "$(cat p/notes.txt)" = mine ]
	[ "$(ls -A p | wc -l)" -eq 3 ]
}

@test "--force over an empty directory or a bag of another tool refuses" {
	mkdir e
	refused e
	assert_output --partial "(no bagit.txt)"
	mkdir -p other/data
	printf 'BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n' >other/bagit.txt
	printf 'Bag-Software-Agent: bagit.py\n' >other/bag-info.txt
	echo kept >other/data/f
	refused other
	assert_output --partial "(no bag-info.txt with a PMU-Spec-Version line)"
	[ "$(cat other/data/f)" = kept ]
}

@test "--force over a regular file that is not a bundle archive refuses" {
	echo 'my notes' >notes.tar.zst
	refused notes.tar.zst
	assert_output "pmurec: refusing to replace 'notes.tar.zst': it is not a pmu bundle (not a tar, tar.gz or tar.zst archive)"
	[ "$(cat notes.tar.zst)" = 'my notes' ]
	mkdir src
	echo x >src/important.txt
	tar -czf src.tar.gz src
	refused src.tar.gz
	assert_output --partial "(its bag holds 'important.txt', which a bundle does not)"
	tar -tzf src.tar.gz
}

@test "--force over an archive of a bundle with something added refuses" {
	pmurec -m none -o r.bundle -- true
	echo extra >r.bundle/README
	tar --zstd -cf r.bundle.tar.zst r.bundle
	refused r.bundle.tar.zst
	assert_output --partial "(its bag holds 'README', which a bundle does not)"
	rm r.bundle/README
	mkdir second
	echo s >second/f
	tar --zstd -cf two.tar.zst r.bundle second
	refused two.tar.zst
	assert_output --partial "(the archive holds 'second' beside 'r.bundle')"
	[ "$(tar --zstd -tf two.tar.zst | grep -c '^second/f$')" -eq 1 ]
}

@test "--force over a symbolic link refuses, even when it points to a bundle" {
	pmurec -m none --seed 1 -o target.bundle -- true
	ln -s target.bundle link.bundle
	refused link.bundle
	assert_output "pmurec: refusing to replace 'link.bundle': it is a symbolic link (name the bundle itself)"
	[ -L link.bundle ]
	run pmuvalidate -q target.bundle
	assert_success
	[ "$($PY -c 'import json; print(json.load(open("target.bundle/data/run.json"))["seed"])')" = 1 ]
}

@test "--force over a real bundle directory replaces it" {
	# a guard for the refusals above: the old code replaced this too
	pmurec -m none --seed 1 -o r.bundle -- true
	pmurec -f -m none --seed 2 -o r.bundle -- true
	[ "$($PY -c 'import json; print(json.load(open("r.bundle/data/run.json"))["seed"])')" = 2 ]
	run pmuvalidate -q r.bundle
	assert_success
	no_staging
}

@test "--force over a real .tar.zst bundle replaces it, also with a directory bundle" {
	pmurec -m none --seed 1 -o r.bundle.tar.zst -- true
	before=$(sha256sum <r.bundle.tar.zst)
	pmurec -f -m none --seed 2 -o r.bundle.tar.zst -- true
	[ "$(sha256sum <r.bundle.tar.zst)" != "$before" ]
	[ "$(tar --zstd -xOf r.bundle.tar.zst r.bundle/data/run.json | $PY -c 'import json,sys; print(json.load(sys.stdin)["seed"])')" = 2 ]
	run pmuvalidate -q r.bundle.tar.zst
	assert_success
	# a directory bundle over an archive bundle: swapped all the same
	pmurec -m none -o arch.tar -- true
	mv arch.tar r.bundle
	run pmurec -f -m none -o r.bundle -- true
	assert_success
	[ -d r.bundle ]
	no_staging
}

@test "a fresh bundle is private under umask 022 and 000: files 0600, directories 0700" {
	for m in 022 000; do
		(umask $m && pmurec -o "u$m.bundle" -- true && pmurec -o "u$m.bundle.tar.zst" -- true)
		[ "$(modes_of "u$m.bundle")" = "600 f 700 d " ] || fail "umask $m: $(modes_of "u$m.bundle")"
		[ "$(stat -c %a "u$m.bundle.tar.zst")" = 600 ]
	done
	[ "$(find u022.bundle -type f | wc -l)" -gt 10 ]
}

@test "--file-mode shares a bundle: files get it, directories the matching x bits" {
	(umask 077 && pmurec --file-mode 0644 -o s.bundle -- true && pmurec --file-mode 640 -o s.bundle.tar.gz -- true)
	[ "$(modes_of s.bundle)" = "644 f 755 d " ] || fail "$(modes_of s.bundle)"
	[ "$(stat -c %a s.bundle.tar.gz)" = 640 ]
	run pmuvalidate -q s.bundle
	assert_success
	for bad in 0755 0400 4600 rw 0; do
		run pmurec --file-mode $bad -o x.bundle -- touch ran
		assert_failure 2
		assert_output --partial "pmurec: --file-mode '$bad': "
		[ ! -e x.bundle ] && [ ! -e ran ]
	done
}

@test "the directory that --ab makes for its bundles is private too" {
	(umask 022 && pmurec --ab none,none -o ab -- true)
	[ "$(stat -c %a ab)" = 700 ]
	[ "$(modes_of ab/none.bundle)" = "600 f 700 d " ]
}
