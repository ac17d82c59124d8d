/*
 * The probes collector (spec 1.8, section 24): USDT probes of the cohort,
 * through bpf/probes.bpf.c.
 *
 *   probes.jsonl   config; what the probe map (section 24.2) makes of the
 *                  hits: runtime, mark, span, gc, thread, jit records; hit
 *                  records of the probes named with --probe; allocs (pmu:
 *                  alloc summed in the kernel) and unended records at each
 *                  incarnation's end; loss; one probe record per probe it
 *                  selected (attached or why not, its hits); summary.
 *
 * Probe (before the root is forked): privilege, BTF; the command's
 * executable resolved as execvp would, the objects it loads
 * (pmu_sdt_closure) and their .note.stapsdt (pmu_sdt_read); the probe
 * map's probes found there and every --probe; the programs loaded.  When
 * it will listen to the pmu provider it sets PMUREC_PROBES=pmu, so that
 * the command's include/pmu/probe.h leaves the control channel alone
 * (control.c's pattern: set at probe, inherited by the root, unset at open).
 *
 * Open (the root held behind the launch barrier): each probe attached with
 * pid -1 (every process mapping the file: the in-kernel cohort filter
 * keeps the cohort's hits) and its index as cookie.  An image the cohort
 * execs later (the program's exec record through the ring: the recorder's
 * task events have no leader exec) is read and attached then; its probes'
 * attached_ns say from when.
 *
 * The ring is consumed on the loop's timer (drain); its records go into a
 * reorder heap by t_ns and are paired and written once older than now -
 * REORDER_NS: spans by (incarnation, id), across threads; pmu GC pauses by
 * (incarnation, kind); python's by (incarnation, thread); hotspot's by
 * incarnation, its pool pauses by (incarnation, pool); JIT compiles by
 * (incarnation, thread); hotspot threads by (incarnation, native tid).  An
 * incarnation's end (INC_ENDED) goes through the same heap, so that its
 * hits still in the ring are paired first; what began and never ended is
 * then an unended record.  Attribution as the syscalls collector's: a hit
 * of a task the follower has not reported waits up to HOLD_NS.
 *
 * Memory stays flat: the heap holds at most HEAP_MAX records (back-pressure
 * on the ring, whose loss is counted), the open table OPEN_MAX begins (past
 * it a begin is counted as loss open-map).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "linux/caps.h"
#include "collector.h"
#include "error.h"
#include "heap.h"
#include "lifecycle.h"
#include "linux/sampling.h"
#include "util.h"

#ifdef PMU_BPF_BUILT
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "elfnote.h"
#include "linux/bpf/cohort.h"
#include "linux/probesrec.h"
#include "probes.skel.h"
#include "sdtnote.h"

#define PMU_PROBE_NO_CTL 1
#include "pmu/probe.h"

#define REORDER_NS 50000000ull   /* records younger than this wait for older ones */
#define DRAIN_NS 10000000ull     /* a drain gives the loop back after this */
#define HOLD_NS 3000000000ull    /* a record of a task not reported yet waits this long */
#define RING_BYTES (8u << 20)      /* as the syscalls collector's default */
#define HEAP_MAX 16384           /* records in the reorder heap (at most ~11 MiB) */
#define RING_HELD (-ENOBUFS)     /* on_sample: the heap is full, the rest stays in the ring */
#define OPEN_MAX 65536           /* begins waiting for their end */
#define ALLOCS_MAX 16384         /* process images whose pmu:alloc hits are summed */
#define OBJS_MAX 512             /* objects read for probes */
#define SCAN_NS 1000000000ull    /* the cohort's maps are read for new images at most this often */
#define SCAN_INCS 64             /* live incarnations whose maps one scan reads at most */
#define SEEN_MAX 4096            /* executable files (dev:ino) a run remembers (a power of two) */

static const char REMEDY_PRIV[] = "run pmurec as root, or grant it CAP_BPF and CAP_PERFMON "
				  "(setcap cap_bpf,cap_perfmon+ep); spans and marks still reach spans.jsonl "
				  "through the control channel (PMUREC_CTL_FD)";
static const char REMEDY_BTF[] = "boot a kernel built with CONFIG_DEBUG_INFO_BTF=y";
static const char REMEDY_KERNEL[] = "see the reason; the other collectors do not need it";

/* ---- the probe map (bundle-spec section 24.2) ------------------------------ */

enum role {
	R_RUNTIME, R_MARK, R_SPAN_BEGIN, R_SPAN_END, R_GC_BEGIN, R_GC_END, R_ALLOC, R_STARTUP_END,
	R_THREAD_START, R_THREAD_STOP, R_JIT_BEGIN, R_JIT_END, R_RAW,
};
static const char *const role_names[] = {
	"runtime", "mark", "span_begin", "span_end", "gc_begin", "gc_end", "alloc", "startup_end",
	"thread_start", "thread_stop", "jit_begin", "jit_end", "raw",
};

enum rt { RT_PMU, RT_PYTHON, RT_HOTSPOT };
static const char *const rt_names[] = { "pmu", "python", "hotspot" };

/*
 * One row per probe the map knows: its role, the runtime, and which of its
 * arguments are strings (str) with their lengths (len, -1: NUL-terminated).
 * pool: hotspot's per-pool pauses (kind "pool").
 */
static const struct pmap {
	const char *provider, *name;
	enum role role;
	enum rt rt;
	bool pool;
	int nstr;
	int8_t str[PMU_PRB_NSTR], len[PMU_PRB_NSTR];
} pmaps[] = {
	{ "pmu", "runtime", R_RUNTIME, RT_PMU, false, 1, { 0 }, { -1 } },
	{ "pmu", "mark", R_MARK, RT_PMU, false, 1, { 0 }, { -1 } },
	{ "pmu", "span_begin", R_SPAN_BEGIN, RT_PMU, false, 1, { 2 }, { -1 } },
	{ "pmu", "span_end", R_SPAN_END, RT_PMU, false, 0, { 0 }, { 0 } },
	{ "pmu", "gc_begin", R_GC_BEGIN, RT_PMU, false, 1, { 0 }, { -1 } },
	{ "pmu", "gc_end", R_GC_END, RT_PMU, false, 1, { 0 }, { -1 } },
	{ "pmu", "alloc", R_ALLOC, RT_PMU, false, 0, { 0 }, { 0 } },
	{ "python", "gc__start", R_GC_BEGIN, RT_PYTHON, false, 0, { 0 }, { 0 } },
	{ "python", "gc__done", R_GC_END, RT_PYTHON, false, 0, { 0 }, { 0 } },
	{ "hotspot", "gc__begin", R_GC_BEGIN, RT_HOTSPOT, false, 0, { 0 }, { 0 } },
	{ "hotspot", "gc__end", R_GC_END, RT_HOTSPOT, false, 0, { 0 }, { 0 } },
	{ "hotspot", "mem__pool__gc__begin", R_GC_BEGIN, RT_HOTSPOT, true, 2, { 0, 2 }, { 1, 3 } },
	{ "hotspot", "mem__pool__gc__end", R_GC_END, RT_HOTSPOT, true, 2, { 0, 2 }, { 1, 3 } },
	{ "hotspot", "vm__init__end", R_STARTUP_END, RT_HOTSPOT, false, 0, { 0 }, { 0 } },
	{ "hotspot", "thread__start", R_THREAD_START, RT_HOTSPOT, false, 1, { 0 }, { 1 } },
	{ "hotspot", "thread__stop", R_THREAD_STOP, RT_HOTSPOT, false, 1, { 0 }, { 1 } },
	{ "hotspot", "method__compile__begin", R_JIT_BEGIN, RT_HOTSPOT, false, 4, { 0, 2, 4, 6 }, { 1, 3, 5, 7 } },
	{ "hotspot", "method__compile__end", R_JIT_END, RT_HOTSPOT, false, 4, { 0, 2, 4, 6 }, { 1, 3, 5, 7 } },
};

/* one probe (provider:name) of one object */
struct prb {
	char provider[128], name[128], args[512];
	const char *binary;        /* the object's path (s->objs) */
	char build_id[2 * PMU_ELF_BID_MAX + 1];
	unsigned sign;             /* bit i: argument i is signed (the note's "-N@") */
	bool sema;
	const struct pmap *m;      /* NULL: raw (--probe) */
	bool attached;
	uint64_t attached_ns;
	char reason[300];
	struct bpf_link *link;
	uint64_t hits;
};

/* what waits for its end */
enum ocls { O_SPAN, O_PMUGC, O_PYGC, O_HSGC, O_POOL, O_JIT, O_THREAD };

struct oent {
	uint32_t next;             /* chain: index + 1, 0 none */
	bool used;
	uint8_t cls;
	int inc;
	pid_t pid, tid;
	uint64_t key, begin_ns, parent, aux;
	char *name, *extra;
};

enum { LOSS_RESERVE, LOSS_OPEN, LOSS_INC, LOSS_N };
static const char *const loss_what[LOSS_N] = { "reserve", "open-map", "inc-map" };

/* a heap item: a ring record, or an incarnation's end (r NULL) */
struct item {
	uint64_t t, seq;
	union pmu_prb_rec *r;
	int inc;
};

