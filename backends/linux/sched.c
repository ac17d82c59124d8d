/*
 * The sched collector (spec 1.7, section 23): where each cohort thread's
 * wall time goes (on a CPU, on a runqueue, sleeping, blocked, other) and
 * every off-CPU interval with its state, the system call in progress, the
 * waker and, when sampling with frame-pointer chains, the user call chain.
 *
 * The kernel side is bpf/sched.bpf.c (its comment has the state machine);
 * this file loads it at open (its options are read-only data, and the
 * root enters its members map then), consumes its ring on the loop's timer, attributes each
 * record to a cohort incarnation, and writes collectors/sched/sched.jsonl
 * as it goes: config, then off, thread and loss records in t_ns order
 * through a small reorder heap (what is older than now - 50 ms is released
 * at each drain, everything at the stop; a record of a task the follower
 * has not reported yet waits up to 3 s), summary last.
 *
 * Memory stays flat: the heap takes at most HEAP_MAX records out of the
 * ring.  When the writer is slower than the cohort switches, the heap
 * fills and the rest stays in the ring (back-pressure): the ring, memory
 * the kernel holds (config.ring_bytes), fills in turn and counts what it
 * cannot take as loss.  At the stop, the threads still tracked join the
 * heap once the ring is empty (at most MAX_THREADS).
 *
 * Thread records: the kernel's for the threads that exited, and at the stop
 * one for each thread still tracked, read from the threads map after the
 * programs are detached.  start_ns is the thread's birth when it was born
 * in the run (sched_wakeup_new), else the later of the collector's open
 * and its incarnation's start: the time up to the first switch seen is
 * unobserved_ns.  So on + runq + sleep + blocked + other + unobserved =
 * t_ns - start_ns exactly.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "linux/caps.h"
#include "backend.h"
#include "collector.h"
#include "error.h"
#include "heap.h"
#include "lifecycle.h"
#include "linux/sampling.h"
#include "linux/schedrec.h"
#include "sysname.h"
#include "util.h"

#define REORDER_NS (50ull * 1000000ull)        /* what a drain may still receive out of order */
#define HOLD_NS (3ull * 1000000000ull)         /* how long a record of an unknown task waits */
#define DRAIN_NS (10ull * 1000000ull)          /* a drain gives the loop back after this */
/* the reorder heap's bound, in ring records (~360 bytes each: 6 MiB) */
#define HEAP_MAX 16384
#define RING_HELD (-ENOBUFS)                   /* on_sample: the heap is full, the rest stays in the ring */
#define CLAMP_NS 1000000ull                    /* an exit read this much after its incarnation's end */
#define DEFAULT_RING (16u << 20)
#define MAX_THREADS 65536

static const char REMEDY_PRIV[] __attribute__((unused)) =
	"run pmurec as root, or grant it CAP_BPF and CAP_PERFMON (setcap cap_bpf,cap_perfmon+ep)";
static const char REMEDY_BTF[] __attribute__((unused)) = "boot a kernel built with CONFIG_DEBUG_INFO_BTF=y";
static const char REMEDY_BUILD[] __attribute__((unused)) =
	"install clang, bpftool and libbpf-dev (Debian: apt-get install clang bpftool libbpf-dev) and rebuild pmu";
static const char REMEDY_KERNEL[] __attribute__((unused)) = "see the reason (a kernel with BPF ring buffers, tp_btf and BTF, Linux 5.8 or later)";

/* a record waiting in the reorder heap: a decoded kernel record, or a
 * thread read from the map at the stop (live) */
struct item {
	uint64_t t, seq;
	bool live;
	union pmu_sched_rec r;
};

struct sched {
	struct pmu_collector_env *env;
	bool unusable;
	char why[400], remedy[200];
	bool chains, allow_loss, opened, stopped;
	uint64_t min_off_ns;
	size_t ring_bytes;
	unsigned ncpu;
	const char *filter;
	uint64_t open_t;
	struct pmu_stream *ss;
	int err;
	struct pmu_heap heap;   /* of struct item, by (t, seq): at most HEAP_MAX ring records (+ the threads at the stop) */
	bool stalled;           /* full, and its oldest waits for its task */
	uint64_t stop_t;
	uint64_t live_seq;      /* seqs of the map's thread items, after the kernel's */
	uint64_t parked_seen;   /* parked exits collected from the map */
	uint64_t last_written;
	uint64_t offs, threads, short_offs, unattributed, lost, malformed, late, clamped;
	uint64_t clipped, cut;  /* off intervals and threads begun before their incarnation's start */
	struct clip *clip;      /* the clipped time by thread, until its thread record */
	size_t nclip;
	uint64_t lost_reserve, lost_map;
	char malformed_first[200];
#ifdef PMU_BPF_BUILT
	struct sched_bpf *skel;
	struct ring_buffer *ring;
#endif
};

