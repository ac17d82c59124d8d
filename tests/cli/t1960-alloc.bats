#!/usr/bin/env bats
# The alloc collector (spec 1.8, section 24.3): native allocation sampling
# of real processes, through uprobes on the C library (root) and through
# pmurec's LD_PRELOAD interposer.  pmu-example prints what it allocated
# exactly (requests=1000: 17000 allocations, 65792000 bytes, 25600 live at
# exit), and every estimate is held against it.  Every bundle is checked
# by pmuvalidate and by alloc_check.py (the schema, time order, attribution
# to cohort.jsonl, frees naming live samples, inc and summary sums).

load helpers

setup() {
	needs_backend linux
	B=$BATS_TEST_TMPDIR/a.bundle
	A=$B/data/collectors/alloc
	bg=
}

teardown() {
	[ -z "$bg" ] || kill "$bg" 2>/dev/null || :
	nobody_teardown || :
}

# rec VIA ARGS...: pmurec -o $B --alloc-via VIA ARGS; skip (with the
# collector's own reason) where that path cannot run here
rec() {
	local via=$1
	shift
	run pmurec -o "$B" --alloc-via "$via" "$@"
	assert_success
	local st
	st=$(jq -r 'select(.event == "final") | .status' "$A/lifecycle.jsonl")
	if [ "$st" = unavailable ]; then
		skip "alloc collector unavailable ($via): $(jq -r 'select(.event == "final") | .reason' "$A/lifecycle.jsonl")"
	fi
	assert_equal "$st" ok
}

checked() {
	run pmuvalidate "$B"
	assert_success
	run $PY "$BATS_TEST_DIRNAME/alloc_check.py" "$B" "$BATS_TEST_DIRNAME/../../bundle-spec/schema/alloc.schema.json"
	assert_output ok
}

# within EST LO HI: LO <= EST <= HI
within() {
	[ "$1" -ge "$2" ] && [ "$1" -le "$3" ] || fail "$1 is outside [$2, $3]"
}

# The tolerance: at --alloc-sample 64k, 65792000 bytes make about 1000
# samples (each 4096-byte block sampled with p = 1 - exp(-4096/65536) =
# 0.061); the estimate's relative standard deviation is about
# 1/sqrt(1000) = 3.2%, so +-20% is over 6 standard deviations: a miss is a
# bug (a path that samples twice, or misses a thread), not bad luck.
estimate_ok() {
	read -r est live n exited < <($PY "$BATS_TEST_DIRNAME/alloc_check.py" --est "$B" i1)
	within "$est" 52633600 78950400
	within "$n" 700 1300
	assert_equal "$exited" true
	# live at exit: 100 kept blocks of 256 bytes (25600), at this rate
	# about 0.4 samples of 65.6 KB each; 5 would be a 1e-4 event
	within "$live" 0 328320
}

# sites: alloc_blocks (64 MB of 4096-byte blocks) in the chains of nearly
# every sample; keep_small (256 KB) in some at 16k (about 16 expected)
sites_ok() {
	run $PY "$BATS_TEST_DIRNAME/alloc_check.py" --sites "$B"
	assert_success
	local ab ks
	ab=$(awk '$1 == "alloc_blocks" { print $2 }' <<<"$output")
	ks=$(awk '$1 == "keep_small" { print $2 }' <<<"$output")
	[ "${ab:-0}" -ge 500 ] || fail "alloc_blocks in ${ab:-0} chains: $output"
	[ "${ks:-0}" -ge 1 ] || fail "keep_small in no chain: $output"
}

@test "uprobe: pmu-example 1000 requests at 64k: estimate within 20% of its bytes, alloc_blocks in the chains" {
	[ "$(id -u)" -eq 0 ] || skip "the uprobe path needs root (CAP_BPF and CAP_PERFMON)"
	rec uprobe --mode full --alloc-sample 64k -- pmu-example --requests 1000
	checked
	run jq -r 'select(.type == "config") | "\(.via) \(.chains) \(.sample_bytes)"' "$A/alloc.jsonl"
	assert_output "uprobe true 65536"
	run jq -r 'select(.type == "config") | .library' "$A/alloc.jsonl"
	assert_output --regexp '/libc[.]so[.0-9]*$'
	estimate_ok
	run $PY "$BATS_TEST_DIRNAME/alloc_check.py" --sites "$B"
	[ "$(awk '$1 == "alloc_blocks" { print $2 }' <<<"$output")" -ge 500 ] || fail "$output"
}

@test "preload: pmu-example 1000 requests at 64k: estimate within 20% of its bytes, alloc_blocks in the chains" {
	rec preload --mode full --alloc-sample 64k -- pmu-example --requests 1000
	checked
	run jq -r 'select(.type == "config") | "\(.via) \(.chains) \(.sample_bytes)"' "$A/alloc.jsonl"
	assert_output "preload true 65536"
	estimate_ok
	run $PY "$BATS_TEST_DIRNAME/alloc_check.py" --sites "$B"
	[ "$(awk '$1 == "alloc_blocks" { print $2 }' <<<"$output")" -ge 500 ] || fail "$output"
}