struct prs {
	struct pmu_collector_env *env;
	bool unusable;
	int load_err;
	char load_why[600];
	uint64_t t_load0, t_load1, t_load2;
	struct probes_bpf *skel;
	struct ring_buffer *ring;
	int ncpu;
	uint32_t ring_bytes;
	char exe[PATH_MAX];
	char *objs[OBJS_MAX];
	size_t nobjs;
	struct prb *p;             /* PMU_PRB_MAX */
	size_t np;
	bool listen_pmu;           /* PMUREC_PROBES=pmu was set */
	bool late_failed;
	pid_t root;
	struct pmu_stream *ps;
	int err;
	struct pmu_heap heap;
	bool stalled;
	uint64_t hseq, last_written;
	/* open table */
	struct oent *open;
	uint32_t *bucket;
	uint32_t free_head;
	size_t nopen;
	/* counts */
	uint64_t spans, marks, gcs, raw_hits, unended, unmatched, unattributed, malformed, others;
	uint64_t orphans;          /* spans written without their parent (its begin not seen) */
	char malformed_first[200];
	uint64_t stop_t;
	uint64_t lost[LOSS_N];
	uint64_t *lost_cpu;        /* ncpu x LOSS_N */
	uint64_t hits_total;
	bool stopped;
	char failed_why[400];
	/* images mapped later (dlopen): executable files seen, by dev:ino */
	struct seen { uint64_t dev, ino; } *seen;
	size_t nseen;
	uint64_t scan_t;
	size_t scan_next;          /* the incarnation the next scan starts at */
};

static void incname(char *b, size_t n, int id)
{
	snprintf(b, n, "i%d", id);
}

static void put(struct prs *s, json_t *rec)
{
	if (!rec) {
		s->err = s->err ? s->err : pmu_error(PMU_ERR_NOMEM, "out of memory");
		return;
	}
	if (s->err || !s->ps) {
		json_decref(rec);
		return;
	}
	s->err = s->env->out->put(s->ps, rec);
}

static void refuse(struct prs *s, const char *why)
{
	if (!s->malformed++)
		snprintf(s->malformed_first, sizeof(s->malformed_first), "%s", why);
}

static void count_loss(struct prs *s, unsigned cpu, int what)
{
	if ((int)cpu >= s->ncpu)
		cpu = 0;
	s->lost_cpu[cpu * LOSS_N + what]++;
}

/* ---- the open table: begins by (class, incarnation, key) ------------------- */

static uint64_t strhash(const char *p)
{
	uint64_t h = 1469598103934665603ull;

	while (*p)
		h = (h ^ (unsigned char)*p++) * 1099511628211ull;
	return h;
}

static size_t obucket(int cls, int inc, uint64_t key)
{
	uint64_t h = (key * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)inc << 8) ^ (uint64_t)cls;

	h ^= h >> 29;
	return (size_t)(h & (OPEN_MAX - 1));
}

static int open_init(struct prs *s)
{
	if (s->open)
		return 0;
	if (!(s->open = calloc(OPEN_MAX, sizeof(*s->open))) || !(s->bucket = calloc(OPEN_MAX, sizeof(*s->bucket))))
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	for (uint32_t i = 0; i < OPEN_MAX; i++)
		s->open[i].next = i + 2 <= OPEN_MAX ? i + 2 : 0;
	s->free_head = 1;
	return 0;
}

/* the entry's index + 1, or 0; name compared when given (string keys) */
static uint32_t open_find(struct prs *s, int cls, int inc, uint64_t key, const char *name)
{
	if (!s->open)
		return 0;
	for (uint32_t i = s->bucket[obucket(cls, inc, key)]; i; i = s->open[i - 1].next) {
		struct oent *e = &s->open[i - 1];

		if (e->cls == cls && e->inc == inc && e->key == key && (!name || (e->name && !strcmp(e->name, name))))
			return i;
	}
	return 0;
}

static struct oent *open_add(struct prs *s, int cls, int inc, uint64_t key, unsigned cpu)
{
	uint32_t i;
	size_t b;
	struct oent *e;

	if (open_init(s) || !s->free_head) {
		count_loss(s, cpu, LOSS_OPEN);
		return NULL;
	}
	i = s->free_head;
	e = &s->open[i - 1];
	s->free_head = e->next;
	b = obucket(cls, inc, key);
	*e = (struct oent){ .next = s->bucket[b], .used = true, .cls = (uint8_t)cls, .inc = inc, .key = key };
	s->bucket[b] = i;
	s->nopen++;
	return e;
}

static void open_del(struct prs *s, uint32_t i)
{
	struct oent *e = &s->open[i - 1];
	size_t b = obucket(e->cls, e->inc, e->key);

	for (uint32_t *pp = &s->bucket[b]; *pp; pp = &s->open[*pp - 1].next)
		if (*pp == i) {
			*pp = e->next;
			break;
		}
	free(e->name);
	free(e->extra);
	*e = (struct oent){ .next = s->free_head };
	s->free_head = i;
	s->nopen--;
}

/* ---- records ---------------------------------------------------------------- */

static json_t *rec_base(const char *type, uint64_t t, int inc, pid_t pid)
{
	json_t *o = json_object();
	char b[24];

	if (!o)
		return NULL;
	incname(b, sizeof(b), inc);
	json_object_set_new(o, "type", json_string(type));
	json_object_set_new(o, "t_ns", json_integer((json_int_t)t));
	json_object_set_new(o, "inc", json_string(b));
	json_object_set_new(o, "pid", json_integer(pid));
	return o;
}

static void set_u(json_t *o, const char *k, uint64_t v)
{
	json_object_set_new(o, k, json_integer((json_int_t)(v > INT64_MAX ? INT64_MAX : v)));
}

static void set_id(json_t *o, const char *k, uint64_t v)
{
	char b[24];

	snprintf(b, sizeof(b), "%" PRIu64, v);
	json_object_set_new(o, k, json_string(b));
}

static void write_unended(struct prs *s, struct oent *e, uint64_t t)
{
	static const char *const what[] = { "span", "gc", "gc", "gc", "gc", "jit", "thread" };
	json_t *o;

	if (e->cls == O_THREAD && !t) {
		return;
	}
	if (!(o = rec_base("unended", t, e->inc, e->pid))) {
		put(s, NULL);
		return;
	}
	json_object_set_new(o, "what", json_string(what[e->cls]));
	json_object_set_new(o, "tid", json_integer(e->tid));
	if (e->cls == O_SPAN)
		set_id(o, "id", e->key);
	json_object_set_new(o, "name", json_string(e->name ? e->name : ""));
	set_u(o, "begin_ns", e->begin_ns);
	s->unended++;
	put(s, o);
}

/* a hotspot thread alive at the stop */
static void write_thread_alive(struct prs *s, struct oent *e, uint64_t t)
{
	json_t *o = rec_base("thread", t, e->inc, e->pid);

	if (!o) {
		put(s, NULL);
		return;
	}
	set_u(o, "begin_ns", e->begin_ns);
	json_object_set_new(o, "tid", json_integer(e->tid));
	json_object_set_new(o, "runtime", json_string("hotspot"));
	json_object_set_new(o, "name", json_string(e->name ? e->name : ""));
	json_object_set_new(o, "daemon", json_boolean(e->aux));
	json_object_set_new(o, "ended", json_false());
	s->others++;
	put(s, o);
}

/* The pmu:alloc sums of process pid (0: all), attributed and written; t:
 * the records' time (the incarnation's end, or the stop). */
static void write_allocs(struct prs *s, pid_t pid, uint64_t t)
{
	int fd = bpf_map__fd(s->skel->maps.allocs);
	struct pmu_prb_alloc_key key, next, *prev = NULL;
	struct pmu_prb_alloc_key del[64];
	size_t ndel = 0;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct pmu_prb_alloc v;
		const struct pmu_incarnation *in;
		json_t *o;

		key = next;
		prev = &key;
		if ((pid && key.tgid != (uint32_t)pid) || bpf_map_lookup_elem(fd, &key, &v))
			continue;
		if (ndel < PMU_ARRAY_SIZE(del))
			del[ndel++] = key;
		in = pmu_cohort_find(s->env->cohort, (pid_t)key.tgid, (pid_t)key.tgid, v.last_ns, v.last_ns);
		if (!in) {
			s->unattributed += v.count;
			continue;
		}
		if (!(o = rec_base("allocs", t, in->id, (pid_t)key.tgid))) {
			put(s, NULL);
			continue;
		}
		set_u(o, "count", v.count);
		set_u(o, "bytes", v.bytes);
		s->others++;
		put(s, o);
	}
	for (size_t i = 0; i < ndel; i++)
		bpf_map_delete_elem(fd, &del[i]);
}

/* An incarnation's end (in time order): what it left open is unended. */
static void inc_end(struct prs *s, int inc, uint64_t t)
{
	const struct pmu_cohort *c = s->env->cohort;
	pid_t pid = inc >= 1 && (size_t)inc <= c->n ? c->incs[inc - 1].pid : 0;

	for (uint32_t i = 0; s->open && s->nopen && i < OPEN_MAX; i++)
		if (s->open[i].used && s->open[i].inc == inc) {
			write_unended(s, &s->open[i], t);
			open_del(s, i + 1);
		}
	if (pid && s->skel)
		write_allocs(s, pid, t);
}

static char *dupn(const char *p)
{
	return strdup(p ? p : "");
}

/* "CLASS.METHOD SIGNATURE" of a compile hit */
static char *jit_method(const union pmu_prb_rec *r)
{
	char b[3 * PMU_PRB_STR + 4];

	snprintf(b, sizeof(b), "%s.%s %s", pmu_prb_str(r, 1), pmu_prb_str(r, 2), pmu_prb_str(r, 3));
	return strdup(b);
}

static void hit_raw(struct prs *s, const struct prb *p, const union pmu_prb_rec *r, int inc)
{
	json_t *o = rec_base("hit", r->h.time_ns, inc, (pid_t)r->hit.tgid);
	char b[12 * 24], *e = b;

	if (!o) {
		put(s, NULL);
		return;
	}
	json_object_set_new(o, "tid", json_integer(r->hit.tid));
	json_object_set_new(o, "provider", json_string(p->provider));
	json_object_set_new(o, "name", json_string(p->name));
	json_object_set_new(o, "nargs", json_integer(r->hit.nargs));
	*e = 0;
	for (unsigned i = 0; i < r->hit.nargs; i++) {
		uint64_t v = r->hit.args[i];

		if (p->sign & (1u << i))
			e += sprintf(e, "%s%" PRId64, i ? " " : "", (int64_t)v);
		else
			e += sprintf(e, "%s%" PRIu64, i ? " " : "", v);
	}
	if (r->hit.nargs)
		json_object_set_new(o, "args", json_string(b));
	s->raw_hits++;
	put(s, o);
}