static void unusable(struct sched *s, const char *remedy, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void unusable(struct sched *s, const char *remedy, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->why, sizeof(s->why), fmt, ap);
	va_end(ap);
	snprintf(s->remedy, sizeof(s->remedy), "%s", remedy);
	s->unusable = true;
	pmu_lc_unavailable_at(s->env->lc, pmu_now_mono_ns(), s->why, s->remedy);
}

/* ---- the reorder heap: a min-heap by (t, seq) ------------------------------ */

static bool before(const struct item *a, const struct item *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static bool item_less(const void *a, const void *b)
{
	return before(a, b);
}

#ifdef PMU_BPF_BUILT
static int heap_push(struct sched *s, const struct item *it)
{
	return pmu_heap_push(&s->heap, it);
}

static void heap_pop(struct sched *s)
{
	pmu_heap_pop(&s->heap, NULL);
}
#endif

/* ---- output ------------------------------------------------------------------ */

static void put(struct sched *s, json_t *rec)
{
	if (!rec) {
		s->err = s->err ? s->err : pmu_error(PMU_ERR_NOMEM, "out of memory");
		return;
	}
	if (s->err || !s->ss) {
		json_decref(rec);
		return;
	}
	s->err = s->env->out->put(s->ss, rec);
}

static void set_u(json_t *o, const char *k, uint64_t v)
{
	json_object_set_new(o, k, json_integer((json_int_t)v));
}

/* (from here to the #else: with the eBPF object only) */
#ifdef PMU_BPF_BUILT
static json_t *rec_of(const char *type, uint64_t t)
{
	json_t *o = json_object();

	json_object_set_new(o, "type", json_string(type));
	set_u(o, "t_ns", t);
	return o;
}

static void write_config(struct sched *s)
{
	json_t *c = json_object();

	json_object_set_new(c, "type", json_string("config"));
	json_object_set_new(c, "mechanism",
			    json_string("tp_btf sched_switch/sched_wakeup/sched_wakeup_new/sched_migrate_task/"
					"sched_process_exit (eBPF)"));
	json_object_set_new(c, "filter", json_string(s->filter));
	set_u(c, "ring_bytes", s->ring_bytes);
	set_u(c, "ncpus", s->ncpu);
	set_u(c, "min_off_ns", s->min_off_ns);
	json_object_set_new(c, "chains", json_string(s->chains ? "fp" : "none"));
	json_object_set_new(c, "clock", json_string("monotonic"));
	put(s, c);
}

static void put_ids(json_t *o, const struct pmu_incarnation *in, uint32_t tid)
{
	char inc[24];

	snprintf(inc, sizeof(inc), "i%d", in->id);
	json_object_set_new(o, "inc", json_string(inc));
	set_u(o, "pid", (uint64_t)in->pid);
	set_u(o, "tid", tid);
}

/* The time cut from a thread's off records that began before its
 * incarnation's start (wait by state: S 1, D 2, other 0; R has none). */
struct clip {
	int inc;
	uint32_t tid;
	uint64_t wait[4], runq;
};

static struct clip *clip_of(struct sched *s, int inc, uint32_t tid, bool make)
{
	for (size_t i = 0; i < s->nclip; i++)
		if (s->clip[i].inc == inc && s->clip[i].tid == tid)
			return &s->clip[i];
	if (!make)
		return NULL;
	if (s->nclip % 64 == 0) {
		struct clip *n = realloc(s->clip, (s->nclip + 64) * sizeof(*n));

		if (!n)
			return NULL;
		s->clip = n;
	}
	s->clip[s->nclip] = (struct clip){ .inc = inc, .tid = tid };
	return &s->clip[s->nclip++];
}

static void write_off(struct sched *s, const struct item *it, const struct pmu_incarnation *in)
{
	const struct pmu_sched_off *r = &it->r.off;
	json_t *o = rec_of("off", r->h.time_ns);
	uint64_t out = r->out_ns, wake = r->wake_ns;

	/* a follower that saw the incarnation start after the kernel did
	 * (ptrace: at its fork event): the interval starts there */
	if (out < in->start_ns) {
		struct clip *c = clip_of(s, in->id, r->tid, true);

		out = in->start_ns;
		wake = wake < out ? out : wake;
		s->clipped++;
		/* what the thread record must take out of the same buckets */
		if (c) {
			c->wait[r->state & 3] += (r->wake_ns - r->out_ns) - (wake - out);
			c->runq += (r->h.time_ns - r->wake_ns) - (r->h.time_ns - wake);
		}
	}
	set_u(o, "off_ns", r->h.time_ns - out);
	put_ids(o, in, r->tid);
	json_object_set_new(o, "state", json_string(pmu_sched_state_name(r->state)));
	if (r->state != PMU_SCHED_R)
		set_u(o, "wait_ns", wake - out);
	set_u(o, "runq_ns", r->h.time_ns - wake);
	if (r->nr >= 0) {
		const char *name = pmu_syscall_name(r->nr);
		char b[32];

		if (!name) {
			snprintf(b, sizeof(b), "syscall_%d", (int)r->nr);
			name = b;
		}
		json_object_set_new(o, "syscall", json_string(name));
	}
	if (r->waker_tid)
		set_u(o, "waker_tid", r->waker_tid);
	set_u(o, "cpu_out", r->cpu_out);
	set_u(o, "cpu_in", r->h.cpu);
	if (r->nchain) {
		char *b = malloc((size_t)r->nchain * 19 + 1);
		size_t n = 0;

		for (unsigned i = 0; b && i < r->nchain; i++)
			n += (size_t)sprintf(b + n, "%s0x%" PRIx64, i ? " " : "", (uint64_t)it->r.offc.chain[i]);
		if (b)
			json_object_set_new(o, "chain", json_string(b));
		free(b);
	}
	s->offs++;
	put(s, o);
}

static void write_thread(struct sched *s, const struct item *it, const struct pmu_incarnation *in, uint64_t t,
			 uint64_t on_ns)
{
	const struct pmu_sched_thread *r = &it->r.thread;
	uint64_t start = r->first_ns, first = r->first_ns;
	uint64_t b[5] = { r->runq_ns, on_ns, r->other_ns, r->sleep_ns, r->blocked_ns };
	json_t *o = rec_of("thread", t);

	if (!(r->flags & PMU_SCHED_BORN)) {
		/* there before its first switch seen: since the open, or its
		 * incarnation's start when that is later */
		uint64_t from = in->start_ns > s->open_t ? in->start_ns : s->open_t;

		start = from < r->first_ns ? from : r->first_ns;
	}
	if (start < in->start_ns) {
		/*
		 * Seen by the kernel before its incarnation's start as the
		 * follower saw it (ptrace: at its fork event): the totals
		 * begin there.  The time cut is taken from the thread's first
		 * states in the order a new thread goes through them (runnable,
		 * on a CPU, then stopped by the tracer), an estimate within the
		 * cut; counted in the lifecycle's evidence.
		 */
		uint64_t cut = in->start_ns - start;
		struct clip *c = clip_of(s, in->id, r->tid, false);

		if (c) {
			/* first what its clipped off records lost, bucket by bucket */
			uint64_t take[5] = { c->runq, 0, c->wait[0], c->wait[PMU_SCHED_S & 3], c->wait[PMU_SCHED_D & 3] };

			for (int i = 0; i < 5; i++) {
				uint64_t x = take[i] < b[i] ? take[i] : b[i];

				x = x < cut ? x : cut;
				b[i] -= x;
				cut -= x;
			}
			*c = s->clip[--s->nclip];
		}
		/* then its time before its first off interval: runnable until
		 * its first time on a CPU, then on it */
		if (r->first_on_ns > r->first_ns) {
			uint64_t x = r->first_on_ns - r->first_ns;

			x = x < b[0] ? x : b[0];
			x = x < cut ? x : cut;
			b[0] -= x;
			cut -= x;
		}
		for (int i = 1; i < 5 && cut; i++) {
			uint64_t x = b[i] < cut ? b[i] : cut;

			b[i] -= x;
			cut -= x;
		}
		start = in->start_ns;
		first = first > start ? first : start;
		s->cut++;
	}
	put_ids(o, in, r->tid);
	set_u(o, "start_ns", start);
	json_object_set_new(o, "exited", json_boolean(!it->live));
	set_u(o, "on_cpu_ns", b[1]);
	set_u(o, "runq_ns", b[0]);
	set_u(o, "sleep_ns", b[3]);
	set_u(o, "blocked_ns", b[4]);
	set_u(o, "other_ns", b[2]);
	set_u(o, "unobserved_ns", first - start);
	set_u(o, "voluntary", r->voluntary);
	set_u(o, "involuntary", r->involuntary);
	set_u(o, "migrations", r->migrations);
	s->threads++;
	put(s, o);
}

/*
 * Write one record; 1 when it must wait for its task (the follower has not
 * reported it yet), 0 when done with it.
 */
static int release_one(struct sched *s, const struct item *it, uint64_t now, bool final)
{
	const struct pmu_sched_hdr *h = &it->r.h;
	uint32_t tgid = h->kind == PMU_SCHED_REC_OFF ? it->r.off.tgid : it->r.thread.tgid;
	uint32_t tid = h->kind == PMU_SCHED_REC_OFF ? it->r.off.tid : it->r.thread.tid;
	const struct pmu_incarnation *in = pmu_cohort_find(s->env->cohort, (pid_t)tgid, (pid_t)tid, it->t, it->t);
	uint64_t t = it->t, on = 0;

	if (!in && h->kind == PMU_SCHED_REC_THREAD && it->t > CLAMP_NS) {
		/*
		 * The exit is read at sched_process_exit, which the follower
		 * may have read a little earlier as its incarnation's end: the
		 * record ends there, the on-CPU time after it left out (the
		 * thread was on a CPU, exiting).
		 */
		const struct pmu_incarnation *e = pmu_cohort_find(s->env->cohort, (pid_t)tgid, (pid_t)tid,
								  it->t - CLAMP_NS, it->t - CLAMP_NS);

		if (!e)
			e = pmu_cohort_find(s->env->cohort, (pid_t)tgid, (pid_t)tid, it->r.thread.first_ns,
					    it->r.thread.first_ns);
		if (e && e->ended && e->end_ns < it->t && it->t - e->end_ns <= CLAMP_NS &&
		    it->r.thread.on_ns >= it->t - e->end_ns && e->end_ns >= it->r.thread.first_ns) {
			in = e;
			t = e->end_ns;
			s->clamped++;
		}
	}
	if (!in && !final && s->env->stops != PMU_STOPS_BEFORE_RUN && now < it->t + HOLD_NS)
		return 1;
	if (!in) {
		s->unattributed++;
		return 0;
	}
	if (t < s->last_written) {
		s->late++;
		return 0;
	}
	s->last_written = t;
	if (h->kind == PMU_SCHED_REC_OFF)
		write_off(s, it, in);
	else {
		on = it->r.thread.on_ns - (it->t - t);
		write_thread(s, it, in, t, on);
	}
	return 0;
}

/* Release what is older than limit, at most max records (final: nothing
 * waits for its task). */
static void release(struct sched *s, uint64_t limit, uint64_t now, bool final, size_t max)
{
	while (s->heap.n && ((const struct item *)pmu_heap_top(&s->heap))->t <= limit && max--) {
		if (release_one(s, pmu_heap_top(&s->heap), now, final))
			break;
		heap_pop(s);
	}
}

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/capability.h>
#include <sys/syscall.h>

#include "linux/bpf/cohort.h"
#include "sched.skel.h"

/* libbpf's messages: the last ones kept for the reason, never printed */
static char lb_log[1024];

static int lb_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[512];
	size_t n, have;

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = ' ';
	n = strlen(line);
	have = strlen(lb_log);
	if (have + n >= sizeof(lb_log)) {
		memmove(lb_log, lb_log + have / 2, have - have / 2 + 1);
		have = strlen(lb_log);
	}
	if (have + n < sizeof(lb_log))
		memcpy(lb_log + have, line, n + 1);
	return 0;
}

