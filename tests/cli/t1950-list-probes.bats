#!/usr/bin/env bats
# pmurec --list-probes BINARY [--json] (lib/sdtnote.c): the USDT probes of
# real binaries and of the objects they would load, held against binutils'
# readelf -n; whether this host can attach (root, and as nobody); the
# errors for a missing file, a file that is not ELF and a script.

load helpers

bats_require_minimum_version 1.5.0

PYBIN=/usr/bin/python3.11
JAVA=/usr/lib/jvm/java-17-openjdk-amd64/bin/java

setup() {
	T=$BATS_TEST_TMPDIR
	EX=$PMU_BUILD/pmu-example
}

# readelf_probes FILE: "provider:name" of each probe note, one a line, sorted
readelf_probes() {
	readelf -n --wide "$1" | awk '/Provider: /{p=$NF} /^ *Name: /{print p ":" $2}' | LC_ALL=C sort
}

@test "pmu-example: its 10 pmu probes, with the argument layouts readelf shows" {
	run --separate-stderr pmurec --list-probes "$EX"
	assert_success
	assert_line --index 0 "$EX: 10 USDT probes in 1 of the $(($(pmurec --list-probes "$EX" --json | jq '.objects | length'))) objects it would load (itself included)"
	for n in runtime mark span_begin span_end gc_begin gc_end alloc; do
		assert_line --regexp "^  pmu +$n +no +"
	done
	run --separate-stderr pmurec --list-probes "$EX" --json
	assert_success
	real=$(readlink -f "$EX")
	[ "$(jq -r --arg o "$real" '[.probes[] | select(.object == $o) | "\(.provider):\(.name)"] | sort | .[]' <<<"$output")" = "$(readelf_probes "$EX")" ]
	# the layouts, in note order, are readelf's
	[ "$(jq -r '.probes[].args' <<<"$output")" = "$(readelf -n --wide "$EX" | sed -n 's/^ *Arguments: //p')" ]
	[ "$(jq '[.probes[] | select(.semaphore)] | length' <<<"$output")" -eq 0 ]
	[ "$(jq -r '.objects[0].object' <<<"$output")" = "$real" ]
}

@test "a binary whose objects carry no probes: says so, exit 0" {
	run --separate-stderr pmurec --list-probes "$PMU_BUILD/pmu-example-nohdr"
	assert_success
	assert_line --index 0 --regexp "^$PMU_BUILD/pmu-example-nohdr and the [0-9]+ objects it would load carry no USDT probes$"
	run --separate-stderr pmurec --list-probes /bin/true --json
	assert_success
	[ "$(jq '.probes | length' <<<"$output")" -eq 0 ]
	[ "$(jq '.objects | length' <<<"$output")" -ge 2 ] # itself and libc at least
}

@test "python3.11: provider python, gc__start with its semaphore at readelf's address" {
	[ -x "$PYBIN" ] || skip "$PYBIN is not installed (scripts/deps installs python3.11)"
	run --separate-stderr pmurec --list-probes "$PYBIN"
	assert_success
	assert_line --regexp '^  python +gc__start +yes +-4@[^ ]+ +1$'
	assert_line --regexp '^  python +gc__done +yes +-8@'
	assert_line --regexp '^without probes: .*/libc\.so\.6'
	run --separate-stderr pmurec --list-probes "$PYBIN" --json
	assert_success
	want=$(readelf -n --wide "$PYBIN" | awk '/^ *Name: gc__start/{f=1} f && /Semaphore:/{sub(/.*Semaphore: 0x0*/, "0x"); print; exit}')
	[ -n "$want" ]
	[ "$(jq -r '.probes[] | select(.name == "gc__start") | .semaphore_addr' <<<"$output")" = "$want" ]
	[ "$(jq -r '.probes[] | select(.name == "gc__start") | .nargs' <<<"$output")" = 1 ]
}

@test "java: the launcher's libjvm.so and its hotspot probes (through PATH and the alternatives link too)" {
	[ -x "$JAVA" ] || skip "$JAVA is not installed (scripts/deps installs openjdk-17-jdk-headless)"
	run --separate-stderr pmurec --list-probes "$JAVA" --json
	assert_success
	jvm=/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so
	for n in gc__begin gc__end mem__pool__gc__begin mem__pool__gc__end vm__init__end thread__start thread__stop \
		method__compile__begin method__compile__end; do
		[ "$(jq --arg n "$n" --arg o "$jvm" '[.probes[] | select(.provider == "hotspot" and .name == $n and .object == $o)] | length' <<<"$output")" -ge 1 ] ||
			fail "hotspot:$n not listed in $jvm"
	done
	[ "$(jq --arg o "$jvm" '[.probes[] | select(.object == $o)] | length' <<<"$output")" -eq "$(readelf -n "$jvm" | grep -c 'Provider:')" ]
	mem=$(jq -r '.probes[] | select(.name == "mem__pool__gc__begin") | .nargs' <<<"$output" | head -1)
	[ "$mem" -eq 8 ]
	if [ "$(readlink -f "$(command -v java)")" = "$JAVA" ]; then
		run --separate-stderr pmurec --list-probes java
		assert_success
		assert_line --regexp "^$jvm: [0-9]+ probes$"
	fi
}