/* whether hit r has a string the kernel and reread_strings() could not read */
static bool str_unread(const union pmu_prb_rec *r)
{
	for (unsigned j = 0; j < r->hit.nstr; j++)
		if (r->hit.flags & PMU_PRB_F_STR_BAD(j))
			return true;
	return false;
}

/* One hit in time order, attributed to inc. */
static void hit(struct prs *s, const union pmu_prb_rec *r, const struct pmu_incarnation *in)
{
	const struct prb *p = &s->p[r->hit.probe];
	const struct pmap *m = p->m;
	uint64_t t = r->h.time_ns;
	pid_t pid = (pid_t)r->hit.tgid, tid = (pid_t)r->hit.tid;
	unsigned cpu = r->h.cpu;
	char src[260];
	uint32_t i;
	struct oent *e;
	json_t *o;

	if (!m) {
		hit_raw(s, p, r, in->id);
		return;
	}
	snprintf(src, sizeof(src), "%s:%s", p->provider, p->name);
	if (str_unread(r)) {
		/* neither the kernel nor process_vm_readv() could read a name:
		 * not written as "" (the summary's malformed counts it, the
		 * lifecycle's malformed record says why) */
		char why[sizeof(s->malformed_first)];

		snprintf(why, sizeof(why), "a %.60s hit of pid %d with a string argument that could not be read "
			 "(its page not mapped, the process gone)", src, (int)pid);
		refuse(s, why);
		return;
	}
	switch (m->role) {
	case R_RUNTIME:
		if (!(o = rec_base("runtime", t, in->id, pid)))
			break;
		json_object_set_new(o, "tid", json_integer(tid));
		json_object_set_new(o, "name", json_string(pmu_prb_str(r, 0)));
		set_u(o, "abi", r->hit.args[1]);
		s->others++;
		put(s, o);
		return;
	case R_MARK:
	case R_STARTUP_END:
		if (!(o = rec_base("mark", t, in->id, pid)))
			break;
		json_object_set_new(o, "tid", json_integer(tid));
		json_object_set_new(o, "name", json_string(m->role == R_MARK ? pmu_prb_str(r, 0) : "startup-end"));
		json_object_set_new(o, "source", json_string(src));
		json_object_set_new(o, "via", json_string("usdt"));
		s->marks++;
		put(s, o);
		return;
	case R_SPAN_BEGIN:
		if (!r->hit.args[0]) {
			s->unmatched++; /* span id 0 is "no span" in the ABI */
			return;
		}
		if ((i = open_find(s, O_SPAN, in->id, r->hit.args[0], NULL))) {
			/* begun again before its end: the first never ended */
			write_unended(s, &s->open[i - 1], t);
			open_del(s, i);
		}
		if ((e = open_add(s, O_SPAN, in->id, r->hit.args[0], cpu))) {
			e->pid = pid;
			e->tid = tid;
			e->begin_ns = t;
			e->parent = r->hit.args[1];
			e->name = dupn(pmu_prb_str(r, 0));
		}
		return;
	case R_SPAN_END:
		if (!(i = open_find(s, O_SPAN, in->id, r->hit.args[0], NULL))) {
			s->unmatched++;
			return;
		}
		e = &s->open[i - 1];
		if ((o = rec_base("span", t, in->id, pid))) {
			set_id(o, "id", e->key);
			/* a parent whose begin was not seen (begun before the probe
			 * was attached, or lost) is not in the stream: the span is
			 * written without the link, and the lifecycle counts it */
			if (e->parent && open_find(s, O_SPAN, in->id, e->parent, NULL))
				set_id(o, "parent", e->parent);
			else if (e->parent)
				s->orphans++;
			json_object_set_new(o, "tid", json_integer(e->tid));
			json_object_set_new(o, "end_tid", json_integer(tid));
			json_object_set_new(o, "name", json_string(e->name ? e->name : ""));
			set_u(o, "begin_ns", e->begin_ns);
			set_u(o, "end_ns", t);
			json_object_set_new(o, "via", json_string("usdt"));
			s->spans++;
		}
		open_del(s, i);
		put(s, o);
		return;
	case R_GC_BEGIN: {
		int cls = m->rt == RT_PMU ? O_PMUGC : m->rt == RT_PYTHON ? O_PYGC : m->pool ? O_POOL : O_HSGC;
		char kind[2 * PMU_PRB_STR + 2];
		uint64_t key;

		if (m->rt == RT_PMU) {
			snprintf(kind, sizeof(kind), "%s", pmu_prb_str(r, 0));
			key = strhash(kind);
		} else if (m->rt == RT_PYTHON) {
			snprintf(kind, sizeof(kind), "gen%" PRId64, (int64_t)(int32_t)r->hit.args[0]);
			key = (uint64_t)tid;
		} else if (m->pool) {
			snprintf(kind, sizeof(kind), "%s/%s", pmu_prb_str(r, 0), pmu_prb_str(r, 1));
			key = strhash(kind);
		} else {
			snprintf(kind, sizeof(kind), "%s", r->hit.args[0] & 0xff ? "full" : "minor");
			key = 0;
		}
		if ((i = open_find(s, cls, in->id, key, cls == O_PMUGC || cls == O_POOL ? kind : NULL))) {
			write_unended(s, &s->open[i - 1], t);
			open_del(s, i);
		}
		if ((e = open_add(s, cls, in->id, key, cpu))) {
			e->pid = pid;
			e->tid = tid;
			e->begin_ns = t;
			e->name = dupn(kind);
			e->extra = dupn(src);
		}
		return;
	}
	case R_GC_END: {
		int cls = m->rt == RT_PMU ? O_PMUGC : m->rt == RT_PYTHON ? O_PYGC : m->pool ? O_POOL : O_HSGC;
		char kind[2 * PMU_PRB_STR + 2] = "";
		uint64_t key = 0;

		if (m->rt == RT_PMU) {
			snprintf(kind, sizeof(kind), "%s", pmu_prb_str(r, 0));
			key = strhash(kind);
		} else if (m->rt == RT_PYTHON)
			key = (uint64_t)tid;
		else if (m->pool) {
			snprintf(kind, sizeof(kind), "%s/%s", pmu_prb_str(r, 0), pmu_prb_str(r, 1));
			key = strhash(kind);
		}
		if (!(i = open_find(s, cls, in->id, key, cls == O_PMUGC || cls == O_POOL ? kind : NULL))) {
			s->unmatched++;
			return;
		}
		e = &s->open[i - 1];
		if ((o = rec_base("gc", t, in->id, pid))) {
			set_u(o, "begin_ns", e->begin_ns);
			set_u(o, "dur_ns", t - e->begin_ns);
			json_object_set_new(o, "tid", json_integer(e->tid));
			json_object_set_new(o, "runtime", json_string(rt_names[m->rt]));
			json_object_set_new(o, "kind", json_string(cls == O_POOL ? "pool" : e->name ? e->name : ""));
			if (cls == O_POOL)
				json_object_set_new(o, "pool", json_string(e->name ? e->name : ""));
			if (m->rt == RT_PYTHON && (int64_t)r->hit.args[0] >= 0)
				set_u(o, "collected", r->hit.args[0]);
			json_object_set_new(o, "source", json_string(e->extra ? e->extra : src));
			s->gcs++;
		}
		open_del(s, i);
		put(s, o);
		return;
	}
	case R_THREAD_START: {
		uint64_t ntid = r->hit.args[3];

		if ((i = open_find(s, O_THREAD, in->id, ntid, NULL)))
			open_del(s, i);
		if ((e = open_add(s, O_THREAD, in->id, ntid, cpu))) {
			e->pid = pid;
			e->tid = (pid_t)ntid;
			e->begin_ns = t;
			e->aux = r->hit.args[4] & 0xff;
			e->name = dupn(pmu_prb_str(r, 0));
		}
		return;
	}
	case R_THREAD_STOP:
		if (!(i = open_find(s, O_THREAD, in->id, r->hit.args[3], NULL))) {
			s->unmatched++;
			return;
		}
		e = &s->open[i - 1];
		if ((o = rec_base("thread", t, in->id, pid))) {
			set_u(o, "begin_ns", e->begin_ns);
			json_object_set_new(o, "tid", json_integer(e->tid));
			json_object_set_new(o, "runtime", json_string("hotspot"));
			json_object_set_new(o, "name", json_string(e->name ? e->name : ""));
			json_object_set_new(o, "daemon", json_boolean(e->aux));
			json_object_set_new(o, "ended", json_true());
			s->others++;
		}
		open_del(s, i);
		put(s, o);
		return;
	case R_JIT_BEGIN:
		if ((i = open_find(s, O_JIT, in->id, (uint64_t)tid, NULL))) {
			write_unended(s, &s->open[i - 1], t);
			open_del(s, i);
		}
		if ((e = open_add(s, O_JIT, in->id, (uint64_t)tid, cpu))) {
			e->pid = pid;
			e->tid = tid;
			e->begin_ns = t;
			e->name = jit_method(r);
			e->extra = dupn(pmu_prb_str(r, 0));
		}
		return;
	case R_JIT_END:
		if (!(i = open_find(s, O_JIT, in->id, (uint64_t)tid, NULL))) {
			s->unmatched++;
			return;
		}
		e = &s->open[i - 1];
		if ((o = rec_base("jit", t, in->id, pid))) {
			set_u(o, "begin_ns", e->begin_ns);
			set_u(o, "dur_ns", t - e->begin_ns);
			json_object_set_new(o, "tid", json_integer(tid));
			json_object_set_new(o, "runtime", json_string("hotspot"));
			json_object_set_new(o, "compiler", json_string(e->extra ? e->extra : ""));
			json_object_set_new(o, "method", json_string(e->name ? e->name : ""));
			json_object_set_new(o, "success", json_boolean(r->hit.nargs > 8 && (r->hit.args[8] & 0xff)));
			s->others++;
		}
		open_del(s, i);
		put(s, o);
		return;
	case R_ALLOC: /* summed in the kernel: no record */
	case R_RAW:
		return;
	}
	put(s, NULL);
}

