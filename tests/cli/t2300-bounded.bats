#!/usr/bin/env bats
# pmuvalidate in bounded memory and without leftovers: documents and
# manifests that would amplify memory, and signals or kill -9 during the
# extraction of an archive.  The large inputs are made here, at test time.

load helpers

# peak RSS of a command in KiB, into $BATS_TEST_TMPDIR/rss; the command's
# output into $BATS_TEST_TMPDIR/out, its status into $status
measure() {
	/usr/bin/time -f %M -o "$BATS_TEST_TMPDIR/rss" "$@" >"$BATS_TEST_TMPDIR/out" 2>&1 && status=0 || status=$?
	rss=$(tail -1 "$BATS_TEST_TMPDIR/rss")
}

# zstd archive of the bag directory $1 at $2 (as pmurec names it: top = the bag's name)
pack() {
	tar -C "$(dirname "$1")" -cf - "$(basename "$1")" | zstd -q -o "$2"
}

# json_field FILE EXPR: a Python expression over d = the report's first bundle
field() {
	$PY -c 'import json,sys; d=json.load(open(sys.argv[1]))["bundles"][0]; print(eval(sys.argv[2]))' "$1" "$2"
}

setup_file() {
	[ -x /usr/bin/time ] || return 0
	# an archive of 50,000 entries: its extraction takes long enough to be interrupted
	big=$BATS_FILE_TMPDIR/big.bundle
	mkfixture minimal "$big" >/dev/null
	mkdir "$big/data/many"
	(cd "$big/data/many" && seq -f 'f%05g' 1 50000 | xargs touch)
	pack "$big" "$BATS_FILE_TMPDIR/big.bundle.tar.zst"
	rm -rf "$big"
}

need_tools() {
	[ -x /usr/bin/time ] || skip "GNU time (/usr/bin/time) is not installed"
	command -v zstd >/dev/null || skip "zstd is not installed"
}

# amp SPEC: a bundle of that spec (current: the writers' own) whose capabilities.json is 60 MiB of
# {"a":[0,0,...]}: 30 million values, 1.3 GB of jansson objects if parsed
amp() {
	local b=$BATS_TEST_TMPDIR/amp-$1.bundle
	if [ "$1" = current ]; then mkfixture minimal "$b"; else mkfixture minimal "$b" --spec "$1"; fi >/dev/null
	$PY -c 'import sys; n = (60 << 20) // 2; sys.stdout.write("{\"a\":[" + "0," * (n - 1) + "0]}\n")' \
		>"$b/data/capabilities.json"
	rebag "$b"
	pack "$b" "$b.tar.zst"
	echo "$b"
}

# refused FORM... -- TEXT...: each form fails JSON-SYNTAX alone, in under
# 64 MiB, with a message holding every TEXT
refused() {
	local forms=() f
	while [ "$1" != -- ]; do forms+=("$1"); shift; done
	shift
	for form in "${forms[@]}"; do
		measure pmuvalidate --json "$form"
		[ "$status" -eq 1 ]
		run ids "$BATS_TEST_TMPDIR/out"
		assert_output JSON-SYNTAX
		run field "$BATS_TEST_TMPDIR/out" '[f["message"] for f in d["findings"] if f["check"] == "JSON-SYNTAX"][0]'
		for f in "$@"; do assert_output --partial "$f"; done
		rss_under "$rss"
	done
	[ "$(stat -c %s "${forms[1]}")" -lt 65536 ]
}

@test "JSON-SYNTAX: a 60 MiB {\"a\":[0,0,...]} document of spec 1.2 is refused by the parse budget in under 64 MiB, directory and .tar.zst" {
	need_tools
	b=$(amp 1.2)
	# within 1.2's 64 MiB document limit: only the parse budget stops it
	refused "$b" "$b.tar.zst" -- "62914568 bytes" "32 MiB parse budget"
}