static void read_map(struct sched *s, uint64_t t, bool parked_only);

static int on_sample(void *ctx, void *data, size_t len)
{
	struct sched *s = ctx;
	struct item it = { 0 };

	if (pmu_sched_decode(data, len, &it.r)) {
		if (!s->malformed++)
			snprintf(s->malformed_first, sizeof(s->malformed_first), "%s", pmu_error_detail());
		return 0;
	}
	it.t = it.r.h.time_ns;
	it.seq = it.r.h.seq;
	if (heap_push(s, &it))
		s->err = s->err ? s->err : PMU_ERR_NOMEM;
	/* full: the ring keeps the rest (libbpf stops after this record) */
	return s->heap.n >= HEAP_MAX ? RING_HELD : 0;
}

/* Take what the heap has room for out of the ring: true when records were
 * left there (the heap is full). */
static bool take(struct sched *s)
{
	int n;

	if (!s->ring)
		return false;
	if (s->heap.n >= HEAP_MAX)
		return true;
	n = ring_buffer__consume(s->ring);
	if (n == RING_HELD)
		return true;
	if (n < 0 && !s->err)
		s->err = pmu_error(PMU_ERR_IO, "cannot drain the sched ring: %s", strerror(-n));
	return false;
}

/*
 * Open and load the programs and size their maps, at probe: before the
 * root is forked, so that libbpf's reading of the kernel's BTF and the
 * verifier (0.1-0.3 s here) are not the held root's time.  false: the
 * collector is unavailable (unusable() said why).
 */