/* ---- the reorder heap --------------------------------------------------------- */

static bool item_less(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

static void late_exec(struct prs *s, pid_t pid, uint64_t t);

/*
 * want bytes at addr of process pid into buf, page by page (a string may
 * end on a page before an unmapped one): the bytes read.  nul: stop after
 * the first NUL.  process_vm_readv(2) faults the pages in, which the
 * program's bpf_probe_read_user_str() cannot.
 */
static size_t vm_read(pid_t pid, uint64_t addr, char *buf, size_t want, bool nul)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t got = 0;

	if (pg <= 0)
		pg = 4096;
	while (got < want) {
		uint64_t a = addr + got;
		size_t n = (size_t)pg - (size_t)(a % (uint64_t)pg);
		struct iovec l, r;
		ssize_t k;

		if (n > want - got)
			n = want - got;
		l = (struct iovec){ buf + got, n };
		r = (struct iovec){ (void *)(uintptr_t)a, n };
		if ((k = process_vm_readv(pid, &l, 1, &r, 1, 0)) <= 0)
			break;
		if (nul && memchr(buf + got, 0, (size_t)k))
			return got + (size_t)k;
		got += (size_t)k;
		if ((size_t)k < n)
			break;
	}
	return got;
}

/* whether addr lies in a file mapping of pid that is not writable: its
 * bytes are the file's, the same in a process forked from it */
static bool file_backed_ro(pid_t pid, uint64_t addr)
{
	char path[64], line[512];
	FILE *f;
	bool ok = false;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "re")))
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, ino;
		char perms[8];

		if (sscanf(line, "%llx-%llx %7s %*s %*s %llu", &lo, &hi, perms, &ino) != 4)
			continue;
		if (addr >= lo && addr < hi) {
			ok = ino && perms[1] != 'w';
			break;
		}
	}
	fclose(f);
	return ok;
}

/*
 * want bytes of string j of hit r from the file the program found it in
 * (sfile: a read-only file mapping): only an object this run read for
 * probes (s->objs), matched by device and inode; the bytes read.
 */
static size_t file_read(struct prs *s, const union pmu_prb_rec *r, unsigned j, char *buf, size_t want)
{
	const struct pmu_prb_sfile *sf = &r->hit.sfile[j];
	unsigned maj = sf->dev >> 20, min = sf->dev & 0xfffff;
	struct stat st;

	if (!sf->ino)
		return 0;
	for (size_t i = 0; i < s->nobjs; i++) {
		int fd;
		ssize_t k;

		if (stat(s->objs[i], &st) || st.st_ino != sf->ino || major(st.st_dev) != maj || minor(st.st_dev) != min)
			continue;
		if ((fd = open(s->objs[i], O_RDONLY | O_CLOEXEC)) < 0)
			return 0;
		k = pread(fd, buf, want, (off_t)sf->off);
		close(fd);
		return k > 0 ? (size_t)k : 0;
	}
	return 0;
}

/*
 * The strings of hit r that the kernel could not read (PMU_PRB_F_STR_BAD:
 * bpf_probe_read_user_str() cannot fault in a page not touched yet, or a
 * forked child's file pages not mapped yet), read here from the process,
 * the pointer being the argument the probe map names.  A process gone by
 * now (a forked worker exits quickly): from its parent incarnation's
 * process when the address is in a read-only file mapping there (a fork
 * shares that image).  What stays unread keeps its flag: hit() refuses
 * the record rather than write an empty name.
 */
static void reread_strings(struct prs *s, union pmu_prb_rec *r)
{
	const struct pmap *m = s->p[r->hit.probe].m;

	if (!m)
		return;
	for (unsigned j = 0; j < r->hit.nstr && j < (unsigned)m->nstr; j++) {
		int sa = m->str[j], la = m->len[j];
		uint64_t addr, want = PMU_PRB_STR - 1;
		char *buf = r->full.str[j];
		size_t got;
		bool nul = la < 0;

		if (!(r->hit.flags & PMU_PRB_F_STR_BAD(j)) || sa < 0 || (unsigned)sa >= r->hit.nargs)
			continue;
		if (!nul) {
			if ((unsigned)la >= r->hit.nargs || r->hit.flags & PMU_PRB_F_ARG_BAD(la))
				continue;
			if (r->hit.args[la] < want)
				want = r->hit.args[la];
		}
		if (r->hit.flags & PMU_PRB_F_ARG_BAD(sa) || !(addr = r->hit.args[sa]))
			continue;
		got = vm_read((pid_t)r->hit.tgid, addr, buf, (size_t)want, nul);
		if ((nul ? !memchr(buf, 0, got) && got < want : got < want) && s->env->cohort) {
			const struct pmu_cohort *c = s->env->cohort;
			const struct pmu_incarnation *in =
				pmu_cohort_find(c, (pid_t)r->hit.tgid, (pid_t)r->hit.tid, r->h.time_ns, r->h.time_ns);
			const struct pmu_incarnation *par =
				in && in->parent >= 1 && (size_t)in->parent <= c->n ? &c->incs[in->parent - 1] : NULL;

			/* a parent of another pid: a fork, the same image (an exec's
			 * parent incarnation is the same pid) */
			if (par && !par->ended && par->pid != in->pid && file_backed_ro(par->pid, addr))
				got = vm_read(par->pid, addr, buf, (size_t)want, nul);
		}
		if (nul ? !memchr(buf, 0, got) && got < want : got < want)
			got = file_read(s, r, j, buf, (size_t)want);
		if (nul) {
			char *z = memchr(buf, 0, got);

			if (z)
				got = (size_t)(z - buf);
			else if (got < want)
				continue; /* unread: the flag stays */
			else
				r->hit.flags |= PMU_PRB_F_STR_CUT(j);
		} else if (got < want)
			continue;
		buf[got] = 0;
		r->hit.slen[j] = (__u16)got;
		r->hit.flags &= ~PMU_PRB_F_STR_BAD(j);
	}
}

static int on_sample(void *ctx, void *data, size_t len)
{
	struct prs *s = ctx;
	union pmu_prb_rec d, *r;

	if (pmu_prb_decode(data, len, (uint32_t)s->np, &d)) {
		refuse(s, pmu_error_detail());
		return 0;
	}
	if (d.h.kind == PMU_PRB_REC_HIT)
		reread_strings(s, &d);
	if (d.h.kind == PMU_PRB_REC_EXEC) {
		/* a new image: its probes now (a leader's exec is no task event) */
		if (!s->stopped)
			late_exec(s, (pid_t)d.exec.tgid, d.h.time_ns);
		return 0;
	}
	if (!(r = malloc(len))) {
		s->err = s->err ? s->err : pmu_error(PMU_ERR_NOMEM, "out of memory");
		return -ENOMEM;
	}
	memcpy(r, &d, len);
	if (pmu_heap_push(&s->heap, &(struct item){ d.h.time_ns, d.h.seq, r, 0 })) {
		free(r);
		s->err = s->err ? s->err : pmu_error(PMU_ERR_NOMEM, "out of memory");
		return -ENOMEM;
	}
	return s->heap.n >= HEAP_MAX ? RING_HELD : 0;
}

static int take(struct prs *s)
{
	int n;

	if (s->heap.n >= HEAP_MAX)
		return 1;
	n = ring_buffer__consume(s->ring);
	if (n == RING_HELD)
		return 1;
	if (n < 0 && !s->err)
		s->err = pmu_error(PMU_ERR_IO, "cannot drain the probes ring: %s", strerror(-n));
	return 0;
}

/* One item in time order: 1 when it must wait for its task, else 0. */
static int process(struct prs *s, struct item *it, uint64_t now, bool final)
{
	const struct pmu_incarnation *in;

	if (!it->r) {
		inc_end(s, it->inc, it->t);
		if (it->t > s->last_written)
			s->last_written = it->t;
		return 0;
	}
	in = pmu_cohort_find(s->env->cohort, (pid_t)it->r->hit.tgid, (pid_t)it->r->hit.tid, it->t, it->t);
	if (!in && !final && s->env->stops != PMU_STOPS_BEFORE_RUN && now < it->t + HOLD_NS)
		return 1;
	if (!in) {
		s->unattributed++;
		return 0;
	}
	if (it->t < s->last_written) {
		refuse(s, "probe record arrived after later records were written");
		return 0;
	}
	s->last_written = it->t;
	hit(s, it->r, in);
	return 0;
}

static bool flush(struct prs *s, uint64_t wm, uint64_t now, bool final, size_t max)
{
	while (s->heap.n && ((const struct item *)pmu_heap_top(&s->heap))->t <= wm) {
		struct item it;

		if (!max--)
			return true;
		pmu_heap_pop(&s->heap, &it);
		if (process(s, &it, now, final)) {
			pmu_heap_push(&s->heap, &it); /* waits for its task: so does all behind it */
			break;
		}
		free(it.r);
	}
	return false;
}

static void scan_late(struct prs *s, uint64_t now);

static int prb_drain(void *state, uint64_t now)
{
	struct prs *s = state;
	uint64_t t0 = pmu_now_mono_ns();
	bool more;

	if (!s->ring)
		return 0;
	scan_late(s, now);
	s->stalled = false;
	do {
		int held = take(s);

		more = flush(s, now > REORDER_NS ? now - REORDER_NS : 0, now, false, 2048);
		if (!more && held && s->heap.n >= HEAP_MAX) {
			size_t had = s->heap.n;

			more = flush(s, UINT64_MAX, now, false, 2048);
			if (s->heap.n == had) {
				s->stalled = true;
				break;
			}
			more = true;
		}
	} while (more && !s->err && pmu_now_mono_ns() - t0 < DRAIN_NS);
	return s->err;
}