@test "uprobe and preload at 16k: both sites in the chains" {
	for via in uprobe preload; do
		[ "$via" = preload ] || [ "$(id -u)" -eq 0 ] || continue
		rm -rf "$B"
		rec $via --mode full --alloc-sample 16k -- pmu-example --requests 1000
		sites_ok
	done
}

# --alloc-sample 1: every allocation is sampled (p = 1 - exp(-size) = 1):
# the estimate is the count, exactly; the C library's own few (stdio's
# buffer, the threads') come on top, under 64 KiB allocated, 16 KiB live
@test "uprobe and preload at 1 byte: bytes and live bytes exact, frees of every freed block" {
	for via in uprobe preload; do
		[ "$via" = preload ] || [ "$(id -u)" -eq 0 ] || continue
		rm -rf "$B"
		rec $via --mode light --alloc-sample 1 -- pmu-example --requests 1000
		checked
		read -r est live n exited < <($PY "$BATS_TEST_DIRNAME/alloc_check.py" --est "$B" i1)
		within "$est" 65792000 65857536
		within "$live" 25600 41984
		within "$n" 17000 17100
		run jq -r 'select(.type == "summary") | .frees >= 16900' "$A/alloc.jsonl"
		assert_output true
	done
}

@test "as nobody, --alloc: the preload path, samples attributed" {
	nobody_setup
	[ -x "$PMU_BUILD/libpmu-alloc.so" ] || fail "no $PMU_BUILD/libpmu-alloc.so"
	as_nobody test -r "$PMU_BUILD/libpmu-alloc.so" || skip "nobody cannot read $PMU_BUILD"
	run as_nobody pmurec --mode light --alloc-sample 64k -o "$W/n.bundle" -- "$PMU_BUILD/pmu-example" --requests 1000
	assert_success
	B=$W/n.bundle
	A=$B/data/collectors/alloc
	run jq -r 'select(.type == "config") | .via' "$A/alloc.jsonl"
	assert_output preload
	checked
	estimate_ok
}

@test "a static binary: unavailable on both paths, with the reason" {
	command -v gcc >/dev/null || skip "no gcc"
	printf '#include <stdlib.h>\nint main(void){ free(malloc(100)); return 0; }\n' >"$BATS_TEST_TMPDIR/s.c"
	gcc -static -o "$BATS_TEST_TMPDIR/static" "$BATS_TEST_TMPDIR/s.c" 2>/dev/null || skip "gcc -static does not link here (no libc.a)"
	for via in preload uprobe; do
		rm -rf "$B"
		run pmurec --mode light --alloc --alloc-via $via -o "$B" -- "$BATS_TEST_TMPDIR/static"
		assert_success
		run jq -r 'select(.event == "final") | "\(.status) \(.reason)"' "$A/lifecycle.jsonl"
		assert_output --partial "unavailable '$BATS_TEST_TMPDIR/static' is statically linked"
		[ ! -e "$A/alloc.jsonl" ] || fail "an alloc stream from an unavailable collector"
		run pmuvalidate "$B"
		assert_success
	done
}

@test "a background allocator outside the cohort adds no sample" {
	pmu-example --requests 200000 --quiet 2>/dev/null &
	bg=$!
	for via in uprobe preload; do
		[ "$via" = preload ] || [ "$(id -u)" -eq 0 ] || continue
		rm -rf "$B"
		rec $via --mode light --alloc-sample 64k -- pmu-example --requests 1000
		kill -0 $bg || fail "the background allocator ended before the recording did"
		checked
		run jq -r "select(.type == \"sample\" and .pid == $bg) | .seq" "$A/alloc.jsonl"
		assert_output ""
		run jq -r 'select(.type == "summary") | .unattributed' "$A/alloc.jsonl"
		assert_output 0
		estimate_ok
	done
	kill $bg
	wait $bg || :
	bg=
}