static bool sched_load(struct sched *s)
{
	libbpf_print_fn_t old;
	int e;

	/* the cohort is the process tree, as the follower follows it, never
	 * its cgroup (cohort.bpf.h) */
	s->filter = "members";
	lb_log[0] = 0;
	old = libbpf_set_print(lb_print);
	s->skel = sched_bpf__open();
	if (!s->skel) {
		e = errno;
		libbpf_set_print(old);
		unusable(s, REMEDY_KERNEL, "cannot open the sched bpf object: %s; %s", strerror(e), lb_log);
		return false;
	}
	s->skel->rodata->min_off_ns = s->min_off_ns;
	s->skel->rodata->chains = s->chains;
	if (bpf_map__set_max_entries(s->skel->maps.rb, (uint32_t)s->ring_bytes) ||
	    bpf_map__set_max_entries(s->skel->maps.threads, MAX_THREADS)) {
		e = errno;
		libbpf_set_print(old);
		unusable(s, REMEDY_KERNEL, "cannot size the sched maps: %s", strerror(e));
		return false;
	}
	if ((e = sched_bpf__load(s->skel))) {
		libbpf_set_print(old);
		unusable(s, -e == EPERM ? REMEDY_PRIV : REMEDY_KERNEL, "the kernel refused the sched programs: %s; %s",
			 strerror(-e), lb_log);
		return false;
	}
	libbpf_set_print(old);
	return true;
}

