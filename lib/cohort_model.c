/*
 * The cohort model (lib/cohort_model.h): incarnations, their live tid
 * index, the bundle's bounds, and the pid index that attributes other
 * collectors' records.  No kernel interface here: the followers in
 * backends/ feed it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cohort_model.h"
#include "error.h"
#include "spec.h"
#include "util.h"

const char *const pmu_res_names[PMU_RES_COUNT_] = {
	"cpu_user_ns", "cpu_system_ns", "max_rss_bytes", "minor_faults", "major_faults",
	"voluntary_switches", "involuntary_switches", "read_bytes", "write_bytes",
};

/*
 * Live tid -> incarnation index: the follower looks up the task of every
 * wait event, so a scan of the cohort would make following quadratic in
 * its size.  Open addressing, linear probing; a deleted slot is a
 * tombstone until the next rehash.  Only tasks of incarnations not yet
 * ended are here: memory follows what runs, not what ran.
 */
struct pmu_tidmap {
	size_t cap, used, tombs; /* used: live keys */
	struct tidslot {
		pid_t tid;       /* 0 empty, -1 deleted */
		int32_t idx;
	} *s;
};

static size_t tid_hash(pid_t tid, size_t cap)
{
	return ((uint32_t)tid * 2654435761u) & (cap - 1);
}

static void tidmap_free(struct pmu_tidmap *m)
{
	if (m)
		free(m->s);
	free(m);
}

static long tidmap_get(const struct pmu_tidmap *m, pid_t tid)
{
	if (!m || tid <= 0)
		return -1;
	for (size_t i = tid_hash(tid, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->s[i].tid == tid)
			return m->s[i].idx;
		if (m->s[i].tid == 0)
			return -1;
	}
}

static int tidmap_grow(struct pmu_tidmap *m)
{
	size_t cap = 64;
	struct tidslot *s;

	while (cap < 4 * (m->used + 1))
		cap *= 2;
	if (!(s = calloc(cap, sizeof(*s))))
		return -1;
	for (size_t i = 0; i < m->cap; i++)
		if (m->s[i].tid > 0) {
			size_t j = tid_hash(m->s[i].tid, cap);

			while (s[j].tid)
				j = (j + 1) & (cap - 1);
			s[j] = m->s[i];
		}
	free(m->s);
	m->s = s;
	m->cap = cap;
	m->tombs = 0;
	return 0;
}

/* tid now belongs to idx (the newest incarnation wins). */
static int tidmap_put(struct pmu_tidmap **mp, pid_t tid, long idx)
{
	struct pmu_tidmap *m = *mp;
	size_t i;

	if (!m && !(m = *mp = calloc(1, sizeof(*m))))
		return -1;
	if (2 * (m->used + m->tombs + 1) > m->cap && tidmap_grow(m) < 0)
		return -1;
	for (i = tid_hash(tid, m->cap); m->s[i].tid != 0; i = (i + 1) & (m->cap - 1))
		if (m->s[i].tid == tid) {
			m->s[i].idx = (int32_t)idx;
			return 0;
		}
	/* not present: the probe stopped at an empty slot; reuse a tombstone before it */
	for (size_t j = tid_hash(tid, m->cap); j != i; j = (j + 1) & (m->cap - 1))
		if (m->s[j].tid == -1) {
			m->s[j] = (struct tidslot){ tid, (int32_t)idx };
			m->tombs--;
			m->used++;
			return 0;
		}
	m->s[i] = (struct tidslot){ tid, (int32_t)idx };
	m->used++;
	return 0;
}

/* Forget tid if it still belongs to idx. */
static void tidmap_del(struct pmu_tidmap *m, pid_t tid, long idx)
{
	if (!m || tid <= 0)
		return;
	for (size_t i = tid_hash(tid, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->s[i].tid == 0)
			return;
		if (m->s[i].tid == tid) {
			if (m->s[i].idx == idx) {
				m->s[i].tid = -1;
				m->used--;
				m->tombs++;
			}
			return;
		}
	}
}

void pmu_cohort_release(struct pmu_cohort *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->incs[i].tids);
		if (c->incs[i].d)
			free(c->incs[i].d->res);
		free(c->incs[i].d);
	}
	free(c->incs);
	free(c->by_pid);
	tidmap_free(c->tidmap);
	memset(c, 0, sizeof(*c));
}

static bool has_tid(const struct pmu_incarnation *in, pid_t tid)
{
	for (uint32_t k = 0; k < in->ntids; k++)
		if (in->tids[k] == tid)
			return true;
	return false;
}

static bool find_ok(const struct pmu_incarnation *in, pid_t pid, pid_t tid, uint64_t t0, uint64_t t1)
{
	return in->pid == pid && t0 >= in->start_ns && !(in->ended && t1 > in->end_ns) && has_tid(in, tid);
}