static int prb_fds(void *state, int *fds, int max)
{
	struct prs *s = state;

	if (!s->ring || max < 1 || s->stalled)
		return 0;
	fds[0] = ring_buffer__epoll_fd(s->ring);
	return 1;
}

/* ---- probe: what the command's objects carry ---------------------------------- */

/* argv[0] as execvp(3) finds it: with a slash as given, else along PATH
 * (glibc's default when unset); the real path in out */
static bool resolve_exe(const char *a0, char *out, size_t n)
{
	const char *path = getenv("PATH");
	char cand[PATH_MAX];
	struct stat st;

	if (!a0 || !*a0)
		return false;
	(void)n; /* out holds PATH_MAX */
	if (strchr(a0, '/'))
		return realpath(a0, out) != NULL;
	if (!path)
		path = "/bin:/usr/bin";
	for (const char *p = path;; p++) {
		const char *e = strchr(p, ':');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		snprintf(cand, sizeof(cand), "%.*s%s%s", (int)l, l ? p : ".", "/", a0);
		if (!stat(cand, &st) && S_ISREG(st.st_mode) && !access(cand, X_OK) && realpath(cand, out))
			return true;
		if (!e)
			break;
		p = e;
	}
	return false;
}

static long fd_read_at(void *ctx, void *buf, size_t n, uint64_t off)
{
	return pread(*(int *)ctx, buf, n, (off_t)off);
}

static void build_id_of(const char *path, char *out, size_t n)
{
	unsigned char b[PMU_ELF_BID_MAX];
	size_t len = 0;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	out[0] = 0;
	if (fd < 0)
		return;
	if (!fstat(fd, &st) && !pmu_elf_build_id(fd_read_at, &fd, (uint64_t)st.st_size, b, &len))
		for (size_t i = 0; i < len && 2 * i + 2 < n; i++)
			snprintf(out + 2 * i, 3, "%02x", b[i]);
	close(fd);
}

/* whether "PROVIDER:NAME" is among --probe */
static bool requested(const struct pmu_run_config *cfg, const char *prov, const char *name)
{
	for (size_t i = 0; i < cfg->nprobes; i++) {
		const char *c = strchr(cfg->probes[i], ':');

		if (c && (size_t)(c - cfg->probes[i]) == strlen(prov) && !strncmp(cfg->probes[i], prov, strlen(prov)) &&
		    !strcmp(c + 1, name))
			return true;
	}
	return false;
}

struct readctx {
	struct prs *s;
	const char *obj;
	bool late;
	uint64_t t;
	size_t first;          /* the object's first probe in s->p */
	char build_id[2 * PMU_ELF_BID_MAX + 1];
};

static unsigned sign_of(const char *args, int *nargs)
{
	unsigned sign = 0;
	int i = 0;

	for (const char *p = args; *p && i < 32;) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		if (*p == '-')
			sign |= 1u << i;
		i++;
		while (*p && *p != ' ')
			p++;
	}
	*nargs = i;
	return sign;
}

static int on_note(void *ctx, const struct pmu_sdt_probe *n)
{
	struct readctx *rc = ctx;
	struct prs *s = rc->s;
	const struct pmap *m = NULL;
	struct prb *p;
	int na;

	for (size_t i = 0; i < PMU_ARRAY_SIZE(pmaps); i++)
		if (!strcmp(pmaps[i].provider, n->provider) && !strcmp(pmaps[i].name, n->name))
			m = &pmaps[i];
	if (!m && !requested(s->env->cfg, n->provider, n->name))
		return 0;
	/* one probe per name and object (libbpf attaches all its sites) */
	for (size_t i = rc->first; i < s->np; i++)
		if (!strcmp(s->p[i].provider, n->provider) && !strcmp(s->p[i].name, n->name)) {
			s->p[i].sema |= n->semaphore != 0;
			return 0;
		}
	if (s->np >= PMU_PRB_MAX)
		return 0;
	p = &s->p[s->np++];
	memset(p, 0, sizeof(*p));
	snprintf(p->provider, sizeof(p->provider), "%s", n->provider);
	snprintf(p->name, sizeof(p->name), "%s", n->name);
	snprintf(p->args, sizeof(p->args), "%s", n->args);
	snprintf(p->build_id, sizeof(p->build_id), "%s", rc->build_id);
	p->binary = rc->obj;
	p->sema = n->semaphore != 0;
	p->m = m;
	p->sign = sign_of(n->args, &na);
	return 0;
}

/* whether dev:ino was seen already; else remembered (false) while the set
 * has room, true when it is full (bounded: the rest is not read) */
static bool seen_add(struct prs *s, uint64_t dev, uint64_t ino)
{
	uint64_t h = (ino * 0x9e3779b97f4a7c15ull) ^ (dev * 0xff51afd7ed558ccdull);
	size_t i = (size_t)(h ^ (h >> 31)) & (SEEN_MAX - 1);

	if (!s->seen && !(s->seen = calloc(SEEN_MAX, sizeof(*s->seen))))
		return true;
	/* ino 0 is no file: the slot's marker of empty */
	for (size_t k = 0; k < SEEN_MAX; k++, i = (i + 1) & (SEEN_MAX - 1)) {
		if (!s->seen[i].ino) {
			if (s->nseen >= SEEN_MAX / 2)
				return true;
			s->seen[i] = (struct seen){ dev, ino };
			s->nseen++;
			return false;
		}
		if (s->seen[i].dev == dev && s->seen[i].ino == ino)
			return true;
	}
	return true;
}

/* Read obj's probes into s->p (once per object): the new ones' range */
static void read_obj(struct prs *s, const char *obj, size_t *from, size_t *to)
{
	struct readctx rc = { .s = s, .obj = NULL };

	*from = *to = s->np;
	for (size_t i = 0; i < s->nobjs; i++)
		if (!strcmp(s->objs[i], obj))
			return;
	if (s->nobjs >= OBJS_MAX || !(s->objs[s->nobjs] = strdup(obj)))
		return;
	{
		struct stat st;

		/* the same file under another path (/lib vs /usr/lib) in a
		 * process's maps is not read, nor attached, again */
		if (!stat(obj, &st))
			seen_add(s, (uint64_t)major(st.st_dev) << 32 | minor(st.st_dev), st.st_ino);
	}
	rc.obj = s->objs[s->nobjs++];
	rc.first = s->np;
	build_id_of(obj, rc.build_id, sizeof(rc.build_id));
	pmu_sdt_read(obj, on_note, &rc); /* an object that cannot be read has no probes for us */
	*to = s->np;
}

struct closctx {
	struct prs *s;
	size_t n;
};

static int on_obj(void *ctx, const char *obj)
{
	struct closctx *cc = ctx;
	size_t a, b;

	read_obj(cc->s, obj, &a, &b);
	cc->n++;
	return 0;
}

/* the conf map's row for probe i */
static int conf_probe(struct prs *s, size_t i)
{
	const struct prb *p = &s->p[i];
	struct pmu_prb_conf c = { .what = PMU_PRB_W_RECORD };
	__u32 k = (__u32)i;

	memset(c.str_arg, -1, sizeof(c.str_arg));
	memset(c.len_arg, -1, sizeof(c.len_arg));
	if (p->m && p->m->role == R_ALLOC)
		c.what = PMU_PRB_W_ALLOC;
	if (p->m) {
		c.nstr = (__u8)p->m->nstr;
		for (int j = 0; j < p->m->nstr; j++) {
			c.str_arg[j] = p->m->str[j];
			c.len_arg[j] = p->m->len[j];
		}
	}
	return bpf_map__update_elem(s->skel->maps.conf, &k, sizeof(k), &c, sizeof(c), BPF_ANY);
}

/* libbpf's messages: the first ones kept for the reason, none printed */
static char lb_last[600];

static int lb_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[1024];
	int n;

	if (level == LIBBPF_DEBUG)
		return 0;
	if (getenv("PMU_BPF_LOG")) {
		va_list c;
		va_copy(c, ap);
		vfprintf(stderr, fmt, c);
		va_end(c);
	}
	n = vsnprintf(line, sizeof(line), fmt, ap);
	if (n <= 0)
		return 0;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	while (n > 0 && line[n - 1] == '\n')
		line[--n] = 0;
	if (n > 0) {
		size_t used = strlen(lb_last);

		if (used + 3 < sizeof(lb_last))
			snprintf(lb_last + used, sizeof(lb_last) - used, "%s%.590s", used ? " | " : "", line);
	}
	return 0;
}

static int fail_open(int e, const char *what)
{
	const char *remedy = e == EPERM || e == EACCES ? REMEDY_PRIV : REMEDY_KERNEL;

	return pmu_error(PMU_ERR_UNSUPPORTED, "%s: %s%s%s (%s)", what, strerror(e), lb_last[0] ? "; " : "", lb_last,
			 remedy);
}

static int prb_load(struct prs *s)
{
	libbpf_print_fn_t old;
	uint64_t t0, t1, t2;
	int err = 0;

	s->ncpu = libbpf_num_possible_cpus();
	if (s->ncpu <= 0 || !(s->lost_cpu = calloc((size_t)s->ncpu * LOSS_N, sizeof(uint64_t))))
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	old = libbpf_set_print(lb_print);
	lb_last[0] = 0;
	t0 = pmu_now_mono_ns();
	if (!(s->skel = probes_bpf__open())) {
		err = fail_open(errno, "cannot open the probes bpf object");
		goto out;
	}
	s->ring_bytes = RING_BYTES;
	s->skel->rodata->ring_size = s->ring_bytes;
	if (bpf_map__set_max_entries(s->skel->maps.rb, s->ring_bytes) ||
	    bpf_map__set_max_entries(s->skel->maps.allocs, ALLOCS_MAX)) {
		err = fail_open(errno, "cannot size the probes maps");
		goto out;
	}
	t1 = pmu_now_mono_ns();
	if ((err = probes_bpf__load(s->skel))) {
		err = fail_open(-err, "the kernel refused the probes programs");
		goto out;
	}
	t2 = pmu_now_mono_ns();
	for (size_t i = 0; i < s->np; i++)
		if (conf_probe(s, i)) {
			err = fail_open(errno, "cannot fill the probes conf map");
			goto out;
		}
	s->t_load0 = t0;
	s->t_load1 = t1;
	s->t_load2 = t2;
out:
	libbpf_set_print(old);
	return err;
}