static int sched_open(void *state, pid_t root, uint64_t t)
{
	struct sched *s = state;
	struct pmu_collector_env *env = s->env;
	libbpf_print_fn_t old;
	char ev[400];
	int e;

	if (!env->followed)
		return 0;
	pmu_lc_step(env->lc, "opened", t);
	s->open_t = t;
	if (!s->skel)
		return 0; /* the load failed at probe: unavailable, and why */
	lb_log[0] = 0;
	old = libbpf_set_print(lb_print);
	{
		/* the root, held behind the launch barrier: in the cohort (and
		 * its thread tracked) from its exec; attach mode: from now */
		__u32 k = (__u32)root;
		__u64 v = env->cfg->attach ? PMU_COHORT_ANY : PMU_COHORT_PRE_EXEC;

		if (bpf_map__update_elem(s->skel->maps.pmu_members, &k, sizeof(k), &v, sizeof(v), BPF_ANY)) {
			e = errno;
			libbpf_set_print(old);
			unusable(s, REMEDY_KERNEL, "cannot add the root %d to the sched cohort filter: %s", (int)root,
				 strerror(e));
			return 0;
		}
	}
	if ((e = sched_bpf__attach(s->skel))) {
		libbpf_set_print(old);
		unusable(s, -e == EPERM ? REMEDY_PRIV : REMEDY_KERNEL, "cannot attach the sched programs: %s; %s",
			 strerror(-e), lb_log);
		return 0;
	}
	libbpf_set_print(old);
	s->ring = ring_buffer__new(bpf_map__fd(s->skel->maps.rb), on_sample, s, NULL);
	if (!s->ring) {
		unusable(s, REMEDY_KERNEL, "cannot map the sched ring buffer: %s", strerror(errno));
		return 0;
	}
	if ((s->err = env->out->open(env->out, "collectors/sched/sched.jsonl", "sched", &s->ss)))
		return s->err;
	s->opened = true;
	write_config(s);
	snprintf(ev, sizeof(ev),
		 "eBPF programs on sched_switch, sched_wakeup, sched_wakeup_new, sched_migrate_task and "
		 "sched_process_exit attached before the command's exec; cohort filter %s%s",
		 s->filter, s->chains ? "; user call chains (fp) at each switch out" : "");
	pmu_lc_attached(env->lc, pmu_now_mono_ns(), ev);
	return s->err;
}

static void sched_task(void *state, const struct pmu_task_event *ev)
{
	struct sched *s = state;
	__u32 k;
	__u64 any = PMU_COHORT_ANY;

	if (!s->skel || s->stopped || ev->what != PMU_TASK_JOINED || !(ev->flags & PMU_TASK_PREEXISTING))
		return;
	/* attach mode: a process that was running before the kernel's fork
	 * program was there (only those: a late report of a child that has
	 * already exited must not leave an "any" entry a reused pid matches) */
	k = (__u32)ev->pid;
	bpf_map__update_elem(s->skel->maps.pmu_members, &k, sizeof(k), &any, sizeof(any), BPF_NOEXIST);
}