const struct pmu_incarnation *pmu_cohort_find(const struct pmu_cohort *c, pid_t pid, pid_t tid, uint64_t t0,
					      uint64_t t1)
{
	if (c->by_pid) {
		/* the first index of pid, then its incarnations in start order */
		size_t lo = 0, hi = c->n;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (c->incs[c->by_pid[mid]].pid < pid)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < c->n && c->incs[c->by_pid[lo]].pid == pid; lo++)
			if (find_ok(&c->incs[c->by_pid[lo]], pid, tid, t0, t1))
				return &c->incs[c->by_pid[lo]];
		return NULL;
	}
	for (size_t i = 0; i < c->n; i++)
		if (find_ok(&c->incs[i], pid, tid, t0, t1))
			return &c->incs[i];
	return NULL;
}

static const struct pmu_cohort *sort_cohort;

static int cmp_by_pid(const void *a, const void *b)
{
	const struct pmu_incarnation *x = &sort_cohort->incs[*(const uint32_t *)a],
				     *y = &sort_cohort->incs[*(const uint32_t *)b];

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->id - y->id; /* ids are in start order */
}

/* The pid index of pmu_cohort_find(); without memory, the linear scan stays. */
static void index_by_pid(struct pmu_cohort *c)
{
	free(c->by_pid);
	c->by_pid = c->n ? malloc(c->n * sizeof(*c->by_pid)) : NULL;
	if (!c->by_pid)
		return;
	for (size_t i = 0; i < c->n; i++)
		c->by_pid[i] = (uint32_t)i;
	sort_cohort = c;
	qsort(c->by_pid, c->n, sizeof(*c->by_pid), cmp_by_pid);
	sort_cohort = NULL;
}

/* The newest incarnation not ended that has tid among its threads. */

/* The newest incarnation not ended that has tid among its threads. */
struct pmu_incarnation *pmu_cohort_of_tid(struct pmu_cohort *c, pid_t tid)
{
	long i = tidmap_get(c->tidmap, tid);

	return i >= 0 ? &c->incs[i] : NULL;
}

struct pmu_incarnation *pmu_cohort_of_pid(struct pmu_cohort *c, pid_t pid)
{
	struct pmu_incarnation *in = pmu_cohort_of_tid(c, pid);

	return in && in->pid == pid ? in : NULL;
}

/* The sink's calls: after its first error, none. */
#define SINK(c, op, ...) \
	do { \
		if ((c)->sink && (c)->sink->op && !(c)->err) \
			(c)->err = (c)->sink->op((c)->sink->ctx, __VA_ARGS__); \
	} while (0)

void pmu_cohort_task_joined(struct pmu_cohort *c, const struct pmu_incarnation *in, pid_t tid, uint64_t t)
{
	if (c->listener && c->listener->joined)
		c->listener->joined(c->listener->ctx, in->id, in->pid, tid, c->task_flags, t);
}

void pmu_cohort_task_exec(struct pmu_cohort *c, const struct pmu_incarnation *in, pid_t former_tid, uint64_t t)
{
	if (c->listener && c->listener->exec)
		c->listener->exec(c->listener->ctx, in->id, in->pid, former_tid, t);
}

void pmu_cohort_task_ended(struct pmu_cohort *c, const struct pmu_incarnation *in, pid_t tid, uint64_t t,
			   const struct pmu_task_counts *counts)
{
	if (c->listener && c->listener->ended)
		c->listener->ended(c->listener->ctx, in->id, tid, t, counts);
	if (c->live_tasks)
		c->live_tasks--;
}

int pmu_cohort_add_tid(struct pmu_cohort *c, struct pmu_incarnation *in, pid_t tid)
{
	if (has_tid(in, tid))
		return 1;
	if (c->nthreads >= (c->max_threads ? c->max_threads : PMU_COHORT_MAX_THREADS)) {
		if (!c->limit_reason[0])
			snprintf(c->limit_reason, sizeof(c->limit_reason),
				 "the cohort reached %zu threads, the most a bundle holds: it was sent SIGTERM",
				 c->nthreads);
		return 2;
	}
	/* capacity: the power of two at or above ntids */
	if (!in->ntids || !(in->ntids & (in->ntids - 1))) {
		pid_t *t = realloc(in->tids, (in->ntids ? 2 * (size_t)in->ntids : 1) * sizeof(*t));

		if (!t)
			return pmu_error(PMU_ERR_NOMEM, "out of memory");
		in->tids = t;
	}
	if (tidmap_put(&c->tidmap, tid, (long)(in - c->incs)) < 0)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	in->tids[in->ntids++] = tid;
	c->nthreads++;
	c->live_tasks++;
	SINK(c, thread, in, tid);
	pmu_cohort_task_joined(c, in, tid, pmu_now_mono_ns());
	return 0;
}

