#!/usr/bin/env bats
# The sampling collector (bundle-spec section 22): real runs of the test
# workload build/hot (tests/helpers/hot.c: hot_loop and lib_work in the
# parent, child_loop in a forked child), per-CPU rings merged by time,
# samples attributed to the right incarnations, maps with the build-ids
# readelf reads, loss from a tiny ring, the unprivileged path, both
# followers, and perf.data read by Debian's perf script.

load helpers

setup() {
	needs_backend linux
	command -v jq >/dev/null || skip "jq is not installed"
	B="$BATS_TEST_TMPDIR/s.bundle"
	S="$B/data/collectors/sampling"
}

# where: the functions the samples of each incarnation fall in (their ip
# in build/hot's text, by nm's symbol ranges), as "inc func count" lines,
# most first, for samples in build/hot only
where() {
	$PY - "$1" "$2" <<'EOF'
import json, subprocess, sys, collections
S, binary = sys.argv[1], sys.argv[2]
syms = []
for l in subprocess.run(["nm", "-S", "--defined-only", binary], capture_output=True, text=True).stdout.splitlines():
    f = l.split()
    if len(f) == 4 and f[2] in "tT":
        syms.append((int(f[0], 16), int(f[1], 16), f[3]))
maps = [json.loads(l) for l in open(S + "/maps.jsonl")][1:]
maps = [m for m in maps if m["type"] == "map" and m["path"].endswith("/" + binary.split("/")[-1])]
# the text segment's vaddr - offset
delta = 0
for l in subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True).stdout.splitlines():
    f = l.split()
    if f and f[0] == "LOAD" and "E" in f[6:-1]:
        delta = int(f[2], 16) - int(f[1], 16)
c = collections.Counter()
for l in open(S + "/samples.jsonl"):
    r = json.loads(l)
    if r["type"] != "sample" or r["kernel_ip"]:
        continue
    ip = int(r["ip"], 16)
    for m in maps:
        if m["pid"] == r["pid"] and int(m["start"], 16) <= ip < int(m["end"], 16):
            v = ip - int(m["start"], 16) + int(m["pgoff"], 16) + delta
            name = next((n for a, s, n in syms if a <= v < a + s), "?")
            c[(r["inc"], name)] += 1
            break
for (inc, name), n in c.most_common():
    print(inc, name, n)
EOF
}

@test "full mode: config, samples in time order, summary; the parent's in hot_loop, the forked child's in child_loop" {
	run pmurec --mode full --follower ptrace -o "$B" -- hot 300 child
	assert_success
	run jq -s -c '[.[0].type, .[1].type, .[-1].type]' "$S/samples.jsonl"
	assert_output '["header","config","summary"]'
	# one config, one summary; summary counts the sample records
	run jq -s '[.[] | select(.type == "sample")] | length' "$S/samples.jsonl"
	n=$output
	[ "$n" -gt 100 ]
	run jq -s '.[-1].samples' "$S/samples.jsonl"
	assert_output "$n"
	# t_ns never decreases
	run jq -s '[.[] | .t_ns // empty] | . == sort' "$S/samples.jsonl"
	assert_output true
	# full mode: 999 Hz, frame-pointer chains whose first address is the ip
	run jq -r 'select(.type == "config") | "\(.freq_hz) \(.call_graph) \(.clock) \(.ncpus > 0) \(.ring_bytes > 0)"' "$S/samples.jsonl"
	assert_output "999 fp monotonic true true"
	run jq -s '[.[] | select(.type == "sample") | (.chain | split(" ")[0]) == .ip] | all' "$S/samples.jsonl"
	assert_output true
	# the incarnations: i1 is the root (hot), i2 the forked child
	p1=$(jq -r 'select(.type == "incarnation" and .id == "i1") | .pid' "$B/data/cohort.jsonl")
	p2=$(jq -r 'select(.type == "incarnation" and .id == "i2") | .pid' "$B/data/cohort.jsonl")
	run jq -r 'select(.type == "sample") | "\(.inc) \(.pid)"' "$S/samples.jsonl"
	[ "$(echo "$output" | sort -u | tr '\n' ' ')" = "i1 $p1 i2 $p2 " ]
	run where "$S" "$PMU_BUILD/hot"
	echo "$output"
	# the most sampled function of each incarnation
	[ "$(echo "$output" | awk '$1 == "i1"' | head -1 | cut -d' ' -f2)" = hot_loop ]
	[ "$(echo "$output" | awk '$1 == "i2"' | head -1 | cut -d' ' -f2)" = child_loop ]
	run pmuvalidate "$B"
	assert_success
}