static int prb_probe(struct pmu_collector_env *env, json_t *caps, void **state)
{
	struct prs *s = calloc(1, sizeof(*s));
	uint64_t t = pmu_now_mono_ns();
	char why[PATH_MAX + 300];
	struct closctx cc;

	(void)caps;
	if (!s || !(s->p = calloc(PMU_PRB_MAX, sizeof(*s->p)))) {
		free(s);
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	}
	*state = s;
	s->env = env;
	s->heap = (struct pmu_heap)PMU_HEAP_INIT(struct item, item_less);
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		snprintf(why, sizeof(why), "the running kernel has no BTF: '/sys/kernel/btf/vmlinux': %s", strerror(errno));
		s->unusable = true;
		pmu_lc_unavailable_at(env->lc, t, why, REMEDY_BTF);
		return 0;
	}
	if (!pmu_caps_bpf()) {
		snprintf(why, sizeof(why), "uid %d lacks CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN) to attach uprobes",
			 (int)geteuid());
		s->unusable = true;
		pmu_lc_unavailable_at(env->lc, t, why, REMEDY_PRIV);
		return 0;
	}
	if (!env->cfg->argv || !env->cfg->argv[0]) {
		/* attach mode: the running tree's images */
		char ex[64];

		snprintf(ex, sizeof(ex), "/proc/%d/exe", (int)env->cfg->attach);
		if (!realpath(ex, s->exe)) {
			snprintf(why, sizeof(why), "cannot read '%s': %s", ex, strerror(errno));
			s->unusable = true;
			pmu_lc_unavailable_at(env->lc, t, why, "check that the process exists and is yours");
			return 0;
		}
	} else if (!resolve_exe(env->cfg->argv[0], s->exe, sizeof(s->exe))) {
		snprintf(why, sizeof(why), "cannot find '%s' as execvp(3) would (PATH)", env->cfg->argv[0]);
		s->unusable = true;
		pmu_lc_unavailable_at(env->lc, t, why, "give the command's path");
		return 0;
	}
	cc = (struct closctx){ s, 0 };
	if (pmu_sdt_closure(s->exe, on_obj, &cc) < 0 && !s->nobjs) {
		size_t a, b;

		read_obj(s, s->exe, &a, &b);
		cc.n = 1;
	}
	if (!s->np && !env->cfg->nprobes) {
		char head[2] = "";
		int fd = open(s->exe, O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			if (read(fd, head, 2) != 2)
				head[0] = 0;
			close(fd);
		}
		/* a script's interpreter is read (the closure's rule), not what
		 * the script runs: that is seen at its exec only by a collector
		 * that listens already */
		snprintf(why, sizeof(why), "no probes of providers pmu, python or hotspot in '%s' or the %zu objects it loads%s",
			 s->exe, cc.n ? cc.n - 1 : 0,
			 head[0] == '#' && head[1] == '!' ? " (a script: name the program it runs instead)" : "");
		s->unusable = true;
		pmu_lc_unavailable_at(env->lc, pmu_now_mono_ns(), why,
				      "build the program with include/pmu/probe.h (and <sys/sdt.h>), or name a probe "
				      "it has with --probe PROVIDER:NAME (pmurec --list-probes BINARY lists them)");
		return 0;
	}
	if ((s->load_err = prb_load(s)) < 0) {
		if (s->load_err == PMU_ERR_NOMEM)
			return s->load_err;
		snprintf(s->load_why, sizeof(s->load_why), "%s", pmu_error_detail());
		s->unusable = true;
		pmu_lc_unavailable_at(env->lc, pmu_now_mono_ns(), s->load_why,
				      "run with PMU_BPF_LOG=1 to see the verifier's whole log; a kernel with BPF ring "
				      "buffers, uprobes and BPF cookies (Linux 5.15 or later)");
		return 0;
	}
	s->load_err = 0;
	/* the command's probe.h leaves marks and spans to the probes */
	for (size_t i = 0; i < s->np; i++)
		if (s->p[i].m && s->p[i].m->rt == RT_PMU)
			s->listen_pmu = true;
	if (s->listen_pmu)
		setenv("PMUREC_PROBES", "pmu", 1);
	pmu_lc_probed_ok(env->lc, t);
	return 0;
}

static bool prb_usable(void *state)
{
	return !((struct prs *)state)->unusable;
}

/* attach probes [from, to) at t */
static void attach_range(struct prs *s, size_t from, size_t to, uint64_t t)
{
	for (size_t i = from; i < to; i++) {
		struct prb *p = &s->p[i];
		LIBBPF_OPTS(bpf_usdt_opts, o, .usdt_cookie = i);

		if (p->attached || p->reason[0])
			continue;
		if (conf_probe(s, i)) {
			snprintf(p->reason, sizeof(p->reason), "cannot fill the conf map: %s", strerror(errno));
			continue;
		}
		lb_last[0] = 0;
		p->link = bpf_program__attach_usdt(s->skel->progs.pmu_probe_hit, -1, p->binary, p->provider, p->name, &o);
		if (!p->link) {
			int e = errno;

			snprintf(p->reason, sizeof(p->reason), "libbpf could not attach it: %s%s%.200s", strerror(e),
				 lb_last[0] ? ": " : "", lb_last);
			continue;
		}
		p->attached = true;
		p->attached_ns = t > pmu_now_mono_ns() ? t : pmu_now_mono_ns();
	}
}

static void write_config(struct prs *s)
{
	json_t *c = json_object();
	char prov[64] = "", req[4096] = "";
	size_t n = 0;

	for (int r = RT_PMU; r <= RT_HOTSPOT; r++)
		for (size_t i = 0; i < s->np; i++)
			if (s->p[i].m && (int)s->p[i].m->rt == r) {
				n += (size_t)snprintf(prov + n, sizeof(prov) - n, "%s%s", n ? " " : "", rt_names[r]);
				break;
			}
	n = 0;
	for (size_t i = 0; i < s->env->cfg->nprobes && n < sizeof(req) - 1; i++)
		n += (size_t)snprintf(req + n, sizeof(req) - n, "%s%s", n ? " " : "", s->env->cfg->probes[i]);
	json_object_set_new(c, "type", json_string("config"));
	json_object_set_new(c, "mechanism", json_string("USDT uprobes (eBPF, libbpf)"));
	json_object_set_new(c, "filter", json_string("members"));
	json_object_set_new(c, "providers", json_string(prov));
	if (req[0])
		json_object_set_new(c, "requested", json_string(req));
	json_object_set_new(c, "abi", json_integer(PMU_PROBE_ABI));
	json_object_set_new(c, "ring_bytes", json_integer(s->ring_bytes));
	json_object_set_new(c, "ncpus", json_integer(s->ncpu));
	json_object_set_new(c, "clock", json_string("monotonic"));
	put(s, c);
}

static int prb_open(void *state, pid_t root, uint64_t t)
{
	struct prs *s = state;
	struct pmu_collector_env *env = s->env;
	struct pmu_out *o = env->out;
	libbpf_print_fn_t old;
	size_t natt = 0;
	uint64_t t3;
	char ev[400];
	int err;

	if (s->listen_pmu)
		unsetenv("PMUREC_PROBES"); /* the root has it; the other children must not */
	pmu_lc_step(env->lc, "opened", t);
	if (!env->followed)
		return pmu_error(PMU_ERR_UNSUPPORTED, "the cohort is not followed (%s): %s",
				 env->follow_reason ? env->follow_reason : "no follower",
				 env->follow_remedy ? env->follow_remedy : "see the cohort collector");
	if (s->load_err)
		return pmu_error(s->load_err, "%s", s->load_why);
	s->root = root;
	old = libbpf_set_print(lb_print);
	lb_last[0] = 0;
	{
		__u32 k = (__u32)root;
		__u64 v = env->cfg->attach ? PMU_COHORT_ANY : PMU_COHORT_PRE_EXEC;

		if (bpf_map__update_elem(s->skel->maps.pmu_members, &k, sizeof(k), &v, sizeof(v), BPF_ANY)) {
			err = fail_open(errno, "cannot add the root to the probes members map");
			goto out;
		}
	}
	if ((err = probes_bpf__attach(s->skel))) {
		err = fail_open(-err, "cannot attach the cohort filter's tracepoints");
		goto out;
	}
	attach_range(s, 0, s->np, pmu_now_mono_ns());
	for (size_t i = 0; i < s->np; i++)
		natt += s->p[i].attached;
	if (!(s->ring = ring_buffer__new(bpf_map__fd(s->skel->maps.rb), on_sample, s, NULL))) {
		err = fail_open(errno, "cannot map the probes ring");
		goto out;
	}
	if ((err = o->open(o, "collectors/probes/probes.jsonl", "probes", &s->ps)))
		goto out;
	write_config(s);
	t3 = pmu_now_mono_ns();
	snprintf(ev, sizeof(ev),
		 "%zu of %zu USDT probes attached (uprobes, pid -1) in %zu objects, cohort filter in the kernel (members); "
		 "load %.1f ms (before the command was forked), attach %.1f ms",
		 natt, s->np, s->nobjs, (s->t_load2 - s->t_load0) / 1e6, (t3 - t) / 1e6);
	pmu_lc_attached(env->lc, t3, ev);
	err = s->err;
out:
	libbpf_set_print(old);
	return err;
}