static int sched_fds(void *state, int *fds, int max)
{
	struct sched *s = state;

	/* stalled, the ring stays readable: the loop's tick, not a spin */
	if (!s->ring || max < 1 || s->stopped || s->stalled)
		return 0;
	fds[0] = ring_buffer__epoll_fd(s->ring);
	return 1;
}

/*
 * The ring into the heap as far as it has room, then what is older than
 * now - REORDER_NS out, until the ring is empty or DRAIN_NS has passed.
 * A full heap with nothing that old (the writer is behind by more than
 * HEAP_MAX records) writes its oldest slice anyway: what stays in the ring
 * was reserved after every record in the heap, each just after its t_ns
 * was read (the same program, a few us), so none of it is older.  Only a
 * record waiting for its task stops the writing (stalled: at most
 * HOLD_NS); the ring then fills and counts its loss.
 */
static int sched_drain(void *state, uint64_t now)
{
	struct sched *s = state;
	uint64_t t0 = pmu_now_mono_ns();
	bool held;

	if (!s->opened || s->stopped)
		return s->err;
	s->stalled = false;
	do {
		size_t had;

		held = take(s);
		if (__atomic_load_n(&s->skel->bss->parked, __ATOMIC_ACQUIRE) != s->parked_seen)
			read_map(s, now, true);
		had = s->heap.n;
		release(s, now > REORDER_NS ? now - REORDER_NS : 0, now, false, SIZE_MAX);
		if (held && s->heap.n >= HEAP_MAX && s->heap.n == had) {
			release(s, UINT64_MAX, now, false, 2048);
			if (s->heap.n == had) {
				s->stalled = true;
				break;
			}
		}
	} while (held && !s->err && pmu_now_mono_ns() - t0 < DRAIN_NS);
	return s->err;
}

/* The loss counters, per CPU, as loss records at t. */
static void read_loss(struct sched *s, uint64_t t)
{
	struct pmu_sched_counters *pc = calloc(s->ncpu, sizeof(*pc));
	__u64 *cf = calloc(s->ncpu, sizeof(*cf));
	__u32 k = 0;
	bool have = pc && !bpf_map__lookup_elem(s->skel->maps.counters, &k, sizeof(k), pc, sizeof(*pc) * s->ncpu, 0);
	bool have_cf = cf && !bpf_map__lookup_elem(s->skel->maps.pmu_cohort_fail, &k, sizeof(k), cf,
						   sizeof(*cf) * s->ncpu, 0);

	for (unsigned c = 0; c < s->ncpu; c++) {
		uint64_t r = have ? pc[c].reserve_fail : 0, m = (have ? pc[c].map_fail : 0) + (have_cf ? cf[c] : 0);

		if (have)
			s->short_offs += pc[c].short_offs;
		if (r) {
			json_t *o = rec_of("loss", t);

			set_u(o, "cpu", c);
			set_u(o, "lost", r);
			json_object_set_new(o, "what", json_string("reserve"));
			put(s, o);
		}
		if (m) {
			json_t *o = rec_of("loss", t);

			set_u(o, "cpu", c);
			set_u(o, "lost", m);
			json_object_set_new(o, "what", json_string("thread-map"));
			put(s, o);
		}
		s->lost_reserve += r;
		s->lost_map += m;
	}
	s->lost = s->lost_reserve + s->lost_map;
	if (!have && !s->err)
		s->err = pmu_error(PMU_ERR_IO, "cannot read the sched collector's loss counters: %s", strerror(errno));
	free(pc);
	free(cf);
}

/*
 * Thread items from the threads map: parked_only, the exits that found the
 * ring full (PMU_SCHED_EXITED: their totals end at their exit), taken out
 * of the map; else, at the stop, every thread still tracked, its totals up
 * to t (each its last transition at the latest).
 */