struct pmu_incarnation *pmu_cohort_add(struct pmu_cohort *c, pid_t pid, int parent, uint64_t t,
				       uint64_t boot_start, const char *comm, bool preexisting)
{
	struct pmu_incarnation *in;
	size_t max = c->max_incs ? c->max_incs : PMU_COHORT_MAX_INCARNATIONS;

	if (c->nthreads >= (c->max_threads ? c->max_threads : PMU_COHORT_MAX_THREADS) && !c->limit_reason[0])
		snprintf(c->limit_reason, sizeof(c->limit_reason),
			 "the cohort reached %zu threads, the most a bundle holds: it was sent SIGTERM", c->nthreads);
	if (c->limit_reason[0])
		return NULL;
	if (c->n >= max) {
		if (!c->limit_reason[0])
			snprintf(c->limit_reason, sizeof(c->limit_reason),
				 "the cohort reached %zu incarnations, the most a bundle holds: it was sent SIGTERM", max);
		return NULL;
	}
	if (pmu_grow(&c->incs, &c->cap, c->n, sizeof(*c->incs), 16))
		return NULL;
	in = &c->incs[c->n];
	memset(in, 0, sizeof(*in));
	if (!(in->d = calloc(1, sizeof(*in->d))))
		return NULL;
	in->id = (int)++c->n;
	in->parent = parent;
	in->pid = pid;
	in->start_ns = t;
	in->preexisting = preexisting;
	in->boot_start = boot_start;
	snprintf(in->d->comm, sizeof(in->d->comm), "%.31s", comm && comm[0] ? comm : "?");
	SINK(c, joined, in);
	c->live_incs++;
	if (pmu_cohort_add_tid(c, in, pid) < 0) {
		/* its record is written: the stream cannot be finished */
		if (!c->err)
			c->err = pmu_error(PMU_ERR_NOMEM, "out of memory");
		free(in->d);
		c->live_incs--;
		c->n--;
		return NULL;
	}
	return in;
}

void pmu_cohort_exec(struct pmu_cohort *c, struct pmu_incarnation *in, uint64_t t, const char *path,
		     const struct pmu_exec_argv *argv)
{
	SINK(c, exec, in, t, path, argv);
}

void pmu_res_set(struct pmu_resource *r, uint64_t v, const char *source)
{
	r->ok = true;
	r->value = v;
	r->source = source;
	r->reason[0] = '\0';
	r->remedy = NULL;
}

void pmu_res_unavail(struct pmu_resource *r, const char *source, const char *remedy, const char *fmt, ...)
{
	va_list ap;

	r->ok = false;
	r->source = source;
	r->remedy = remedy;
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
}

/* Made when the first total is set: an incarnation still running holds no reasons. */
struct pmu_resource *pmu_cohort_res(struct pmu_incarnation *in)
{
	if (!in->d)
		return NULL;
	if (!in->d->res && (in->d->res = calloc(PMU_RES_COUNT_, sizeof(*in->d->res))))
		for (int r = 0; r < PMU_RES_COUNT_; r++)
			snprintf(in->d->res[r].reason, sizeof(in->d->res[r].reason),
				 "the incarnation's end was not observed");
	return in->d->res;
}

/* Write in out (its resources and end) and keep only its compact part. */
static void write_out(struct pmu_cohort *c, struct pmu_incarnation *in)
{
	if (!in->d)
		return;
	SINK(c, ended, in);
	free(in->d->res);
	free(in->d);
	in->d = NULL;
}

void pmu_cohort_end(struct pmu_cohort *c, struct pmu_incarnation *in, int exit_kind, int exit_value, uint64_t t)
{
	if (in->ended)
		return;
	in->ended = true;
	in->end_ns = t;
	if (in->d) {
		in->d->exit_kind = exit_kind;
		in->d->exit_value = exit_value;
	}
	for (uint32_t k = 0; k < in->ntids; k++)
		tidmap_del(c->tidmap, in->tids[k], (long)(in - c->incs));
	if (c->live_incs)
		c->live_incs--;
	write_out(c, in);
	if (c->listener && c->listener->inc_ended)
		c->listener->inc_ended(c->listener->ctx, in->id, t);
}

int pmu_cohort_finish(struct pmu_cohort *c, int err)
{
	for (size_t i = 0; i < c->n; i++)
		write_out(c, &c->incs[i]);
	tidmap_free(c->tidmap);
	c->tidmap = NULL;
	index_by_pid(c);
	return err ? err : c->err;
}