# realloc growing a block 200 times (moving it or not), a realloc that
# fails (the block stays, and its free is seen later) and realloc(p, 0)
# (which frees p): at 1 byte every call is a sample, every block freed once
@test "uprobe and preload: realloc's moves, failure and realloc(p, 0) pair every sample with one free" {
	command -v gcc >/dev/null || skip "no gcc"
	cat >"$BATS_TEST_TMPDIR/re.c" <<'C'
#include <stdint.h>
#include <stdlib.h>
int main(void)
{
	size_t n = 16;
	char *p = malloc(n), *q, *z;

	for (int i = 0; i < 200; i++) {
		n = n < 100000 ? n * 3 / 2 + 8 : n + 16;
		if (!(q = realloc(p, n)))
			return 1;
		p = q;
	}
	if (realloc(p, SIZE_MAX / 2))
		return 2;
	free(p);
	z = malloc(100);
	return realloc(z, 0) ? 3 : 0;
}
C
	gcc -O1 -fno-builtin -o "$BATS_TEST_TMPDIR/re" "$BATS_TEST_TMPDIR/re.c"
	for via in uprobe preload; do
		[ "$via" = preload ] || [ "$(id -u)" -eq 0 ] || continue
		rm -rf "$B"
		rec $via --mode light --alloc-sample 1 -- "$BATS_TEST_TMPDIR/re"
		checked
		run jq -r 'select(.type == "summary") | "\(.samples) \(.frees) \(.malformed)"' "$A/alloc.jsonl"
		assert_output "202 202 0"
		run jq -r 'select(.type == "inc") | "\(.live_samples) \(.exited)"' "$A/alloc.jsonl"
		assert_output "0 true"
	done
}

# a dynamically linked program that loads no C library (its own _start,
# ld.so only): no libc to put uprobes on; auto takes the preload path (as
# it always does, saying why), --alloc-via uprobe is unavailable with that reason
@test "no C library in the closure: auto takes preload, --alloc-via uprobe is unavailable" {
	[ "$(id -u)" -eq 0 ] || skip "the uprobe path needs root"
	command -v gcc >/dev/null || skip "no gcc"
	printf '%s\n' 'void _start(void) { __asm__ volatile("mov $60,%%eax; xor %%edi,%%edi; syscall" ::: "memory"); }' \
		>"$BATS_TEST_TMPDIR/nolibc.c"
	interp=$(readelf -l /bin/true | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
	gcc -O1 -nostdlib -nostartfiles -fno-stack-protector -pie -Wl,--dynamic-linker="$interp" \
		-o "$BATS_TEST_TMPDIR/nolibc" "$BATS_TEST_TMPDIR/nolibc.c" || skip "cannot link a program without libc here"
	rec auto --mode light --alloc -- "$BATS_TEST_TMPDIR/nolibc"
	checked
	run jq -r 'select(.event == "attached") | .evidence' "$A/lifecycle.jsonl"
	assert_output --partial "the uprobe path was not taken: auto takes the preload path, confined to the cohort"
	run jq -r 'select(.type == "config") | .via' "$A/alloc.jsonl"
	assert_output preload
	rm -rf "$B"
	run pmurec -o "$B" --alloc-via uprobe --mode light --alloc -- "$BATS_TEST_TMPDIR/nolibc"
	assert_success
	run jq -r 'select(.event == "final") | "\(.status) \(.reason)"' "$A/lifecycle.jsonl"
	assert_output --partial "unavailable no C library (libc.so) in the objects"
}

# An allocator library before the C library (as jemalloc or tcmalloc):
# the preload path interposes it (the library comes after libpmu-alloc.so,
# whose dlsym(RTLD_NEXT) finds it), the uprobes on the C library never see
# it: --alloc-via uprobe is unavailable, naming the library.  100000 x 4096
# bytes at 64k: about 6250 samples, so +-20% is many standard deviations.
@test "an allocator library before the C library: preload samples it, uprobe is unavailable naming it" {
	command -v gcc >/dev/null || skip "no gcc"
	local T=$BATS_TEST_TMPDIR
	cat >"$T/bump.c" <<'C'
#include <string.h>
#include <sys/mman.h>
static char *heap, *top;
void *malloc(size_t n)
{
	if (!heap)
		top = heap = mmap(0, 1ul << 30, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *p = top;
	top += (n + 15) & ~15ul;
	return p;
}
void free(void *p) { (void)p; }
void *calloc(size_t a, size_t b) { return malloc(a * b); }
void *realloc(void *o, size_t n) { void *p = malloc(n); if (o) memcpy(p, o, n); return p; }
C
	printf '#include <stdlib.h>\nint main(void){ for (int i = 0; i < 100000; i++) { void *volatile p = malloc(4096); free(p); } return 0; }\n' >"$T/use.c"
	gcc -shared -fPIC -o "$T/libbump.so" "$T/bump.c"
	gcc -o "$T/use" "$T/use.c" -L"$T" -lbump -Wl,-rpath,"$T"
	rec preload --mode light --alloc-sample 64k -- "$T/use"
	checked
	n=$(jq -r 'select(.type == "summary") | .est_bytes' "$A/alloc.jsonl")
	within "$n" 327680000 491520000
	[ "$(id -u)" -eq 0 ] || skip "the uprobe path needs root"
	rm -rf "$B"
	run pmurec --mode light --alloc-via uprobe --alloc-sample 64k -o "$B" -- "$T/use"
	assert_success
	run jq -r 'select(.event == "final") | "\(.status) \(.reason)"' "$A/lifecycle.jsonl"
	assert_output --partial "unavailable its library '$T/libbump.so' defines malloc before the C library"
}