static void read_map(struct sched *s, uint64_t t, bool parked_only)
{
	int fd = bpf_map__fd(s->skel->maps.threads);
	__u64 key, next;
	const void *prev = NULL;
	struct pmu_sched_task v;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;
		if (parked_only && !(v.flags & PMU_SCHED_EXITED))
			continue;
		bool exited = v.flags & PMU_SCHED_EXITED;
		uint64_t end = exited || v.last_ns > t ? v.last_ns : t, d = end - v.last_ns;
		struct item it = { .t = end, .seq = ++s->live_seq, .live = !exited };
		struct pmu_sched_thread *r = &it.r.thread;

		r->h = (struct pmu_sched_hdr){ .seq = it.seq, .time_ns = end, .kind = PMU_SCHED_REC_THREAD,
					       .size = sizeof(*r) };
		r->tgid = v.tgid;
		r->tid = v.tid;
		r->leader_start_ns = v.leader_start_ns;
		r->first_ns = v.first_ns;
		r->first_on_ns = v.first_on_ns;
		r->on_ns = v.on_ns + (v.st == PMU_SCHED_ST_ON ? d : 0);
		r->runq_ns = v.runq_ns + (v.st == PMU_SCHED_ST_RUNQ ? d : 0);
		r->sleep_ns = v.sleep_ns + (v.st == PMU_SCHED_ST_WAIT && v.off_state == PMU_SCHED_S ? d : 0);
		r->blocked_ns = v.blocked_ns + (v.st == PMU_SCHED_ST_WAIT && v.off_state == PMU_SCHED_D ? d : 0);
		r->other_ns = v.other_ns + (v.st == PMU_SCHED_ST_WAIT && v.off_state != PMU_SCHED_S &&
							  v.off_state != PMU_SCHED_D
						  ? d
						  : 0);
		r->voluntary = v.voluntary;
		r->involuntary = v.involuntary;
		r->migrations = v.migrations;
		r->flags = v.flags & PMU_SCHED_BORN;
		if (heap_push(s, &it))
			s->err = s->err ? s->err : PMU_ERR_NOMEM;
		if (parked_only) {
			/* the walk goes on from key, which is gone: from the start */
			bpf_map_delete_elem(fd, &key);
			s->parked_seen++;
			prev = NULL;
		}
	}
}

static void sched_stop(void *state, uint64_t t)
{
	struct sched *s = state;

	if (!s->opened || s->stopped)
		return;
	take(s);
	sched_bpf__detach(s->skel);
	take(s);
	/* the ring's rest and the threads still tracked (read_map) at emit:
	 * the map holds still once the programs are detached */
	s->live_seq = s->skel->bss->seq_next;
	s->stop_t = t;
	s->stopped = true;
	pmu_lc_step(s->env->lc, "stopped", t);
}

/* At emit: the ring's rest through the heap, then the threads still
 * tracked at the stop, then everything. */
static void finish(struct sched *s)
{
	while (take(s) && !s->err)
		release(s, UINT64_MAX, UINT64_MAX, true, HEAP_MAX / 4);
	if (s->stopped && s->skel)
		read_map(s, s->stop_t, false);
	release(s, UINT64_MAX, UINT64_MAX, true, SIZE_MAX);
}

static void close_bpf(struct sched *s)
{
	ring_buffer__free(s->ring);
	s->ring = NULL;
	sched_bpf__destroy(s->skel);
	s->skel = NULL;
}

static uint64_t seq_end(struct sched *s)
{
	return s->skel && s->skel->bss ? s->skel->bss->seq_next : 0;
}
#else
static void finish(struct sched *s)
{
	(void)s;
}

static void read_loss(struct sched *s, uint64_t t)
{
	(void)s;
	(void)t;
}

static void close_bpf(struct sched *s)
{
	(void)s;
}

static uint64_t seq_end(struct sched *s)
{
	(void)s;
	return 0;
}
#endif

static int sched_probe(struct pmu_collector_env *env, json_t *caps, void **state)
{
	struct sched *s = calloc(1, sizeof(*s));
	const struct pmu_sampling_opts *so = env->cfg->sampling;
	const char *rk = getenv("PMU_SCHED_RING_KB");
	long nc = sysconf(_SC_NPROCESSORS_CONF);

	(void)caps;
	if (!s)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	*state = s;
	s->env = env;
	s->heap = (struct pmu_heap)PMU_HEAP_INIT(struct item, item_less);
	s->filter = "members";
	/* one record per off interval: every interval is kept (volume is one
	 * ~80-byte record per switch of a cohort thread, none for others) */
	s->min_off_ns = 0;
	s->chains = so ? (so->call_graph == PMU_CG_FP || (so->call_graph == PMU_CG_DEFAULT && env->cfg->mode >= 2))
		       : env->cfg->mode >= 2;
	s->allow_loss = so && so->allow_loss;
	s->ring_bytes = DEFAULT_RING;
	/* a test's knob (the loss test's tiny ring): a power of two in KiB */
	if (rk && *rk) {
		unsigned long kb = strtoul(rk, NULL, 10);

		if (kb >= 4 && kb <= (1ul << 20) && !(kb & (kb - 1)))
			s->ring_bytes = kb * 1024;
	}
#ifdef PMU_BPF_BUILT
	{
		int n = libbpf_num_possible_cpus();

		s->ncpu = n > 0 ? (unsigned)n : (unsigned)(nc > 0 ? nc : 1);
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		unusable(s, REMEDY_BTF, "the running kernel has no BTF: '/sys/kernel/btf/vmlinux': %s", strerror(errno));
		return 0;
	}
	if (!pmu_caps_bpf()) {
		unusable(s, REMEDY_PRIV, "uid %d lacks CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN) to load eBPF programs",
			 (int)geteuid());
		return 0;
	}
	if (!sched_load(s))
		return 0;
	pmu_lc_probed_ok(env->lc, pmu_now_mono_ns());
#else
	s->ncpu = nc > 0 ? (unsigned)nc : 1;
	unusable(s, REMEDY_BUILD, "pmu was built without eBPF: %s", PMU_BPF_UNBUILT);
#endif
	return 0;
}