@test "JSON-SYNTAX: the same document in a bundle of spec 1.3 or later is refused by the 4 MiB limit, unread" {
	need_tools
	b=$(amp current)
	grep -qx 'PMU-Spec-Version: 1.8' "$b/bag-info.txt"
	refused "$b" "$b.tar.zst" -- "62914568 bytes" "4 MiB limit"
}

@test "MANIFEST-MISSING: a 700,000-line manifest is checked in under 64 MiB, 20 findings listed, the rest counted" {
	need_tools
	b=$(mk m.bundle minimal)
	$PY -c 'import sys
w = sys.stdout.write
for i in range(700000): w("%064x  data/gone/f%07d.bin\n" % (i, i))' >>"$b/manifest-sha256.txt"
	(cd "$b" && sha256sum bag-info.txt bagit.txt manifest-sha256.txt >tagmanifest-sha256.txt)
	[ "$(wc -l <"$b/manifest-sha256.txt")" -gt 700000 ]
	measure pmuvalidate --json "$b"
	[ "$status" -eq 1 ]
	run ids "$BATS_TEST_TMPDIR/out"
	assert_output MANIFEST-MISSING
	run field "$BATS_TEST_TMPDIR/out" '(d["errors"], len(d["findings"]), d["unreported"])'
	assert_output "(700000, 20, {'MANIFEST-MISSING': 699980})"
	run field "$BATS_TEST_TMPDIR/out" '(d["findings"][0]["record"], d["findings"][0]["message"])'
	assert_output "(7, \"'data/gone/f0000000.bin' is listed but does not exist\")"
	rss_under "$rss"
}

@test "MANIFEST-FORMAT: among 700,000 lines, a path listed twice is found, whether it exists or not" {
	need_tools
	b=$(mk m.bundle minimal)
	$PY -c 'import sys
w = sys.stdout.write
for i in range(700000): w("%064x  data/gone/f%07d.bin\n" % (i, i))
w("%064x  data/gone/f%07d.bin\n" % (123456, 123456))' >>"$b/manifest-sha256.txt"
	(cd "$b" && sha256sum bag-info.txt bagit.txt manifest-sha256.txt >tagmanifest-sha256.txt)
	measure pmuvalidate --json "$b"
	[ "$status" -eq 1 ]
	run ids "$BATS_TEST_TMPDIR/out"
	assert_output MANIFEST-FORMAT
	run field "$BATS_TEST_TMPDIR/out" '(d["findings"][0]["record"], d["findings"][0]["message"], "MANIFEST-MISSING" in d["evaluated"])'
	assert_output "(700007, \"'data/gone/f0123456.bin' is listed twice\", False)"
	rss_under "$rss"

	b=$(mk e.bundle minimal)
	sed -n 2p "$b/manifest-sha256.txt" >>"$b/manifest-sha256.txt"
	(cd "$b" && sha256sum bag-info.txt bagit.txt manifest-sha256.txt >tagmanifest-sha256.txt)
	run pmuvalidate "$b"
	assert_failure 1
	assert_output --partial "manifest-sha256.txt:7: '$(sed -n '2s/^.\{66\}//p' "$b/manifest-sha256.txt")' is listed twice"
}

@test "MANIFEST-FORMAT: a manifest with CRLF line ends shows the CR escaped" {
	b=$(mk c.bundle minimal)
	sed -i 's/$/\r/' "$b/manifest-sha256.txt"
	(cd "$b" && sha256sum bag-info.txt bagit.txt manifest-sha256.txt >tagmanifest-sha256.txt)
	run pmuvalidate "$b"
	assert_failure 1
	assert_output --partial "manifest-sha256.txt:1: path 'data/capabilities.json\\r' is not allowed here"
	[[ $output != *$'\r'* ]]
	b=$(mk t.bundle minimal)
	sed -i 's/$/\r/' "$b/tagmanifest-sha256.txt"
	run pmuvalidate "$b"
	assert_failure 1
	assert_output --partial "tagmanifest-sha256.txt:1: path 'bag-info.txt\\r' is not allowed here"
}