@test "a needed object that resolves nowhere is named, the rest listed" {
	command -v cc >/dev/null || skip "no cc to build the test program"
	echo 'int gone(void){return 0;}' >"$T/gone.c"
	printf '#include <sys/sdt.h>\nint gone(void);\nint main(void){STAP_PROBE(t, here); return gone();}\n' >"$T/m.c"
	cc -shared -fPIC -o "$T/libgone.so" "$T/gone.c"
	cc -o "$T/m" "$T/m.c" -L"$T" -lgone || skip "cc could not build the test program (sys/sdt.h: systemtap-sdt-dev)"
	rm "$T/libgone.so"
	run --separate-stderr pmurec --list-probes "$T/m"
	assert_success
	assert_line --regexp '^  t +here +no +- +0$'
	assert_line "not found: libgone.so (needed by $(readlink -f "$T/m"))"
}

@test "a missing file: a clear error, exit 2" {
	run --separate-stderr pmurec --list-probes "$T/nonexistent"
	[ "$status" -eq 2 ]
	[ "$stderr" = "pmurec: --list-probes: cannot open '$T/nonexistent': No such file or directory" ]
	[ -z "$output" ]
	run --separate-stderr pmurec --list-probes no-such-program-here
	[ "$status" -eq 2 ]
	[ "$stderr" = "pmurec: --list-probes: 'no-such-program-here': not found in PATH" ]
}

@test "a file that is not ELF, a script, a directory: a clear error, exit 2" {
	echo "just text" >"$T/text"
	run --separate-stderr pmurec --list-probes "$T/text"
	[ "$status" -eq 2 ]
	[ "$stderr" = "pmurec: --list-probes: '$T/text' is not an ELF file" ]
	printf '#!/usr/bin/python3 -u\nprint(1)\n' >"$T/script"
	run --separate-stderr pmurec --list-probes "$T/script"
	[ "$status" -eq 2 ]
	[ "$stderr" = "pmurec: --list-probes: '$T/script' is not an ELF file but a script for '/usr/bin/python3' (list the interpreter: pmurec --list-probes /usr/bin/python3)" ]
	run --separate-stderr pmurec --list-probes "$T"
	[ "$status" -eq 2 ]
	[ "$stderr" = "pmurec: --list-probes: '$T' is a directory, not an ELF file" ]
	# an ELF header with its section header table cut off
	head -c 200 "$EX" >"$T/cut"
	run --separate-stderr pmurec --list-probes "$T/cut"
	[ "$status" -eq 2 ]
	[[ $stderr == "pmurec: --list-probes: '$T/cut'"* ]]
}

@test "as root: can attach, with the reason" {
	needs_backend linux
	[ "$(id -u)" -eq 0 ] || skip "not root"
	[ -e /sys/bus/event_source/devices/uprobe ] || skip "no uprobe PMU on this kernel"
	run --separate-stderr pmurec --list-probes "$EX"
	assert_success
	assert_line --regexp '^can attach: euid 0 with CAP_BPF and CAP_PERFMON; the uprobe PMU is there'
	run --separate-stderr pmurec --list-probes "$EX" --json
	[ "$(jq '.attach.possible' <<<"$output")" = true ]
}

@test "a stub build cannot attach, and says so with the remedy; the probes still listed" {
	needs_backend stub
	run --separate-stderr pmurec --list-probes "$EX"
	assert_success
	assert_line --index 0 --partial ": 10 USDT probes"
	assert_line "cannot attach: this pmurec was built with BACKEND=stub, which records nothing; remedy: build pmu with its platform's backend (make; on Linux BACKEND=linux)"
	run --separate-stderr pmurec --list-probes "$EX" --json
	[ "$(jq '.attach.possible' <<<"$output")" = false ]
}

@test "as nobody: cannot attach, with the reason and the remedy; the probes still listed" {
	needs_backend linux
	nobody_setup
	run --separate-stderr setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all -- \
		"$PMU_BUILD/pmurec" --list-probes "$EX"
	nobody_teardown
	assert_success
	assert_line --index 0 --partial ": 10 USDT probes"
	assert_line --regexp "^cannot attach: euid $(id -u nobody) lacks CAP_BPF and CAP_PERFMON.*; remedy: run pmurec as root, or grant it CAP_BPF and CAP_PERFMON"
	run --separate-stderr setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all -- \
		"$PMU_BUILD/pmurec" --list-probes "$EX" --json
	[ "$(jq '.attach.possible' <<<"$output")" = false ]
	[ "$(jq -r '.attach.remedy' <<<"$output")" != null ]
}

@test "--json is one JSON document; a full stdout fails loudly" {
	run --separate-stderr pmurec --list-probes "$EX" --json
	assert_success
	python3 -c 'import json,sys; json.loads(sys.stdin.read())' <<<"$output"
	run bash -c 'pmurec --list-probes "$1" --json >/dev/full' _ "$EX"
	[ "$status" -ne 0 ]
	assert_output --partial "pmurec: "
	run bash -c 'pmurec --list-probes "$1" >/dev/full' _ "$EX"
	[ "$status" -ne 0 ]
}