static bool sched_usable(void *state)
{
	return !((struct sched *)state)->unusable;
}

static int sched_emit(void *state, struct pmu_collector_env *env, const struct pmu_run_window *win)
{
	struct sched *s = state;
	json_t *sum;
	char ev[900];
	int err;

	if (!s || s->unusable)
		return 0;
	if (!env->followed) {
		pmu_lc_unavailable_at(env->lc, win->start_ns, env->follow_reason, env->follow_remedy);
		return 0;
	}
	if (!s->ss)
		return s->err;
	finish(s);
	read_loss(s, s->last_written > win->start_ns ? s->last_written : win->start_ns);
	sum = json_object();
	json_object_set_new(sum, "type", json_string("summary"));
	set_u(sum, "offs", s->offs);
	set_u(sum, "threads", s->threads);
	set_u(sum, "short_offs", s->short_offs);
	set_u(sum, "unattributed", s->unattributed);
	set_u(sum, "lost", s->lost);
	set_u(sum, "malformed", s->malformed);
	put(s, sum);
	err = env->out->close(s->ss);
	s->ss = NULL;
	if ((err = s->err ? s->err : err))
		return err;
	snprintf(ev, sizeof(ev),
		 "eBPF on sched_switch/sched_wakeup/sched_migrate_task (cohort filter %s%s): %" PRIu64
		 " off-CPU intervals and %" PRIu64 " threads written, %" PRIu64 " records of no cohort incarnation, "
		 "%" PRIu64 " kernel records in all%s",
		 s->filter, s->chains ? ", user chains fp" : "", s->offs, s->threads, s->unattributed, seq_end(s),
		 s->clamped ? "; exits read just after their incarnation's end were ended there" : "");
	if (s->clipped || s->cut) {
		size_t l = strlen(ev);

		snprintf(ev + l, sizeof(ev) - l,
			 "; %" PRIu64 " off intervals and %" PRIu64 " threads that began before the follower saw "
			 "their incarnation start begin at that start (the threads' cut time taken from their first "
			 "states: an estimate)",
			 s->clipped, s->cut);
	}
	pmu_lc_set_evidence(env->lc, ev);
	if (s->lost) {
		char why[200];

		snprintf(why, sizeof(why),
			 "the ring was full (%" PRIu64 " records) or a thread's state could not be kept (%" PRIu64 ")",
			 s->lost_reserve, s->lost_map);
		pmu_lc_lost(env->lc, "drop", win->end_ns, s->lost, why);
	}
	if (s->late)
		pmu_lc_lost(env->lc, "drop", win->end_ns, s->late,
			    "records that reached the reorder heap after later ones were written (left out to keep the "
			    "stream in time order)");
	if (s->malformed)
		pmu_lc_lost(env->lc, "malformed", win->end_ns, s->malformed, s->malformed_first);
	pmu_lc_step(env->lc, "detached", win->end_ns);
	pmu_lc_final(env->lc, win->end_ns, s->offs + s->threads ? "ok" : "no-events", NULL);
	return 0;
}

static bool sched_failed(void *state, char *why, size_t n)
{
	struct sched *s = state;

	if (s->unusable || !s->lost || s->allow_loss)
		return false;
	snprintf(why, n, "sched: %" PRIu64 " records lost (--allow-loss accepts a bundle with loss)", s->lost);
	return true;
}

static void sched_release(void *state)
{
	struct sched *s = state;

	if (!s)
		return;
	if (s->ss)
		s->env->out->close(s->ss);
	close_bpf(s);
	free(s->clip);
	pmu_heap_free(&s->heap);
	free(s);
}

const struct pmu_collector_ops pmu_sched_collector = {
	.name = "sched",
	.modes = 4,
	.probe = sched_probe,
	.usable = sched_usable,
#ifdef PMU_BPF_BUILT
	.open = sched_open,
	.task = sched_task,
	.fds = sched_fds,
	.drain = sched_drain,
	.stop = sched_stop,
#endif
	.emit = sched_emit,
	.failed = sched_failed,
	.release = sched_release,
};
