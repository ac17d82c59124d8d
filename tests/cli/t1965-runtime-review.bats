#!/usr/bin/env bats
# Adversarial review of issue 18 (probes and alloc collectors, their
# validator rules): each test reproduces one defect found in review and
# fails until it is fixed.  The programs are written and compiled here.

load helpers

setup() {
	needs_backend linux
	command -v gcc >/dev/null || skip "no gcc"
	B=$BATS_TEST_TMPDIR/r.bundle
	A=$B/data/collectors/alloc
	P=$B/data/collectors/probes
	S=$BATS_TEST_TMPDIR
}

# alloc_rec VIA ARGS...: pmurec --alloc-via VIA; skip where the path cannot run here
alloc_rec() {
	local via=$1 st
	shift
	rm -rf "$B"
	run pmurec -o "$B" --alloc-via "$via" "$@"
	assert_success
	st=$(jq -r 'select(.event == "final") | .status' "$A/lifecycle.jsonl")
	[ "$st" != unavailable ] ||
		skip "alloc collector unavailable ($via): $(jq -r 'select(.event == "final") | .reason' "$A/lifecycle.jsonl")"
	assert_equal "$st" ok
}

# ---- the LD_PRELOAD interposer in odd programs ------------------------------------

# The interposer checks PMUREC_ALLOC_FD once, in its constructor.  A program
# that closes every fd above 2 (as daemons do) and opens sockets of its own
# gets the freed number back; the interposer then sends its binary records
# into the program's own socket (alloc-preload.c send_rec: send(chan, ...)
# on whatever chan now is).  Fixed on fixA (each process connects its own
# socket, identity-checked before each send): a regression test now.
@test "preload: a program that closes its fds and reopens sockets receives none of the interposer's records" {
	cat >"$S/fdreuse.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
int main(void)
{
	int sv[128][2], n;
	long foreign = 0;
	char buf[65536];

	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	for (n = 0; n < 128; n++)
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv[n]))
			break;
	for (int i = 0; i < 16384; i++) {
		void *volatile p = malloc(4096); /* volatile: not optimized away */
		free(p);
	}
	for (int i = 0; i < n; i++)
		for (int k = 0; k < 2; k++) {
			ssize_t r;
			while ((r = recv(sv[i][k], buf, sizeof(buf), MSG_DONTWAIT)) > 0)
				foreign += r;
		}
	printf("foreign=%ld\n", foreign);
	return 0;
}
C
	gcc -O1 -o "$S/fdreuse" "$S/fdreuse.c"
	alloc_rec preload --mode light --alloc-sample 4096 -- "$S/fdreuse"
	assert_output --partial "foreign=0"
}

# A call that fails allocates nothing, but both paths sample it by its
# requested size (alloc-preload.c malloc/calloc/posix_memalign: crossing(n)
# before the result is known; bpf/alloc.bpf.c the same at the return), so
# est_bytes ("estimate: bytes allocated", lib/spec.c) counts 4 PiB that
# were never allocated.  And a realloc that fails leaves its block where it
# was, yet both paths send a free of it (p != old with p NULL), so a block
# live at exit is reported freed.  (Failed at int bb7d1f7; fixed by alloc
# 8900ac5, merged in int 6694d1a: kept as a regression test.)
@test "failed allocations are not bytes allocated, and a failed realloc frees nothing (preload and uprobe)" {
	cat >"$S/failalloc.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void)
{
	size_t huge = (size_t)1 << 50; /* past the 47-bit address space: every call fails */
	void *q = NULL;
	int failed = 0;
	char *keep = malloc(1 << 20), *r;

	memset(keep, 1, 1 << 20);
	failed += malloc(huge) == NULL;
	failed += calloc(huge, 1) == NULL;
	failed += posix_memalign(&q, 64, huge) != 0;
	r = realloc(keep, huge); /* fails: keep stays allocated, live at exit */
	failed += r == NULL;
	printf("failed=%d\n", failed);
	fflush(stdout);
	return keep[7] == 1 ? 0 : 1;
}
C
	gcc -O0 -o "$S/failalloc" "$S/failalloc.c"
	for via in preload uprobe; do
		[ "$via" = preload ] || [ "$(id -u)" -eq 0 ] || continue
		alloc_rec $via --mode light --alloc-sample 64k -- "$S/failalloc"
		assert_output --partial "failed=4"
		# the program allocated about 1 MiB (and the C library a few KiB)
		run jq -r 'select(.type == "summary") | .est_bytes < 1073741824' "$A/alloc.jsonl"
		[ "$output" = true ] || fail "$via: est_bytes $(jq -r 'select(.type == "summary") | .est_bytes' "$A/alloc.jsonl") counts failed allocations"
		# the 1 MiB block (sampled with p = 1 - exp(-16)) is never freed
		seq=$(jq -r 'select(.type == "sample" and .size == 1048576 and .addr) | .seq' "$A/alloc.jsonl" | head -1)
		[ -n "$seq" ] || fail "$via: the 1 MiB block was not sampled"
		run jq -r "select(.type == \"free\" and .sample_seq == $seq) | .t_ns" "$A/alloc.jsonl"
		[ -z "$output" ] || fail "$via: a free of the 1 MiB block, which the failed realloc left allocated"
	done
}