/* an image the cohort exec'd: read it and its objects, attach what is new */
static void late_exec(struct prs *s, pid_t pid, uint64_t t)
{
	char ex[64], path[PATH_MAX];
	size_t from = s->np;
	struct closctx cc = { s, 0 };
	libbpf_print_fn_t old;

	snprintf(ex, sizeof(ex), "/proc/%d/exe", (int)pid);
	if (!realpath(ex, path))
		return;
	for (size_t i = 0; i < s->nobjs; i++)
		if (!strcmp(s->objs[i], path))
			return;
	pmu_sdt_closure(path, on_obj, &cc);
	if (s->np == from)
		return;
	old = libbpf_set_print(lb_print);
	attach_range(s, from, s->np, t);
	libbpf_set_print(old);
	{
		size_t natt = 0;
		char ev[400];

		for (size_t i = 0; i < s->np; i++)
			natt += s->p[i].attached;
		snprintf(ev, sizeof(ev),
			 "%zu of %zu USDT probes attached (uprobes, pid -1) in %zu objects, cohort filter in the kernel "
			 "(members); the latest with '%.200s', exec'd by pid %d",
			 natt, s->np, s->nobjs, path, (int)pid);
		pmu_lc_set_evidence(s->env->lc, ev);
	}
}

/* the executable file mappings of pid not seen yet: read and attached */
static void scan_maps(struct prs *s, pid_t pid, uint64_t t)
{
	char path[64], line[PATH_MAX + 128];
	FILE *f;

	{
		char me[PATH_MAX], exe[PATH_MAX];

		/* the root before its exec is pmurec's image: not the command's */
		snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
		if (!realpath(path, exe) || (realpath("/proc/self/exe", me) && !strcmp(me, exe)))
			return;
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "re")))
		return; /* gone: its images are no one's now */
	while (fgets(line, sizeof(line), f)) {
		unsigned maj, min;
		unsigned long long ino;
		char perms[8], *obj, *nl;
		int off = 0;
		size_t from, to;

		if (sscanf(line, "%*s %7s %*s %x:%x %llu %n", perms, &maj, &min, &ino, &off) != 4 || !off)
			continue;
		obj = line + off;
		if ((nl = strchr(obj, '\n')))
			*nl = 0;
		/* executable file mappings; a deleted file cannot be read */
		if (perms[2] != 'x' || !ino || obj[0] != '/' || strstr(obj, " (deleted)"))
			continue;
		if (seen_add(s, (uint64_t)maj << 32 | min, ino))
			continue;
		read_obj(s, obj, &from, &to);
		if (from < to)
			attach_range(s, from, to, t);
	}
	fclose(f);
}

/*
 * An object the cohort maps after its exec (dlopen(3)) is in no DT_NEEDED
 * closure and has no exec record: its probes are found here, on the drain,
 * at most once per SCAN_NS, from the maps of up to SCAN_INCS live
 * incarnations per scan (round robin), each file once (dev:ino).  Its hits
 * before the attach are not seen; the probe record's attached_ns says from
 * when they are.
 */
static void scan_late(struct prs *s, uint64_t now)
{
	const struct pmu_cohort *c = s->env->cohort;
	size_t had = s->np, done = 0;
	libbpf_print_fn_t old;

	if (!c || s->stopped || !s->skel || (s->scan_t && now < s->scan_t + SCAN_NS))
		return;
	s->scan_t = now;
	old = libbpf_set_print(lb_print);
	for (size_t k = 0, at = s->scan_next; k < c->n && done < SCAN_INCS; k++) {
		const struct pmu_incarnation *in = &c->incs[(at + k) % c->n];

		if (in->ended)
			continue;
		scan_maps(s, in->pid, pmu_now_mono_ns());
		done++;
		s->scan_next = (at + k + 1) % c->n;
	}
	libbpf_set_print(old);
	if (s->np != had) {
		size_t natt = 0;
		char ev[400];

		for (size_t i = 0; i < s->np; i++)
			natt += s->p[i].attached;
		snprintf(ev, sizeof(ev),
			 "%zu of %zu USDT probes attached (uprobes, pid -1) in %zu objects, cohort filter in the kernel "
			 "(members); the latest with '%.200s', mapped after its exec",
			 natt, s->np, s->nobjs, s->p[s->np - 1].binary ? s->p[s->np - 1].binary : "");
		pmu_lc_set_evidence(s->env->lc, ev);
	}
}

static void prb_task(void *state, const struct pmu_task_event *ev)
{
	struct prs *s = state;

	if (!s->skel)
		return;
	switch (ev->what) {
	case PMU_TASK_JOINED:
		if (ev->flags & PMU_TASK_PREEXISTING) {
			__u32 k = (__u32)ev->pid;
			__u64 any = PMU_COHORT_ANY;

			bpf_map__update_elem(s->skel->maps.pmu_members, &k, sizeof(k), &any, sizeof(any), BPF_NOEXIST);
		}
		break;
	case PMU_TASK_EXEC: /* a thread's exec (the leader's come through the ring) */
		if (!s->stopped)
			late_exec(s, ev->pid, ev->t);
		break;
	case PMU_TASK_INC_ENDED: {
		/* through the heap: its hits still in the ring come first */
		uint64_t t = ev->t > s->last_written ? ev->t : s->last_written;

		if (pmu_heap_push(&s->heap, &(struct item){ t, UINT64_MAX, NULL, ev->inc }))
			s->err = s->err ? s->err : pmu_error(PMU_ERR_NOMEM, "out of memory");
		break;
	}
	default:
		break;
	}
}

static void read_counters(struct prs *s)
{
	struct pmu_prb_counters *pc = calloc((size_t)s->ncpu, sizeof(*pc));
	__u64 *v = calloc((size_t)s->ncpu, sizeof(*v));
	__u32 k = 0;

	if (pc && !bpf_map__lookup_elem(s->skel->maps.counters, &k, sizeof(k), pc, sizeof(*pc) * s->ncpu, 0))
		for (int c = 0; c < s->ncpu; c++) {
			s->lost_cpu[c * LOSS_N + LOSS_RESERVE] += pc[c].reserve_fail;
			s->lost_cpu[c * LOSS_N + LOSS_INC] += pc[c].alloc_fail;
		}
	/* a process the members map could not take: its hits are not seen */
	if (v && !bpf_map__lookup_elem(s->skel->maps.pmu_cohort_fail, &k, sizeof(k), v, sizeof(*v) * s->ncpu, 0))
		for (int c = 0; c < s->ncpu; c++)
			s->lost_cpu[c * LOSS_N + LOSS_RESERVE] += v[c];
	for (size_t i = 0; v && i < s->np; i++) {
		k = (__u32)i;
		if (!bpf_map__lookup_elem(s->skel->maps.hits, &k, sizeof(k), v, sizeof(*v) * s->ncpu, 0))
			for (int c = 0; c < s->ncpu; c++)
				s->p[i].hits += v[c];
		s->hits_total += s->p[i].hits;
	}
	free(pc);
	free(v);
}

static void prb_stop(void *state, uint64_t t)
{
	struct prs *s = state;

	if (!s->skel || s->stopped)
		return;
	s->stopped = true;
	for (size_t i = 0; i < s->np; i++) {
		bpf_link__destroy(s->p[i].link); /* semaphores go down with the uprobes */
		s->p[i].link = NULL;
	}
	probes_bpf__detach(s->skel);
	if (s->ring)
		take(s);
	read_counters(s);
	s->stop_t = pmu_now_mono_ns();
	pmu_lc_step(s->env->lc, "stopped", t);
}

/* ---- emit ------------------------------------------------------------------------ */

static uint64_t lost_total(const struct prs *s)
{
	return s->lost[LOSS_RESERVE] + s->lost[LOSS_OPEN] + s->lost[LOSS_INC];
}

static void write_probe(struct prs *s, const struct prb *p, uint64_t t)
{
	json_t *o = json_object();

	if (!o) {
		put(s, NULL);
		return;
	}
	json_object_set_new(o, "type", json_string("probe"));
	set_u(o, "t_ns", t);
	json_object_set_new(o, "binary", json_string(p->binary ? p->binary : ""));
	if (p->build_id[0])
		json_object_set_new(o, "build_id", json_string(p->build_id));
	json_object_set_new(o, "provider", json_string(p->provider));
	json_object_set_new(o, "name", json_string(p->name));
	if (p->args[0])
		json_object_set_new(o, "args", json_string(p->args));
	json_object_set_new(o, "semaphore", json_boolean(p->sema));
	json_object_set_new(o, "role", json_string(role_names[p->m ? p->m->role : R_RAW]));
	json_object_set_new(o, "attached", json_boolean(p->attached));
	if (p->attached)
		set_u(o, "attached_ns", p->attached_ns);
	else
		json_object_set_new(o, "reason", json_string(p->reason[0] ? p->reason : "not attached"));
	set_u(o, "hits", p->attached ? p->hits : 0);
	put(s, o);
}

/* why the collector failed (a --probe found nowhere, a promised pmu probe
 * not attached), "" when it did not */
static void failure(struct prs *s)
{
	const struct pmu_run_config *cfg = s->env->cfg;
	size_t n = 0;

	for (size_t i = 0; i < cfg->nprobes; i++) {
		const char *c = strchr(cfg->probes[i], ':');
		bool found = false;

		for (size_t k = 0; c && k < s->np; k++)
			found |= strlen(s->p[k].provider) == (size_t)(c - cfg->probes[i]) &&
				 !strncmp(s->p[k].provider, cfg->probes[i], (size_t)(c - cfg->probes[i])) &&
				 !strcmp(s->p[k].name, c + 1) && s->p[k].attached;
		if (!found && n < sizeof(s->failed_why) - 1)
			n += (size_t)snprintf(s->failed_why + n, sizeof(s->failed_why) - n,
					      "%s--probe %s: not found (or not attached) in '%s' or the objects it loads",
					      n ? "; " : "", cfg->probes[i], s->exe);
	}
	if (s->listen_pmu)
		for (size_t k = 0; k < s->np && n < sizeof(s->failed_why) - 1; k++)
			if (s->p[k].m && s->p[k].m->rt == RT_PMU && !s->p[k].attached)
				n += (size_t)snprintf(s->failed_why + n, sizeof(s->failed_why) - n,
						      "%sprobe pmu:%s in '%s' not attached (%s), and PMUREC_PROBES told the "
						      "command not to use the control channel",
						      n ? "; " : "", s->p[k].name, s->p[k].binary, s->p[k].reason);
}