@test "maps: the executable maps of both processes with the build-ids readelf -n reads; proc-maps for the forked child" {
	run pmurec --mode full -o "$B" -- hot 100 child
	assert_success
	for f in hot libhot.so; do
		want=$(readelf -n "$PMU_BUILD/$f" | sed -n 's/.*Build ID: //p')
		[ -n "$want" ]
		run jq -r --arg p "$PMU_BUILD/$f" 'select(.type == "map" and .path == $p) | "\(.inc) \(.build_id)"' \
			"$S/maps.jsonl"
		echo "$output"
		assert_line "i1 $want"
		assert_line "i2 $want"
	done
	# every map has a build-id or says why not; executable maps and [vdso] only
	run jq -s '[.[] | select(.type == "map") | has("build_id") or has("build_id_reason")] | all' "$S/maps.jsonl"
	assert_output true
	run jq -r 'select(.type == "map" and .inc == "i2") | .origin' "$S/maps.jsonl"
	assert_line proc-maps
	run jq -r 'select(.type == "map" and .path == "[vdso]") | .build_id_source' "$S/maps.jsonl"
	assert_line memory
	# the kernel: sampled as root, its build-id from /sys/kernel/notes
	if [ -r /sys/kernel/notes ] && [ "$(jq -r 'select(.type == "config") | .kernel' "$S/samples.jsonl")" = sampled ]; then
		run jq -r 'select(.type == "kmap") | .build_id' "$S/maps.jsonl"
		[ "$output" = "$(od -An -tx1 -v /sys/kernel/notes | tr -d ' \n' |
			$PY -c 'import sys
h = sys.stdin.read(); b = bytes.fromhex(h); i = 0
while i + 12 <= len(b):
    n, d, t = (int.from_bytes(b[i+k:i+k+4], "little") for k in (0, 4, 8)); i += 12
    nm = b[i:i+n]; i += (n + 3) & ~3
    if nm == b"GNU\0" and t == 3: print(b[i:i+d].hex()); break
    i += (d + 3) & ~3')" ]
	fi
}

@test "the event: cpu-clock on a host without a core PMU, with the reason; --sample-event overrides" {
	run pmurec --mode light -o "$B" -- hot 20
	assert_success
	if [ -e /sys/bus/event_source/devices/cpu ] || ls /sys/bus/event_source/devices/*/cpus >/dev/null 2>&1; then
		run jq -r 'select(.type == "config") | .event' "$S/samples.jsonl"
		[ "$output" = cycles ] || [ "$output" = cpu-clock ]
	else
		run jq -r 'select(.type == "config") | "\(.event): \(.event_reason)"' "$S/samples.jsonl"
		assert_output --partial "cpu-clock: this host has no core PMU"
	fi
	# light mode: 99 Hz, no chains, no kernel symbols asked for
	run jq -r 'select(.type == "config") | "\(.freq_hz) \(.call_graph)"' "$S/samples.jsonl"
	assert_output "99 none"
	run jq -r 'select(.type == "summary") | .kallsyms' "$S/samples.jsonl"
	assert_output not-requested
	run jq -r 'select(.type == "config") | "\(.kernel) \(.kernel_reason)"' "$S/samples.jsonl"
	assert_output --partial "excluded light mode samples user code only"
	run jq -s '[.[] | select(.type == "kmap")] | length' "$S/maps.jsonl"
	assert_output 0
	rm -rf "$B"
	run pmurec --mode light --sample-event task-clock --period 1000000 -o "$B" -- hot 20
	assert_success
	run jq -r 'select(.type == "config") | "\(.event) \(.event_reason) \(.period) \(.freq_hz)"' "$S/samples.jsonl"
	assert_output "task-clock --sample-event task-clock 1000000 null"
}

@test "loss: a tiny ring at a high rate loses records; the bundle is invalid unless --allow-loss" {
	run pmurec --mode full --sample-ring-kb 4 -F 20000 -o "$B" -- hot 200 child
	[ "$status" -ne 0 ]
	assert_output --partial "collector 'sampling' failed"
	run jq -r '.result' "$B/data/run.json"
	assert_output invalid
	run jq -r 'select(.type == "config") | "\(.ring_bytes) \(.ring_reason)"' "$S/samples.jsonl"
	assert_output --partial "4096 --sample-ring-kb 4"
	run jq -s '([.[] | select(.type == "loss" and .what == "records") | .lost] | add) as $l |
		(.[-1].lost_records == $l) and $l > 0' "$S/samples.jsonl"
	assert_output true
	run pmuvalidate "$B"
	assert_failure
	assert_output --partial LOSS
	rm -rf "$B"
	run pmurec --mode full --sample-ring-kb 4 -F 20000 --allow-loss -o "$B" -- hot 200 child
	assert_success
	run jq -r '.tolerate_loss' "$B/data/run.json"
	assert_output true
	run jq -s '.[-1].lost_records > 0' "$S/samples.jsonl"
	assert_output true
	run pmuvalidate "$B"
	assert_success
	assert_output --partial LOSS
	# perf.data holds the same loss
	run perf script -i "$S/perf.data" --show-lost-events -F pid
	assert_success
}

@test "unprivileged (setpriv nobody): kernel code excluded with the reason, or sampling unavailable with the reason" {
	nobody_setup
	cp "$PMU_BUILD/hot" "$PMU_BUILD/libhot.so" "$W/"
	run as_nobody "$PMU_BUILD/pmurec" --mode full -o "$W/u.bundle" -- "$W/hot" 50 child
	assert_success
	U="$W/u.bundle/data/collectors/sampling"
	run jq -r 'select(.event == "final") | .status' "$U/lifecycle.jsonl"
	if [ "$output" = unavailable ]; then
		run jq -r 'select(.event == "final") | "\(.reason) | \(.remedy)"' "$U/lifecycle.jsonl"
		assert_output --partial "perf_event_open"
	else
		paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
		run jq -r 'select(.type == "config") | "\(.kernel) \(.kernel_reason)"' "$U/samples.jsonl"
		if [ "$paranoid" -ge 2 ]; then
			assert_output --partial "excluded kernel.perf_event_paranoid is $paranoid"
			run jq -s '[.[] | select(.type == "sample") | .kernel_ip] | any' "$U/samples.jsonl"
			assert_output false
		fi
		run jq -s '[.[] | select(.type == "sample")] | length > 0' "$U/samples.jsonl"
		assert_output true
	fi
	run pmuvalidate "$W/u.bundle"
	assert_success
	nobody_teardown
}

@test "both followers: ptrace and eBPF attribute the child's samples to it" {
	for f in ptrace ebpf; do
		if [ $f = ebpf ]; then
			needs_ebpf
		fi
		rm -rf "$B"
		run pmurec --mode full --follower $f -o "$B" -- hot 200 child
		assert_success
		run jq -r 'select(.type == "sample") | .inc' "$S/samples.jsonl"
		assert_line i1
		assert_line i2
		run jq -r 'select(.type == "summary") | .unattributed' "$S/samples.jsonl"
		echo "$f: $output unattributed"
		run where "$S" "$PMU_BUILD/hot"
		[ "$(echo "$output" | awk '$1 == "i2"' | head -1 | cut -d' ' -f2)" = child_loop ]
		run pmuvalidate "$B"
		assert_success
	done
}

@test "perf script -i on the bundle's perf.data lists the same samples, pids and build-ids" {
	command -v perf >/dev/null || skip "perf (linux-perf) is not installed"
	run pmurec --mode full -o "$B" -- hot 200 child
	assert_success
	n=$(jq -s '[.[] | select(.type == "sample")] | length' "$S/samples.jsonl")
	run perf script -i "$S/perf.data" -F pid,time
	assert_success
	[ "$(echo "$output" | grep -c .)" -eq "$n" ]
	# the same samples per pid
	diff <(perf script -i "$S/perf.data" -F pid 2>/dev/null | awk '{print $1}' | sort | uniq -c) \
		<(jq -r 'select(.type == "sample") | .pid' "$S/samples.jsonl" | sort | uniq -c)
	# perf names the hot functions from the recorded maps
	run perf script -i "$S/perf.data" -F comm,ip,sym -G
	assert_output --partial hot_loop
	assert_output --partial child_loop
	run perf buildid-list -i "$S/perf.data"
	assert_output --partial "$(readelf -n "$PMU_BUILD/hot" | sed -n 's/.*Build ID: //p')"
	# perf report's top function is hot_loop, as the workload is built to give
	run perf report -i "$S/perf.data" --stdio --no-children --sort sym -g none
	assert_success
	[ "$(echo "$output" | grep '%' | head -1 | awk '{print $NF}')" = hot_loop ]
	# kernel frames are named through the synthesized kernel map
	if [ "$(jq -r 'select(.type == "config") | .kernel' "$S/samples.jsonl")" = sampled ] &&
		jq -e 'select(.type == "sample" and .kernel_ip)' "$S/samples.jsonl" >/dev/null; then
		run perf script -i "$S/perf.data" -F ip,sym -G
		echo "$output" | grep -E '^ *ffffffff' | grep -qv unknown
	fi
}

@test "--call-graph dwarf on build/hot-nofp: user registers and stack copies with every user sample" {
	run pmurec --mode full --call-graph dwarf,4096 -o "$B" -- hot-nofp 100
	assert_success
	run jq -r 'select(.type == "config") | "\(.call_graph) \(.stack_bytes) \(.regs_mask)"' "$S/samples.jsonl"
	case $(uname -m) in
	x86_64) assert_output "dwarf 4096 0xff0fff" ;;
	aarch64) assert_output "dwarf 4096 0x1ffffffff" ;;
	esac
	mask=$(jq -r 'select(.type == "config") | .regs_mask' "$S/samples.jsonl")
	nregs=$($PY -c "print(bin($mask).count('1'))")
	run jq -s --argjson n "$nregs" '[.[] | select(.type == "sample" and (.kernel_ip | not)) |
		(.regs | split(" ") | length) == $n and .user_abi == "64" and (.stack | length) > 0] | (length > 0) and all' \
		"$S/samples.jsonl"
	assert_output true
	# the stack copy is base64 of at most stack_bytes bytes
	run jq -r 'select(.type == "sample" and .stack) | .stack' "$S/samples.jsonl"
	echo "${lines[0]}" | base64 -d | wc -c | { read -r c; [ "$c" -le 4096 ] && [ "$c" -gt 0 ]; }
	run pmuvalidate "$B"
	assert_success
}

@test "--retain-binaries: the sampled objects copied by build-id; =all takes every mapped object" {
	run pmurec --mode full --retain-binaries -o "$B" -- hot 100 child
	assert_success
	want=$(readelf -n "$PMU_BUILD/hot" | sed -n 's/.*Build ID: //p')
	run jq -r --arg b "$want" 'select(.type == "retained" and .build_id == $b) | .file' "$S/maps.jsonl"
	assert_output "build-id/${want:0:2}/${want:2}"
	[ "$(readelf -n "$B/data/$output" | sed -n 's/.*Build ID: //p')" = "$want" ]
	sampled=$(jq -s '[.[] | select(.type == "retained")] | length' "$S/maps.jsonl")
	run pmuvalidate "$B"
	assert_success
	rm -rf "$B"
	run pmurec --mode full --retain-binaries=all -o "$B" -- hot 20
	assert_success
	run jq -r 'select(.type == "retained" or .type == "unretained") | .path' "$S/maps.jsonl"
	assert_line "$PMU_BUILD/libhot.so"
	assert_line "[vdso]"
	all=$(jq -s '[.[] | select(.type == "retained")] | length' "$S/maps.jsonl")
	[ "$all" -ge "$sampled" ]
}

@test "options: -F and --period exclude each other; bad --call-graph, --sample-event refused" {
	run pmurec -F 99 --period 1000 -o "$B" -- true
	assert_failure 2
	assert_output --partial "exclude each other"
	run pmurec --call-graph lbr -o "$B" -- true
	assert_failure 2
	run pmurec --call-graph dwarf,13 -o "$B" -- true
	assert_failure 2
	run pmurec --mode full --sample-event nosuch -o "$B" -- true
	assert_success
	run jq -r 'select(.event == "final") | "\(.status) \(.reason)"' "$S/lifecycle.jsonl"
	assert_output --partial "unavailable --sample-event nosuch"
	run pmurec --help
	assert_output --partial "--call-graph"
	assert_output --partial "--retain-binaries"
}

@test "eBPF follower: a forked child that execs at once gets its parent's maps at its fork, not its new image's" {
	needs_ebpf
	# the shell forks a child that execs build/hot at once: the eBPF
	# follower reports the fork after the fact, when /proc/CHILD/maps
	# already shows hot; the maps dated at the fork must be the shell's
	run pmurec --mode full --follower ebpf -o "$B" -- sh -c "\"$PMU_BUILD/hot\" 50 & wait"
	assert_success
	child=$(jq -r 'select(.type == "exec" and (.path | endswith("/hot"))) | .inc' "$B/data/cohort.jsonl")
	t_exec=$(jq -r 'select(.type == "exec" and (.path | endswith("/hot"))) | .t_ns' "$B/data/cohort.jsonl")
	[ -n "$child" ] && [ "$child" != i1 ]
	run jq -r --arg i "$child" --argjson t "$t_exec" \
		'select(.type == "map" and .inc == $i and .origin == "proc-maps" and .t_ns < $t) | .path' "$S/maps.jsonl"
	echo "$output"
	refute_line --partial "/hot"
	refute_line --partial "/libhot.so"
	run pmuvalidate "$B"
	assert_success
}

@test "--retain-binaries with --repeat 2: each repetition's JIT map is retained and the bundle validates" {
	# a "JIT" that leaves /tmp/perf-PID.map for its pid (kept until the
	# recorder has copied it, at the end of each repetition)
	cat >"$BATS_TEST_TMPDIR/jit.sh" <<SH
#!/bin/sh
echo "1000 10 jitfn" > /tmp/perf-\$\$.map
echo \$\$ >> "$BATS_TEST_TMPDIR/pids"
"$PMU_BUILD/hot" 20
SH
	chmod +x "$BATS_TEST_TMPDIR/jit.sh"
	run pmurec --mode full --repeat 2 --retain-binaries=all -o "$B" -- "$BATS_TEST_TMPDIR/jit.sh"
	while read -r p; do rm -f "/tmp/perf-$p.map"; done <"$BATS_TEST_TMPDIR/pids"
	assert_success
	run jq -r 'select(.type == "retained" and .kind == "jit-map") | .file' \
		"$S/maps.jsonl" "$B/data/repeats/2/collectors/sampling/maps.jsonl"
	[ "${#lines[@]}" -eq 2 ]
	for f in "${lines[@]}"; do
		[ -f "$B/data/$f" ] || [ -f "$B/data/repeats/2/$f" ]
	done
	run pmuvalidate "$B"
	echo "$output"
	assert_success
}

@test "full mode finds the kernel's _text after the per-CPU symbols that kernels before 6.15 list first" {
	[ "$(id -u)" -eq 0 ] || skip "bind-mounting over /proc/kallsyms needs root"
	command -v unshare >/dev/null || skip "unshare is not installed"
	grep -q ' T _text$' /proc/kallsyms && ! grep -q '^0000000000000000 T _text$' /proc/kallsyms ||
		skip "/proc/kallsyms shows no _text address here"
	# x86-64 kernels before 6.15 list their per-CPU variables (type A,
	# small offsets) first, hundreds of them, then _text
	k="$BATS_TEST_TMPDIR/kallsyms"
	{
		for i in $(seq 0 399); do printf '%016x A percpu_var_%d\n' $((i * 64)) "$i"; done
		grep -v ' A ' /proc/kallsyms
	} >"$k"
	run unshare -m sh -c "mount --bind '$k' /proc/kallsyms || exit 77
		pmurec --mode full -o '$B' -- hot 20"
	[ "$status" -ne 77 ] || skip "cannot bind-mount over /proc/kallsyms here"
	assert_success
	run jq -r 'select(.type == "config") | "\(.kernel) \(.kernel_reason)"' "$S/samples.jsonl"
	echo "$output"
	[ "${output%% *}" = sampled ]
	run jq -r 'select(.type == "kmap") | .start' "$S/maps.jsonl"
	assert_output "0x$(grep -m1 ' T _text$' /proc/kallsyms | cut -d' ' -f1 | sed 's/^0*//')"
}