# start pmuvalidate on the big archive with TMPDIR=$T (SIGINT at its
# default: a background job of a script ignores it), wait until its
# extraction is under way; $pid is pmuvalidate
start_extraction() {
	T=$BATS_TEST_TMPDIR/tmp
	mkdir -p "$T"
	TMPDIR=$T $PY -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' pmuvalidate "$BATS_FILE_TMPDIR/big.bundle.tar.zst" >/dev/null 2>&1 &
	pid=$!
	for _ in $(seq 1000); do
		n=$(find "$T"/pmuvalidate.*/bag/big.bundle/data/many -mindepth 1 2>/dev/null | head -101 | wc -l)
		[ "$n" -gt 100 ] && return 0
		sleep 0.01
	done
	fail "pmuvalidate did not start extracting"
}

@test "SIGTERM, SIGHUP or SIGINT during the extraction of an archive leaves no pmuvalidate.* directory" {
	need_tools
	for sig in TERM HUP INT; do
		start_extraction
		kill -s "$sig" "$pid"
		st=0
		wait "$pid" || st=$?
		[ "$st" -eq $((128 + $(kill -l "$sig"))) ] || fail "SIG$sig: pmuvalidate exited $st, not of the signal"
		run ls -A "$T"
		assert_output ""
	done
}

@test "a private directory left by a pmuvalidate killed with SIGKILL is removed by the next run" {
	need_tools
	start_extraction
	kill -s KILL "$pid"
	wait "$pid" || true
	run ls "$T"
	assert_output --regexp '^pmuvalidate\.[A-Za-z0-9]{6}$'
	left=$T/$output
	[ -f "$left/owner" ]
	TMPDIR=$T run pmuvalidate "$BATS_TEST_DIRNAME/../../fixtures/valid/minimal.tar.gz"
	assert_success
	[ ! -e "$left" ]
	run ls -A "$T"
	assert_output ""
}

@test "a pmuvalidate.* entry that is not provably a dead run's own is left alone" {
	T=$BATS_TEST_TMPDIR/tmp
	mkdir -p "$T"
	boot=$(cat /proc/sys/kernel/random/boot_id)
	ns=$(readlink /proc/self/ns/pid)
	marker() { # DIR PID START
		printf 'pmu private extraction directory\npid %s\nstart %s\nboot %s\npidns %s\n' "$2" "$3" "$boot" "$ns" >"$1/owner"
		chmod 600 "$1/owner"
	}
	mkdir -m 700 "$T/pmuvalidate.nomark" "$T/pmuvalidate.garble" "$T/pmuvalidate.living" \
		"$T/pmuvalidate.public" "$T/target"
	echo 'pid 1' >"$T/pmuvalidate.garble/owner"
	# a live process: this shell, with its true start time
	marker "$T/pmuvalidate.living" $$ "$(cut -d' ' -f22 /proc/$$/stat)"
	# a dead process's marker, but the directory is not private
	marker "$T/pmuvalidate.public" 999999999 1
	chmod 755 "$T/pmuvalidate.public"
	# a dead process's marker behind a symbolic link
	marker "$T/target" 999999999 1
	ln -s target "$T/pmuvalidate.linked"
	echo x >"$T/pmuvalidate.regfil"
	# and one that is provably stale: a dead pid
	mkdir -m 700 "$T/pmuvalidate.stale1"
	marker "$T/pmuvalidate.stale1" 999999999 1
	TMPDIR=$T run pmuvalidate "$BATS_TEST_DIRNAME/../../fixtures/valid/minimal.tar.gz"
	assert_success
	run ls "$T"
	assert_output "pmuvalidate.garble
pmuvalidate.linked
pmuvalidate.living
pmuvalidate.nomark
pmuvalidate.public
pmuvalidate.regfil
target"
	[ -f "$T/target/owner" ]
}