static int prb_emit(void *state, struct pmu_collector_env *env, const struct pmu_run_window *win)
{
	struct prs *s = state;
	uint64_t tl;
	json_t *sum;
	int err;

	if (!s || s->unusable)
		return 0;
	if (!s->ps)
		return s->err;
	while (s->ring && take(s) && !s->err)
		flush(s, UINT64_MAX, UINT64_MAX, true, HEAP_MAX / 4);
	flush(s, UINT64_MAX, UINT64_MAX, true, SIZE_MAX);
	tl = s->stop_t < win->end_ns ? s->stop_t : win->end_ns;
	if (tl < s->last_written)
		tl = s->last_written;
	/* what is still open at the stop */
	for (uint32_t i = 0; s->open && s->nopen && i < OPEN_MAX; i++)
		if (s->open[i].used) {
			if (s->open[i].cls == O_THREAD)
				write_thread_alive(s, &s->open[i], tl);
			else
				write_unended(s, &s->open[i], tl);
			open_del(s, i + 1);
		}
	write_allocs(s, 0, tl);
	for (int c = 0; c < s->ncpu; c++)
		for (int w = 0; w < LOSS_N; w++)
			s->lost[w] += s->lost_cpu[c * LOSS_N + w];
	for (int c = 0; c < s->ncpu; c++)
		for (int w = 0; w < LOSS_N; w++)
			if (s->lost_cpu[c * LOSS_N + w]) {
				json_t *l = json_object();

				json_object_set_new(l, "type", json_string("loss"));
				set_u(l, "t_ns", tl);
				json_object_set_new(l, "cpu", json_integer(c));
				set_u(l, "lost", s->lost_cpu[c * LOSS_N + w]);
				json_object_set_new(l, "what", json_string(loss_what[w]));
				put(s, l);
			}
	{
		size_t natt = 0;

		for (size_t i = 0; i < s->np; i++) {
			write_probe(s, &s->p[i], tl);
			natt += s->p[i].attached;
		}
		sum = json_object();
		json_object_set_new(sum, "type", json_string("summary"));
		set_u(sum, "probes", s->np);
		set_u(sum, "attached", natt);
		set_u(sum, "hits", s->hits_total);
	}
	set_u(sum, "spans", s->spans);
	set_u(sum, "marks", s->marks);
	set_u(sum, "gcs", s->gcs);
	set_u(sum, "raw_hits", s->raw_hits);
	set_u(sum, "unended", s->unended);
	set_u(sum, "unmatched", s->unmatched);
	set_u(sum, "unattributed", s->unattributed);
	set_u(sum, "lost", lost_total(s));
	set_u(sum, "malformed", s->malformed);
	put(s, sum);
	err = s->err;
	{
		int e2 = env->out->close(s->ps);

		s->ps = NULL;
		err = err ? err : e2;
	}
	if (lost_total(s)) {
		char why[300];

		snprintf(why, sizeof(why),
			 "%" PRIu64 " lost: %" PRIu64 " hits found the ring full, %" PRIu64
			 " begins found the open table full, %" PRIu64 " pmu:alloc hits found the allocs map full",
			 lost_total(s), s->lost[LOSS_RESERVE], s->lost[LOSS_OPEN], s->lost[LOSS_INC]);
		pmu_lc_lost(env->lc, "drop", win->end_ns, lost_total(s), why);
	}
	if (s->malformed)
		pmu_lc_lost(env->lc, "malformed", win->end_ns, s->malformed, s->malformed_first);
	if (s->orphans) {
		char ev[700];
		size_t natt = 0;

		for (size_t i = 0; i < s->np; i++)
			natt += s->p[i].attached;
		snprintf(ev, sizeof(ev),
			 "%zu of %zu USDT probes attached (uprobes, pid -1) in %zu objects, cohort filter in the kernel "
			 "(members); %" PRIu64 " spans written without their parent, whose begin was not seen (begun "
			 "before span_begin was attached, or lost)",
			 natt, s->np, s->nobjs, s->orphans);
		pmu_lc_set_evidence(env->lc, ev);
	}
	pmu_lc_step(env->lc, "detached", win->end_ns);
	failure(s);
	if (s->failed_why[0])
		pmu_lc_final(env->lc, win->end_ns, "failed", s->failed_why);
	else
		pmu_lc_final(env->lc, win->end_ns, s->hits_total ? "ok" : "no-events", NULL);
	return err;
}

static bool prb_failed(void *state, char *why, size_t n)
{
	struct prs *s = state;
	const struct pmu_sampling_opts *so = s->env->cfg->sampling;

	if (s->unusable)
		return false;
	if (s->failed_why[0]) {
		snprintf(why, n, "%s", s->failed_why);
		return true;
	}
	if (!lost_total(s) || (so && so->allow_loss))
		return false;
	snprintf(why, n, "%" PRIu64 " probe hits lost (--allow-loss accepts a bundle with loss)", lost_total(s));
	return true;
}

static void prb_release(void *state)
{
	struct prs *s = state;

	if (!s)
		return;
	while (s->heap.n) {
		struct item it;

		pmu_heap_pop(&s->heap, &it);
		free(it.r);
	}
	pmu_heap_free(&s->heap);
	if (s->ps)
		s->env->out->close(s->ps);
	ring_buffer__free(s->ring);
	for (size_t i = 0; s->p && i < s->np; i++)
		bpf_link__destroy(s->p[i].link);
	probes_bpf__destroy(s->skel);
	for (uint32_t i = 0; s->open && i < OPEN_MAX; i++)
		if (s->open[i].used) {
			free(s->open[i].name);
			free(s->open[i].extra);
		}
	free(s->open);
	free(s->bucket);
	for (size_t i = 0; i < s->nobjs; i++)
		free(s->objs[i]);
	free(s->p);
	free(s->lost_cpu);
	free(s->seen);
	free(s);
}

const struct pmu_collector_ops pmu_probes_collector = {
	.name = "probes",
	.modes = 4,
	.probe = prb_probe,
	.usable = prb_usable,
	.open = prb_open,
	.task = prb_task,
	.fds = prb_fds,
	.drain = prb_drain,
	.stop = prb_stop,
	.emit = prb_emit,
	.failed = prb_failed,
	.release = prb_release,
};

#else /* !PMU_BPF_BUILT */

#ifndef PMU_BPF_UNBUILT
#define PMU_BPF_UNBUILT "no eBPF toolchain at build time"
#endif

static int prb_probe(struct pmu_collector_env *env, json_t *caps, void **state)
{
	(void)caps;
	*state = NULL;
	pmu_lc_unavailable_at(env->lc, pmu_now_mono_ns(), "the probes collector was built without eBPF: " PMU_BPF_UNBUILT,
			      "install clang, bpftool and libbpf-dev (and a kernel with BTF), then rebuild pmu; spans "
			      "and marks still reach spans.jsonl through the control channel");
	return 0;
}

static int prb_emit(void *state, struct pmu_collector_env *env, const struct pmu_run_window *win)
{
	(void)state, (void)env, (void)win;
	return 0;
}

static void prb_release(void *state)
{
	(void)state;
}

const struct pmu_collector_ops pmu_probes_collector = {
	.name = "probes", .modes = 4, .probe = prb_probe, .emit = prb_emit, .release = prb_release,
};
#endif

/* pmurec --list-probes' last line: whether this pmurec could attach to the
 * probes it lists (backend.h) */
bool pmu_backend_usdt_attach(char *why, size_t wn, const char **remedy)
{
#ifndef PMU_BPF_BUILT
	snprintf(why, wn, "this pmurec was built without eBPF (%s)", PMU_BPF_UNBUILT);
	*remedy = "install clang, bpftool and libbpf-dev (and a kernel with BTF), then rebuild pmu";
	return false;
#else
	uint64_t eff = pmu_caps_effective();
	bool bpf, perfmon, uprobe;

	/* CAP_SYS_ADMIN stands for both, as the kernel's bpf_capable() and
	 * perfmon_capable() say */
	bpf = eff & (PMU_CAP_BPF | PMU_CAP_SYS_ADMIN);
	perfmon = eff & (PMU_CAP_PERFMON | PMU_CAP_SYS_ADMIN);
	uprobe = !access("/sys/bus/event_source/devices/uprobe", F_OK);
	if (bpf && perfmon && uprobe) {
		snprintf(why, wn, "euid %d with CAP_BPF and CAP_PERFMON; the uprobe PMU is there (/sys/bus/event_source/devices/uprobe)",
			 (int)geteuid());
		*remedy = NULL;
		return true;
	}
	if (!(bpf && perfmon)) {
		snprintf(why, wn, "euid %d lacks %s%s%s%s", (int)geteuid(), bpf ? "" : "CAP_BPF",
			 !bpf && !perfmon ? " and " : "", perfmon ? "" : "CAP_PERFMON",
			 uprobe ? "" : "; no uprobe PMU (/sys/bus/event_source/devices/uprobe)");
		*remedy = uprobe ? "run pmurec as root, or grant it CAP_BPF and CAP_PERFMON (setcap cap_bpf,cap_perfmon+ep)"
				 : "run pmurec as root on a kernel built with CONFIG_UPROBE_EVENTS=y";
	} else {
		snprintf(why, wn, "no uprobe PMU (/sys/bus/event_source/devices/uprobe is missing)");
		*remedy = "boot a kernel built with CONFIG_UPROBE_EVENTS=y";
	}
	return false;
#endif
}