# Threads that realloc, posix_memalign and aligned_alloc, and a fork whose
# child frees the parent's blocks and dlopen()s: the bundle of either path
# validates, loss aside.  At int (bb7d1f7): the preload path never writes
# 'probed' (LIFECYCLE, every preload bundle), and on both paths a realloc
# that moves its block frees the old one inside the C library before the
# free record is made, so another thread's sample of the same address
# comes first; alloc.c live_put then drops the former sample from
# live_samples without a free record: "live_samples N is not its samples
# less its frees" (ALLOC-SHAPE).  Passes at int 4687905 (alloc 8f8a49d,
# 8900ac5), but the race itself remains: gone(old) still follows
# real_realloc(), so the free can name the other thread's sample.
@test "threads, realloc, fork and dlopen under the interposer and the uprobes: the bundle validates" {
	cat >"$S/hostile.c" <<'C'
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static void *blocks[4096];
static void *worker(void *a)
{
	(void)a;
	for (int i = 0; i < 20000; i++) {
		void *p = realloc(NULL, 1000 + i % 3000), *q = NULL;
		p = realloc(p, 5000);
		free(NULL);
		if (!posix_memalign(&q, 64, 2048))
			free(q);
		free(aligned_alloc(64, 4096));
		free(p);
	}
	return NULL;
}
int main(void)
{
	pthread_t t[4];
	pid_t c;
	int st;

	for (int i = 0; i < 4096; i++)
		blocks[i] = malloc(4096);
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	c = fork();
	if (c == 0) {
		for (int i = 0; i < 4096; i++)
			free(blocks[i]);
		void *h = dlopen("libm.so.6", RTLD_NOW);
		if (h)
			dlclose(h);
		_exit(0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	waitpid(c, &st, 0);
	printf("child=%d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	return 0;
}
C
	gcc -O0 -pthread -o "$S/hostile" "$S/hostile.c" -ldl
	for via in preload uprobe; do
		[ "$via" = preload ] || [ "$(id -u)" -eq 0 ] || continue
		rm -rf "$B"
		run pmurec --mode full --allow-loss --alloc-via $via --alloc-sample 4096 -o "$B" -- "$S/hostile"
		assert_output --partial "child=0"
		pmuvalidate --json "$B" >"$S/r.json" || :
		run ids "$S/r.json"
		[ "$output" = "" ] || [ "$output" = LOSS ] || fail "$via: pmuvalidate: $output"
	done
}

# ---- the probes collector ----------------------------------------------------------

# The probes collector attaches to the objects of the executable's DT_NEEDED
# closure, to images exec'd later, and (fixB) to objects the cohort maps
# later, found on the drain timer at most once a second: a plugin with pmu
# probes loaded by dlopen() is attached then.  While PMUREC_PROBES=pmu the
# control channel is off, so the plugin's hits before that late attach are
# not seen: the bundle must say from when they are (its probe records'
# attached_ns, pmurec(1) RUNTIME PROBES), and hits after it must arrive.
@test "probes: a dlopen()ed plugin's pmu probes are attached late, saying from when; later hits arrive" {
	needs_ebpf
	cat >"$S/plug.c" <<'C'
#include "pmu/probe.h"
void plug(void)
{
	PMU_MARK("plugin-mark");
	PMU_SPAN_BEGIN(77, 0, "plugin-span");
	PMU_SPAN_END(77);
}
C
	cat >"$S/dlmain.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>
#include "pmu/probe.h"
int main(int argc, char **argv)
{
	struct timespec ts = { 3, 0 };
	void *h;
	void (*f)(void);

	(void)argc;
	PMU_MARK("main-mark");
	if (!(h = dlopen(argv[1], RTLD_NOW)) || !(f = (void (*)(void))dlsym(h, "plug"))) {
		fprintf(stderr, "dlmain: %s\n", dlerror());
		return 1;
	}
	f();                    /* before any late attach: not seen */
	nanosleep(&ts, NULL);   /* the collector scans the maps within a second or two */
	f();                    /* after it: seen */
	return 0;
}
C
	inc=$BATS_TEST_DIRNAME/../../include
	gcc -O1 -I"$inc" -fPIC -shared -o "$S/libplug.so" "$S/plug.c"
	gcc -O1 -I"$inc" -o "$S/dlmain" "$S/dlmain.c" -ldl
	run pmurec --mode full -o "$B" -- "$S/dlmain" "$S/libplug.so"
	assert_success
	st=$(jq -r 'select(.event == "final") | .status' "$P/lifecycle.jsonl")
	[ "$st" = ok ] || skip "probes collector $st: $(jq -r 'select(.event == "final") | .reason' "$P/lifecycle.jsonl")"
	run pmuvalidate "$B"
	assert_success
	main_t=$(jq -r 'select(.type == "mark" and .name == "main-mark") | .t_ns' "$P/probes.jsonl")
	[ -n "$main_t" ] || fail "main's own mark is missing"
	# the plugin's probes: attached, later than the program's start, saying so
	run jq -r --argjson t "$main_t" 'select(.type == "probe" and (.binary | endswith("libplug.so")) and .name == "mark")
		| "\(.attached) \(.attached_ns > $t) \(.hits)"' "$P/probes.jsonl"
	assert_output "true true 1"
	# the second call's mark and span arrived; the first call's did not and is not invented
	run jq -r 'select(.type == "mark" and .name == "plugin-mark") | .source' "$P/probes.jsonl"
	assert_output "pmu:mark"
	run jq -r 'select(.type == "span" and .name == "plugin-span") | .id' "$P/probes.jsonl"
	assert_output "77"
}

# The kernel reads a probe's string argument with bpf_probe_read_user_str(),
# which cannot fault a page in: a literal on a page the program has not
# touched yet reads as an error (bpf/probes.bpf.c sets PMU_PRB_F_STR_BAD),
# and probes.c never looks at the flags: the record is written with name ""
# as if the program had said "".  A program whose first probe is
# PMU_MARK("startup-end") gets a mark named "" and no startup-end, and
# nothing (loss, malformed, a flag in the record) says so.
@test "probes: a string argument the kernel could not read is not written as an empty name" {
	needs_ebpf
	cat >"$S/marks.c" <<'C'
#include "pmu/probe.h"
int main(void)
{
	PMU_MARK("startup-end"); /* the first probe: its literal's page never touched */
	PMU_MARK("warmup-end");
	PMU_MARK("startup-end");
	return 0;
}
C
	gcc -O1 -I"$BATS_TEST_DIRNAME/../../include" -o "$S/marks" "$S/marks.c"
	run pmurec --mode full -o "$B" -- "$S/marks"
	assert_success
	st=$(jq -r 'select(.event == "final") | .status' "$P/lifecycle.jsonl")
	[ "$st" = ok ] || skip "probes collector $st: $(jq -r 'select(.event == "final") | .reason' "$P/lifecycle.jsonl")"
	run jq -r 'select(.type == "mark") | "<\(.name)>"' "$P/probes.jsonl"
	refute_line "<>"
	# three marks written, or the unread ones counted somewhere
	marks=$(jq -r 'select(.type == "summary") | .marks' "$P/probes.jsonl")
	other=$(jq -r 'select(.type == "summary") | .lost + .malformed + .unmatched' "$P/probes.jsonl")
	[ $((marks + other)) -ge 3 ] || fail "$marks marks and nothing counted for the rest"
}

# ---- the validator on tampered alloc streams ----------------------------------------

# al_case EDIT: mkfixture runtime with R = the records of alloc.jsonl (R[0]
# the header) edited by the Python statements EDIT, re-bagged; prints the
# sorted error check IDs of pmuvalidate --json
al_case() {
	local b
	b=$(mk "b$RANDOM" runtime)
	$PY - "$b/data/collectors/alloc/alloc.jsonl" <<<"import json, sys
p = sys.argv[1]
R = [json.loads(l) for l in open(p)]
def at(**m): return [k for k, r in enumerate(R) if all(r.get(a) == v for a, v in m.items())][0]
$1
open(p, 'w').write(''.join(json.dumps(r, separators=(',', ':')) + '\n' for r in R))"
	rebag "$b"
	pmuvalidate --json "$b" >"$BATS_TEST_TMPDIR/r.json"
	ids "$BATS_TEST_TMPDIR/r.json"
}

# lib/validate_rt.c on_alloc, "free": a free's sample_seq is only checked to
# be an earlier seq; the sample it names may be of another incarnation
# (another process's address space), freed already, or a failed allocation.
@test "ALLOC-SHAPE: a free of a sample of another incarnation is refused" {
	run al_case "R[at(type='free', inc='i3')]['sample_seq'] = 13 # sample 13 is i2's, live at i2's exit"
	assert_output ALLOC-SHAPE
}

@test "ALLOC-SHAPE: a sample freed twice is refused" {
	run al_case "R[at(type='free', sample_seq=12)]['sample_seq'] = 11 # 11 is freed already"
	assert_output ALLOC-SHAPE
}

# lib/validate_rt.c inc_rec: live_est_bytes is checked only against est_bytes
# and against zero, not against the sum of the unfreed samples' est_bytes
# that the spec (lib/spec.c al_inc) says it is.
@test "ALLOC-ESTIMATE: an inc's live_est_bytes is the sum of its unfreed samples' est_bytes" {
	run al_case "R[at(type='inc', inc='i2')]['live_est_bytes'] = 600000"
	assert_output ALLOC-ESTIMATE
	# i3 frees sample 14 instead of 15: the live sample is another, of other bytes
	run al_case "R[at(type='free', inc='i3')]['sample_seq'] = 14"
	assert_output ALLOC-ESTIMATE
}

# ---- environment -----------------------------------------------------------------

# PMUREC_PROBES=pmu turns the control channel off in include/pmu/probe.h.
# probes.c sets it only when it listens, but never clears one it inherited
# (from an outer pmurec whose root it is: a nested recording, or a user's
# shell): a pmurec that does not listen (here --mode light, where the
# probes collector is not requested) hands the command PMUREC_CTL_FD and
# PMUREC_PROBES=pmu together, and the spans reach neither stream.
@test "an inherited PMUREC_PROBES does not silence the control channel of a pmurec that does not listen" {
	run env PMUREC_PROBES=pmu pmurec --mode light -o "$B" -- pmu-example --requests 10 --quiet
	assert_success
	run jq -r 'select(.type == "span") | .name' "$B/data/spans.jsonl"
	[ "${#lines[@]}" -eq 20 ] || fail "${#lines[@]} spans via ctl, pmu-example made 20 (10 requests, 10 work)"
}

# ---- the analyzer ------------------------------------------------------------------

# analyze/runtime.c pass_index indexes only "span" records, so the child of
# a span that began and never ended (an "unended" record, which the
# validator's span rules resolve a parent to) is printed under "?", which
# the text defines as "a parent is not in the stream".
@test "pmuanalyze: the child of an unended span is under its parent's name, not '?'" {
	b=$(mk u runtime)
	$PY - "$b/data/collectors/probes/probes.jsonl" <<'PYEOF'
import json, sys
p = sys.argv[1]
R = [json.loads(l) for l in open(p)]
def at(**m): return [k for k, r in enumerate(R) if all(r.get(a) == v for a, v in m.items())][0]
r = R.pop(at(type='span', id='100')); R[-1]['spans'] -= 1
u = dict(type='unended', t_ns=1520000000, what='span', inc='i2', pid=9001, tid=9001, id='100', name='request', begin_ns=r['begin_ns'])
R.insert(at(type='allocs'), u); R[-1]['unended'] += 1
open(p, 'w').write(''.join(json.dumps(r, separators=(',', ':')) + '\n' for r in R))
PYEOF
	rebag "$b"
	run pmuvalidate "$b"
	assert_success
	run pmuanalyze "$b"
	assert_success
	refute_output --partial "?>work"
}

# ---- the validator on tampered probes streams ----------------------------------------

# pr_case EDIT: as al_case, on probes.jsonl
pr_case() {
	local b
	b=$(mk "b$RANDOM" runtime)
	$PY - "$b/data/collectors/probes/probes.jsonl" <<<"import json, sys
p = sys.argv[1]
R = [json.loads(l) for l in open(p)]
def at(**m): return [k for k, r in enumerate(R) if all(r.get(a) == v for a, v in m.items())][0]
$1
open(p, 'w').write(''.join(json.dumps(r, separators=(',', ':')) + '\n' for r in R))"
	rebag "$b"
	pmuvalidate --json "$b" >"$BATS_TEST_TMPDIR/r.json"
	ids "$BATS_TEST_TMPDIR/r.json"
}

# A probe record's hits are the kernel's count of the cohort's hits of that
# probe (bpf/probes.bpf.c counts after the cohort filter), so the records
# made from a probe cannot outnumber its hits.  lib/validate_rt.c checks
# only that the summary's hits are the probe records' sum: marks from a
# pmu:mark that was hit 0 times, a third mark from 2 hits, and python GC
# pauses from a gc__start that never fired all validate.
@test "PROBES-SHAPE: records made from a probe do not outnumber its hits" {
	run pr_case "R[at(type='probe', provider='pmu', name='mark')]['hits'] = 0; R[-1]['hits'] -= 2"
	assert_output PROBES-SHAPE
	run pr_case "m = dict(R[at(type='mark', name='warmup-end')]); m['t_ns'] += 1
R.insert(at(type='mark', name='warmup-end') + 1, m); R[-1]['marks'] += 1"
	assert_output PROBES-SHAPE
	run pr_case "k = at(type='probe', provider='python', name='gc__start'); R[-1]['hits'] -= R[k]['hits']; R[k]['hits'] = 0"
	assert_output PROBES-SHAPE
}

# A program with its own malloc (jemalloc or tcmalloc linked in, or a
# bump allocator as here): the executable's definitions win the symbol
# lookup over both libc's (the uprobes) and libpmu-alloc.so's (the
# interposer comes after the executable).  Both paths then say "ok" with 0
# samples, and pmuanalyze prints "~0 B allocated" for 64 MiB: absence shown
# as zero.  The issue: "unsupported allocators -> unavailable with the
# reason" (the executable's dynamic symbols define malloc: detectable at
# probe, as the static binary is).  Fixed on fixA (unavailable, the
# reason naming the definition): a regression test now.
@test "a program with its own malloc: not 'ok' with 0 samples on either path" {
	cat >"$S/ownmalloc.c" <<'C'
#include <stdio.h>
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
int main(void)
{
	for (int i = 0; i < 16384; i++) {
		char *volatile p = malloc(4096);
		p[0] = 1;
		free(p);
	}
	printf("allocated=%d\n", 16384 * 4096);
	return 0;
}
C
	gcc -O0 -o "$S/ownmalloc" "$S/ownmalloc.c"
	for via in preload uprobe; do
		[ "$via" = preload ] || [ "$(id -u)" -eq 0 ] || continue
		rm -rf "$B"
		run pmurec -o "$B" --mode light --alloc-via $via --alloc-sample 64k -- "$S/ownmalloc"
		assert_success
		st=$(jq -r 'select(.event == "final") | .status' "$A/lifecycle.jsonl")
		n=$(jq -r 'select(.type == "summary") | .samples' "$A/alloc.jsonl" 2>/dev/null || echo 0)
		[ "$st" != ok ] || [ "${n:-0}" -gt 500 ] || fail "$via: status ok with ${n:-0} samples for 64 MiB allocated by the program's own malloc"
	done
}

# The interposer's loss counters (alloc-preload.c lost_records, lost_samples,
# lost_live) are process-wide statics that a fork() copies: each child that
# exits through exit() sends the parent's losses again in its final
# PMU_ALLOC_REC_LOST (fini), so the stream's loss is multiplied by the
# number of children and each child's inc record says it dropped the
# parent's samples, though it allocated nothing.  (Its live table and its
# random countdown are copied too: children sample in lock step.)  The
# program stops pmurec (its parent) while it floods the channel, so that
# there is loss to inherit however fast pmurec drains.  Fixed on fixA
# (pthread_atfork child handler): a regression test now.
@test "preload: a forked child does not report its parent's losses again" {
	cat >"$S/forkloss.c" <<'C'
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void)
{
	pid_t rec = getppid(); /* pmurec */

	kill(rec, SIGSTOP); /* it reads nothing meanwhile: the channel fills, loss */
	for (int i = 0; i < 300000; i++) {
		void *volatile p = malloc(64);
		free(p);
	}
	kill(rec, SIGCONT);
	for (int k = 0; k < 3; k++) {
		pid_t c = fork();
		if (c == 0)
			exit(0); /* allocates nothing; the destructors run */
		waitpid(c, NULL, 0);
	}
	printf("done\n");
	return 0;
}
C
	gcc -O0 -o "$S/forkloss" "$S/forkloss.c"
	run pmurec -o "$B" --mode light --allow-loss --alloc-via preload --alloc-sample 64 -- "$S/forkloss"
	assert_success
	run jq -r 'select(.type == "inc") | "\(.inc) \(.dropped)"' "$A/alloc.jsonl"
	parent=$(jq -r 'select(.type == "inc" and .inc == "i1") | .dropped' "$A/alloc.jsonl")
	[ "$parent" -gt 0 ] || skip "the channel kept up: no loss to inherit"
	for i in i2 i3 i4; do
		d=$(jq -r "select(.type == \"inc\" and .inc == \"$i\") | .dropped" "$A/alloc.jsonl")
		[ "$d" -eq 0 ] || fail "child $i allocated nothing, yet dropped $d (the parent's $parent)"
	done
}

# probes_rec_check: skip unless the probes collector was ok in $B
probes_ok() {
	local st
	st=$(jq -r 'select(.event == "final") | .status' "$P/lifecycle.jsonl")
	[ "$st" = ok ] || skip "probes collector $st: $(jq -r 'select(.event == "final") | .reason' "$P/lifecycle.jsonl")"
}

# Spans pair by (incarnation, id), and a fork is another incarnation; but
# probes.c writes a span's parent id as the program gave it, unchecked.  A
# prefork server's worker that begins a span whose parent is the parent
# process's span (its id copied across the fork) gets a span record whose
# parent is in no span of its incarnation: pmurec's own bundle fails
# SPAN-PARENT (failed at int bb7d1f7; usdt 2fc656b writes it without the
# link: a regression test now).  (The span strings are on the stack here, so that only the
# parent is at stake.)
@test "probes: a forked child's span naming its parent process's span keeps the bundle valid" {
	needs_ebpf
	cat >"$S/forkspan.c" <<'C'
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "pmu/probe.h"
int main(void)
{
	char nm[32], cn[32];

	strcpy(nm, "server");
	strcpy(cn, "request");
	PMU_SPAN_BEGIN(5, 0, nm);
	pid_t c = fork();
	if (c == 0) {
		cn[0] = 'r';
		PMU_SPAN_BEGIN(6, 5, cn); /* 5: the parent process's span */
		PMU_SPAN_END(6);
		_exit(0);
	}
	waitpid(c, NULL, 0);
	usleep(100000);
	PMU_SPAN_END(5);
	return 0;
}
C
	gcc -O1 -I"$BATS_TEST_DIRNAME/../../include" -o "$S/forkspan" "$S/forkspan.c"
	run pmurec --mode full -o "$B" -- "$S/forkspan"
	assert_success
	probes_ok
	run jq -r 'select(.type == "span") | .name' "$P/probes.jsonl"
	assert_line request
	run pmuvalidate "$B"
	assert_success
}

# After fork() the child has no page-table entries for file-backed pages
# (they are faulted in again on first use), so bpf_probe_read_user_str()
# fails on a literal the parent had read a moment before: every forked
# worker's first probe on each page of strings writes name "" (see the
# string test above), which the schema refuses ('name' must be a non-empty
# string): pmurec writes an invalid bundle for a prefork program.
@test "probes: span names of a forked worker are read (the bundle validates)" {
	needs_ebpf
	cat >"$S/prefork.c" <<'C'
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "pmu/probe.h"
int main(void)
{
	printf("%s %s\n", "server", "request"); /* the parent reads the literals */
	for (int k = 0; k < 2; k++) {
		pid_t c = fork();
		if (c == 0) {
			PMU_SPAN_BEGIN(1, 0, "request");
			PMU_SPAN_END(1);
			_exit(0);
		}
		waitpid(c, NULL, 0);
	}
	return 0;
}
C
	gcc -O1 -I"$BATS_TEST_DIRNAME/../../include" -o "$S/prefork" "$S/prefork.c"
	run pmurec --mode full -o "$B" -- "$S/prefork"
	assert_success
	probes_ok
	run jq -r 'select(.type == "span") | "<\(.name)>"' "$P/probes.jsonl"
	refute_line "<>"
	run pmuvalidate "$B"
	assert_success
}

# A program that closes every fd above 2 (daemons do, and close_range(2)
# makes it one call) closes the interposer's channel: every send fails
# (EBADF), counted in lost_records, whose final message goes out on the
# same closed fd.  The collector hears nothing and writes status ok, 0
# samples, 0 lost, for 64 MiB allocated: loss not counted.  Fixed on
# fixA (the interposer reconnects when its fd is gone): a regression test now.
@test "preload: a program that closes the interposer's fd: its samples or their loss are in the bundle" {
	cat >"$S/closefds.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(void)
{
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	for (int i = 0; i < 16384; i++) {
		void *volatile p = malloc(4096);
		free(p);
	}
	printf("allocated=%d\n", 16384 * 4096);
	return 0;
}
C
	gcc -O0 -o "$S/closefds" "$S/closefds.c"
	run pmurec -o "$B" --mode light --allow-loss --alloc-via preload --alloc-sample 64k -- "$S/closefds"
	assert_success
	st=$(jq -r 'select(.event == "final") | .status' "$A/lifecycle.jsonl")
	read -r n lost < <(jq -r 'select(.type == "summary") | "\(.samples) \(.lost)"' "$A/alloc.jsonl")
	# 64 MiB at a 64 KiB mean: about 1000 samples
	[ "$st" != ok ] || [ "${n:-0}" -gt 500 ] || [ "${lost:-0}" -gt 500 ] ||
		fail "status $st with $n samples and $lost lost for 64 MiB allocated"
}
