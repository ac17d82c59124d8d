# Shared setup for the CLI tests.
bats_load_library bats-support 2>/dev/null || load /usr/lib/bats/bats-support/load
bats_load_library bats-assert 2>/dev/null || load /usr/lib/bats/bats-assert/load

: "${PMU_BUILD:=$(cd "$BATS_TEST_DIRNAME/../../build" && pwd)}"
PATH="$PMU_BUILD:$PATH"
PY=/usr/bin/python3

# mk NAME FIXTURE: a fresh valid bundle written by the library writer
mk() {
	mkfixture "$2" "$BATS_TEST_TMPDIR/$1" >/dev/null
	echo "$BATS_TEST_TMPDIR/$1"
}

# ids FILE: the sorted, distinct error check IDs of a pmuvalidate --json report
ids() {
	$PY -c 'import json,sys
d=json.load(open(sys.argv[1]))
print(" ".join(sorted({f["check"] for b in d["bundles"] for f in b.get("findings",[]) if f["severity"]=="error"})))' "$1"
}

# rebag DIR: recompute manifests and Payload-Oxum after an edit
rebag() {
	(cd "$1" && find data -type f | LC_ALL=C sort | xargs sha256sum >manifest-sha256.txt &&
	 bytes=$(find data -type f -printf '%s\n' | awk '{s+=$1} END {print s+0}') &&
	 count=$(find data -type f | wc -l) &&
	 sed -i "s/^Payload-Oxum: .*/Payload-Oxum: $bytes.$count/" bag-info.txt &&
	 sha256sum bag-info.txt bagit.txt manifest-sha256.txt >tagmanifest-sha256.txt)
}

# nobody_setup: skip unless root with setpriv; W is a scratch directory that
# nobody can use (bats' own temporary directories are private to root).
nobody_setup() {
	[ "$(id -u)" -eq 0 ] || skip "needs root to switch to nobody with setpriv"
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
	W=$(mktemp -d /tmp/pmu-nobody.XXXXXX)
	chmod 777 "$W"
}

nobody_teardown() {
	if [ -n "${W:-}" ]; then rm -rf "$W"; fi
}

as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all -- "$@"
}

# sanitized: the tools under test were built with a sanitizer runtime
sanitized() {
	ldd "$PMU_BUILD/pmuvalidate" 2>/dev/null | grep -q 'libasan\|libubsan'
}

# rss_under KIB [LIMIT]: a peak RSS (KiB) is under LIMIT (64 MiB).  In a
# sanitized build the test ends here as skipped, with the number: ASan's
# quarantine and shadow memory say nothing about the code's own use, and
# the plain build (make check) holds the bound.
rss_under() {
	local limit=${2:-65536}
	sanitized && skip "peak RSS $1 KiB is not held to $limit KiB in a sanitized build (checked in the plain build)"
	[ "$1" -lt "$limit" ] || fail "peak RSS $1 KiB, over $limit KiB"
}

# needs_backend NAME: skip unless the tools under test were built with
# BACKEND=NAME (make writes the name to $PMU_BUILD/backend); a test that
# runs commands under pmurec needs the linux backend.
needs_backend() {
	local built
	built=$(cat "$PMU_BUILD/backend" 2>/dev/null) ||
		fail "cannot tell the backend of $PMU_BUILD: no $PMU_BUILD/backend (rebuild with make)"
	[ "$built" = "$1" ] || skip "needs BACKEND=$1 (this build: BACKEND=$built)"
}

# the eBPF follower opens here: root, BTF, built; else skip with the reason
needs_ebpf() {
	[ "$(id -u)" -eq 0 ] || skip "the eBPF follower needs root (CAP_BPF and CAP_PERFMON)"
	[ -r /sys/kernel/btf/vmlinux ] || skip "the kernel has no BTF (/sys/kernel/btf/vmlinux)"
	run pmurec --follower ebpf -o "$BATS_TEST_TMPDIR/probe.bundle" -- true
	grep -q '"evidence":"ebpf follower' "$BATS_TEST_TMPDIR/probe.bundle/data/collectors/cohort/lifecycle.jsonl" ||
		skip "the eBPF follower is unavailable: $(grep -o '"reason":"[^"]*' \
			"$BATS_TEST_TMPDIR/probe.bundle/data/collectors/cohort/lifecycle.jsonl" | head -1)"
}

# needs_hw_pmu: skip unless this host has a hardware PMU that opens
# (pmurec --probe's hardware-events capability), with the probe's reason.
# The reason starts "no hardware PMU": make check-pmu runs these suites in
# the emulated arm64 guest, where such a skip is a failure.
needs_hw_pmu() {
	local st p="${BATS_FILE_TMPDIR:-$BATS_TEST_TMPDIR}/hw-probe.json"
	# one probe per file: each costs seconds under the guest's emulation
	[ -s "$p" ] || pmurec --probe --json >"$p"
	st=$(jq -r '.capabilities[] | select(.name == "hardware-events") | "\(.status)\t\(.reason // "")"' "$p")
	[ "${st%%$'\t'*}" = ok ] || skip "no hardware PMU: ${st#*$'\t'}"
}

# schema_check FILE: the pmuanalyze --json report in FILE conforms to
# bundle-spec/analysis/report.schema.json; prints "schema errors: N"
schema_check() {
	$PY - "$1" "$BATS_TEST_DIRNAME/../../bundle-spec/analysis/report.schema.json" <<'EOF'
import json, sys, jsonschema
s = json.load(open(sys.argv[2]))
errs = list(jsonschema.Draft202012Validator(s).iter_errors(json.load(open(sys.argv[1]))))
for e in errs[:5]:
    print(list(e.absolute_path), e.message[:200])
print("schema errors:", len(errs))
EOF
}
