/*
 * The OS-event sections of pmuanalyze (oscall.h): the syscalls,
 * syscall-stats and sched streams (bundle-spec section 23) read record by
 * record.  Memory is flat in the streams' length: what is kept is a few
 * bounded tables (rows of incarnation x syscall x file, files, chains,
 * per-thread pending off-CPU intervals), each counting what did not fit.
 *
 * Three passes, each a stream read once:
 *  1. sched.jsonl and syscalls.jsonl merged by t_ns: every off interval is
 *     held on its thread until that thread's next raw call; a call whose
 *     [entry, exit] holds the interval names its syscall and file, else the
 *     interval keeps the syscall the sched collector saw in progress (no
 *     file).  Thread records give the decomposition's totals.
 *  2. syscall-stats.jsonl: the rows' counts, times, errors and bytes, and
 *     each syscall's histogram over the cohort.
 *  3. syscall-stats.jsonl again: the histograms of the rows the report
 *     lists and of the dominant wait's program x syscall x file, so that
 *     only those hold one.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "bundle.h"
#include "error.h"
#include "jsonl.h"
#include "model.h"
#include "oscall.h"
#include "spec_json.h"
#include "symbolize.h"
#include "util.h"

#define OS_HB 312              /* section 23.4's buckets */
#define OS_ROWS_MAX 65536      /* distinct keys per table */
#define OS_FILES_MAX 65536     /* distinct dev:ino */
#define OS_CHAINS_MAX 4096     /* distinct off-CPU chains */
#define OS_PEND 16             /* off intervals held per thread */
#define OS_TOP 20              /* rows listed per ranking */
#define OS_ROWS_JSON 500       /* incarnation x syscall x file rows in the report */
#define OS_UNENTERED 32       /* syscall names of calls seen only at their exit, listed */
#define OS_TOP_THREADS 20
#define OS_NONE 0u             /* "no file" and "no syscall" */

/* ---- a table keyed by three small numbers ------------------------------------------ */

struct agg {
	uint32_t a, b, c;
	uint64_t count, total, min, max, bytes, errors;
	bool has_bytes, top;
	uint32_t err_name[4];
	uint64_t err_count[4], err_other;
	uint64_t wait[3];      /* S, D, other: ns waiting */
	uint64_t runq, offs;
	uint64_t *hist;        /* OS_HB buckets, only where asked */
	uint64_t t_first;      /* chains: the first interval's time and */
	uint32_t inc_first;    /* incarnation (+ 1), to symbolize the chain at */
	char *names;           /* chains: the frames' names, outermost first, ';'-separated */
};

struct kmap {
	struct agg *v;
	size_t n, cap;
	uint32_t *slot;        /* index + 1 */
	size_t nslot;
	uint64_t over;         /* keys that did not fit */
};

static uint64_t kh(uint32_t a, uint32_t b, uint32_t c)
{
	uint64_t h = ((uint64_t)a * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)b * 0xc2b2ae3d27d4eb4full) ^
		     ((uint64_t)c * 0x165667b19e3779f9ull);

	h ^= h >> 31;
	return h * 0xff51afd7ed558ccdull;
}

static void km_release(struct kmap *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].hist);
		free(m->v[i].names);
	}
	free(m->v);
	free(m->slot);
	memset(m, 0, sizeof(*m));
}

static struct agg *km_find(const struct kmap *m, uint32_t a, uint32_t b, uint32_t c)
{
	if (!m->nslot)
		return NULL;
	for (size_t s = kh(a, b, c) & (m->nslot - 1);; s = (s + 1) & (m->nslot - 1)) {
		uint32_t x = m->slot[s];

		if (!x)
			return NULL;
		if (m->v[x - 1].a == a && m->v[x - 1].b == b && m->v[x - 1].c == c)
			return &m->v[x - 1];
	}
}

/* The entry of (a, b, c), made when new; NULL when the table is full (the
 * caller counts it) or out of memory (*nomem). */
static struct agg *km_get(struct kmap *m, uint32_t a, uint32_t b, uint32_t c, bool *nomem)
{
	struct agg *e = km_find(m, a, b, c);

	if (e)
		return e;
	if (m->n >= OS_ROWS_MAX) {
		m->over++;
		return NULL;
	}
	if (m->n + 1 > m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 256;
		struct agg *nv = realloc(m->v, nc * sizeof(*nv));

		if (!nv) {
			*nomem = true;
			return NULL;
		}
		m->v = nv;
		m->cap = nc;
	}
	if (2 * (m->n + 1) > m->nslot) {
		size_t ns = m->nslot ? m->nslot * 2 : 512;
		uint32_t *sl = calloc(ns, sizeof(*sl));

		if (!sl) {
			*nomem = true;
			return NULL;
		}
		free(m->slot);
		m->slot = sl;
		m->nslot = ns;
		for (size_t i = 0; i < m->n; i++) {
			size_t s = kh(m->v[i].a, m->v[i].b, m->v[i].c) & (ns - 1);

			while (sl[s])
				s = (s + 1) & (ns - 1);
			sl[s] = (uint32_t)(i + 1);
		}
	}
	e = &m->v[m->n];
	memset(e, 0, sizeof(*e));
	e->a = a;
	e->b = b;
	e->c = c;
	e->min = UINT64_MAX;
	{
		size_t s = kh(a, b, c) & (m->nslot - 1);

		while (m->slot[s])
			s = (s + 1) & (m->nslot - 1);
		m->slot[s] = (uint32_t)(m->n + 1);
	}
	m->n++;
	return e;
}

/* ---- state --------------------------------------------------------------------- */

struct pend {
	uint64_t start, end, wait, runq;
	uint32_t name;
	int state;             /* 0 S, 1 D, 2 other, 3 R */
};

struct tid_pend {
	struct pend p[OS_PEND];
	int n;
	uint32_t inc;
};

struct thr {
	int64_t tid, pid;
	uint32_t inc;
	uint64_t v[7];         /* thread time, on, runq, sleep, blocked, other, unobserved */
};

struct os {
	const struct pmu_bundle *b;
	int rep;
	/* the cohort */
	struct an_ids incs, progs;
	int32_t *inc_parent, *inc_prog;
	int64_t *inc_pid;
	char **inc_comm, **inc_own;
	size_t ninc, icap;
	uint64_t (*inc_v)[7];  /* per incarnation, as thr.v */
	uint32_t *inc_threads;
	/* names: syscalls, errors ("" first: OS_NONE) */
	struct an_ids names;
	/* files: "dev:ino" (OS_NONE = index 0: none) */
	struct an_ids files;
	char **file_path;
	char **file_ftype;
	size_t fcap;
	uint64_t files_over;
	/* tables */
	struct kmap rows;      /* (inc+1, syscall, file) from the stats */
	struct kmap bysc;      /* (syscall, 0, 0): cohort totals, with hist */
	struct kmap errs;      /* (syscall, error, 0) */
	struct kmap waits;     /* (prog+1, syscall, file): off intervals waited */
	struct kmap incw;      /* (inc+1, syscall, file) */
	struct kmap states;    /* (state, 0, 0) */
	struct kmap offsc;     /* (syscall, 0, 0) from the off records */
	struct kmap chains;    /* (prog+1, chain, syscall) */
	struct an_ids chainstr;
	uint64_t chains_over;
	/* pending offs per tid */
	struct kmap tids;      /* (tid lo, tid hi, 0) -> index in pend (count) */
	struct tid_pend *pend;
	size_t npend, pcap;
	/* top threads by thread time */
	struct thr top[OS_TOP_THREADS];
	size_t ntop;
	uint64_t nthreads;
	/* what the streams said */
	bool have_sys, have_stats, have_sched, have_chains;
	char *raw_calls, *chains_mode;
	uint64_t min_off_ns;
	uint64_t sys_calls, sys_fds, sys_trunc, sys_lost, sys_unatt, sys_malformed, sys_seen_calls, sys_seen_lost;
	bool sys_summary;
	uint64_t st_stats, st_calls, st_lost, st_unatt, st_seen;
	bool st_summary;
	/* calls seen only at their exit (unentered records): no duration;
	 * counted per syscall name, the first OS_UNENTERED names */
	uint64_t unent, unent_other;
	struct {
		char name[32];
		uint64_t n;
	} unent_by[OS_UNENTERED];
	size_t nunent;
	uint64_t sc_offs, sc_threads, sc_short, sc_unatt, sc_lost, sc_malformed, sc_seen_lost;
	bool sc_summary;
	uint64_t unknown_inc, malformed, joined, unjoined, pend_over;
	uint64_t off_total, off_wait, off_runq;
	bool nomem;
	char sym_why[400];     /* why chains were not symbolized */
	/* the dominant wait */
	struct agg *dom;
	uint64_t dom_count, dom_total, dom_max, dom_hist[OS_HB];
	uint32_t dom_procs;
};

static char *dupn(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

static bool jint(const struct pmu_jrec *r, const char *k, uint64_t *v)
{
	const struct pmu_jfield *f = pmu_jrec_get(r, k);

	if (!f || f->type != PMU_JV_INT || f->overflow || f->i < 0)
		return false;
	*v = (uint64_t)f->i;
	return true;
}

static bool jsint(const struct pmu_jrec *r, const char *k, int64_t *v)
{
	const struct pmu_jfield *f = pmu_jrec_get(r, k);

	if (!f || f->type != PMU_JV_INT || f->overflow)
		return false;
	*v = f->i;
	return true;
}

/* A string field copied into out (cut at n - 1 bytes); false when absent. */
static bool jstrb(const struct pmu_jrec *r, const char *k, char *out, size_t n)
{
	const struct pmu_jfield *f = pmu_jrec_get(r, k);
	size_t l;

	if (!f || f->type != PMU_JV_STR || !n)
		return false;
	l = f->slen < n - 1 ? f->slen : n - 1;
	memcpy(out, f->s, l);
	out[l] = 0;
	return true;
}

static bool is_type(const struct pmu_jrec *r, const char *lit)
{
	const struct pmu_jfield *t = pmu_jrec_get(r, "type");

	return t && t->type == PMU_JV_STR && t->slen == strlen(lit) && !memcmp(t->s, lit, t->slen);
}

static uint32_t name_id(struct os *o, const char *s)
{
	long i = an_ids_put(&o->names, s, NULL);

	if (i < 0) {
		o->nomem = true;
		return OS_NONE;
	}
	return (uint32_t)i;
}

static const char *name_of(const struct os *o, uint32_t i)
{
	return an_ids_name(&o->names, i);
}

/* The file of a record's dev and ino (and path, ftype when it has them):
 * its index, OS_NONE without dev and ino, or when the table is full. */
static uint32_t file_of(struct os *o, const struct pmu_jrec *r)
{
	char dev[64], key[96], path[4096], ft[16];
	uint64_t ino;
	bool added = false;
	long i;

	if (!jstrb(r, "dev", dev, sizeof(dev)) || !jint(r, "ino", &ino))
		return OS_NONE;
	snprintf(key, sizeof(key), "%s:%" PRIu64, dev, ino);
	i = an_ids_find(&o->files, key);
	if (i < 0) {
		if (o->files.n >= OS_FILES_MAX) {
			o->files_over++;
			return OS_NONE;
		}
		i = an_ids_put(&o->files, key, &added);
		if (i < 0 || (size_t)i >= o->fcap) {
			size_t nc = o->fcap ? o->fcap * 2 : 256;
			char **np, **nf;

			if (i < 0 || !(np = realloc(o->file_path, nc * sizeof(*np)))) {
				o->nomem = true;
				return OS_NONE;
			}
			o->file_path = np;
			if (!(nf = realloc(o->file_ftype, nc * sizeof(*nf)))) {
				o->nomem = true;
				return OS_NONE;
			}
			o->file_ftype = nf;
			memset(o->file_path + o->fcap, 0, (nc - o->fcap) * sizeof(*np));
			memset(o->file_ftype + o->fcap, 0, (nc - o->fcap) * sizeof(*nf));
			o->fcap = nc;
		}
	}
	if (!o->file_path[i] && jstrb(r, "path", path, sizeof(path)))
		o->file_path[i] = strdup(path);
	if (!o->file_ftype[i] && jstrb(r, "ftype", ft, sizeof(ft)))
		o->file_ftype[i] = strdup(ft);
	return (uint32_t)i;
}

/* The incarnation of a record: its index + 1, or 0 (counted) when the
 * cohort has no such id. */
static uint32_t inc_of(struct os *o, const struct pmu_jrec *r)
{
	char id[256];
	long i;

	if (!jstrb(r, "inc", id, sizeof(id)) || (i = an_ids_find(&o->incs, id)) < 0 || (size_t)i >= o->ninc) {
		o->unknown_inc++;
		return 0;
	}
	return (uint32_t)(i + 1);
}

/* ---- the cohort (programs named as the profile and the programs section do) ---- */

static const char *base_of(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static int grow_incs(struct os *o, size_t n)
{
	if (n <= o->icap)
		return 0;
	size_t nc = o->icap ? o->icap : 64;

	while (nc < n)
		nc *= 2;
#define GROW(f) do { void *np = realloc(o->f, nc * sizeof(*o->f)); if (!np) return -1; o->f = np; \
		memset(o->f + o->icap, 0, (nc - o->icap) * sizeof(*o->f)); } while (0)
	GROW(inc_parent);
	GROW(inc_prog);
	GROW(inc_pid);
	GROW(inc_comm);
	GROW(inc_own);
	GROW(inc_v);
	GROW(inc_threads);
#undef GROW
	for (size_t i = o->icap; i < nc; i++)
		o->inc_parent[i] = -1;
	o->icap = nc;
	return 0;
}

static int cohort_inc(void *ctx, json_t *in, size_t seq)
{
	struct os *o = ctx;
	const char *id = json_string_value(json_object_get(in, "id"));
	const char *par = json_string_value(json_object_get(in, "parent"));
	const char *comm = json_string_value(json_object_get(in, "comm"));
	json_t *ex = json_object_get(in, "exec"), *last = json_array_get(ex, json_array_size(ex) - 1);
	const char *path = json_string_value(json_object_get(last, "path"));
	const char *a0 = json_string_value(json_array_get(json_object_get(last, "argv"), 0));
	long i, pi = -1;

	(void)seq;
	if (!id)
		return 0;
	i = an_ids_put(&o->incs, id, NULL);
	if (i >= 0 && par)
		pi = an_ids_put(&o->incs, par, NULL);
	if (i < 0 || (par && pi < 0) || grow_incs(o, o->incs.n))
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	if (o->incs.n > o->ninc)
		o->ninc = o->incs.n;
	if (o->inc_comm[i])
		return 0;
	o->inc_parent[i] = (int32_t)pi;
	o->inc_pid[i] = json_integer_value(json_object_get(in, "pid"));
	o->inc_comm[i] = strdup(comm ? comm : "?");
	if (path)
		o->inc_own[i] = strdup(a0 && *a0 && strcmp(base_of(a0), base_of(path)) ? base_of(a0) : base_of(path));
	if (!o->inc_comm[i] || (path && !o->inc_own[i]))
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	return 0;
}

static int cohort_load(struct os *o)
{
	int err = pmu_bundle_cohort_each(o->b, o->rep, cohort_inc, o, NULL);

	if (err)
		return err;
	for (size_t i = 0; i < o->ninc; i++) {
		long j = (long)i;
		const char *name = NULL;

		for (int k = 0; j >= 0 && k < 64; k++) {
			if (o->inc_own[j]) {
				name = o->inc_own[j];
				break;
			}
			j = o->inc_parent[j];
		}
		if (!name)
			name = o->inc_comm[i] ? o->inc_comm[i] : "?";
		long g = an_ids_put(&o->progs, name, NULL);

		if (g < 0)
			return pmu_error(PMU_ERR_NOMEM, "out of memory");
		o->inc_prog[i] = (int32_t)g;
	}
	return 0;
}

/* ---- a stream, line by line --------------------------------------------------- */

struct rd {
	FILE *f;
	char *line;
	size_t cap;
	struct pmu_jrec r;
	bool have;             /* r holds the next record */
	uint64_t t;            /* its t_ns (0 without) */
	uint64_t malformed;
};

/* 1 open, 0 absent, or a negative pmu_err. */
static int rd_open(struct rd *d, const struct pmu_bundle *b, int rep, const char *coll, const char *file)
{
	char path[300];
	int fd;

	memset(d, 0, sizeof(*d));
	pmu_jrec_init(&d->r);
	if (rep <= 1)
		snprintf(path, sizeof(path), "data/collectors/%s/%s", coll, file);
	else
		snprintf(path, sizeof(path), "data/repeats/%d/collectors/%s/%s", rep, coll, file);
	fd = openat(b->rootfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? 0 : pmu_error(PMU_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
	d->f = fdopen(fd, "r");
	if (!d->f) {
		close(fd);
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	}
	return 1;
}

static void rd_close(struct rd *d)
{
	if (d->f)
		fclose(d->f);
	free(d->line);
	pmu_jrec_release(&d->r);
	memset(d, 0, sizeof(*d));
}

/* The next record into d->r: true, or false at the end. */
static bool rd_next(struct rd *d)
{
	ssize_t n;
	const char *why;
	size_t at;

	d->have = false;
	while (d->f && (n = getline(&d->line, &d->cap, d->f)) >= 0) {
		if (n && d->line[n - 1] == '\n')
			n--;
		if (!n)
			continue;
		if (pmu_jrec_parse(&d->r, d->line, (size_t)n, &why, &at)) {
			d->malformed++;
			continue;
		}
		if (!jint(&d->r, "t_ns", &d->t))
			d->t = 0;
		d->have = true;
		return true;
	}
	return false;
}

/* ---- histograms (section 23.4) --------------------------------------------------- */

static void bucket_range(int b, double *lo, double *hi)
{
	if (b < 16) {
		*lo = b;
		*hi = b + 1;
		return;
	}
	int e = 4 + (b - 16) / 8, s = (b - 16) % 8;

	*lo = (double)(1ull << e) + (double)s * (double)(1ull << (e - 3));
	*hi = *lo + (double)(1ull << (e - 3));
}

/* "B:N B:N ..." added to h; false when it is not that. */
static bool hist_add(uint64_t *h, const char *s, size_t n)
{
	const char *p = s, *end = s + n;

	while (p < end) {
		uint64_t b = 0, c = 0;
		size_t k;

		while (p < end && *p == ' ')
			p++;
		if (p == end)
			break;
		k = pmu_digits(p, end, &b);
		if (!k || k > 4 || p + k >= end || p[k] != ':')
			return false;
		p += k + 1;
		k = pmu_digits(p, end, &c);
		if (!k || k > 16 || b >= OS_HB)
			return false;
		p += k;
		h[b] += c;
	}
	return true;
}

/* The q-quantile (0..1) of h: the middle of the bucket it falls in,
 * within [mn, mx]; an estimate within the bucket's width (12.5%). */
static uint64_t hist_q(const uint64_t *h, double q, uint64_t mn, uint64_t mx)
{
	uint64_t tot = 0, acc = 0, want;

	for (int b = 0; b < OS_HB; b++)
		tot += h[b];
	if (!tot)
		return 0;
	want = (uint64_t)(q * (double)tot + 0.999999);
	if (want < 1)
		want = 1;
	for (int b = 0; b < OS_HB; b++) {
		acc += h[b];
		if (acc >= want) {
			double lo, hi, v;

			bucket_range(b, &lo, &hi);
			v = b < 16 ? lo : (lo + hi) / 2;
			if (v < (double)mn)
				v = (double)mn;
			if (v > (double)mx)
				v = (double)mx;
			return (uint64_t)v;
		}
	}
	return mx;
}

static void pct_json(json_t *o, const uint64_t *h, uint64_t mn, uint64_t mx)
{
	json_object_set_new(o, "p50_ns", json_integer((json_int_t)hist_q(h, 0.50, mn, mx)));
	json_object_set_new(o, "p90_ns", json_integer((json_int_t)hist_q(h, 0.90, mn, mx)));
	json_object_set_new(o, "p99_ns", json_integer((json_int_t)hist_q(h, 0.99, mn, mx)));
	json_object_set_new(o, "percentiles_estimate", json_true());
}

/* ---- pass 1: sched and syscalls, merged ------------------------------------------- */

static const char *const state_names[] = { "S", "D", "other", "R" };

static int state_of(const char *s)
{
	return !strcmp(s, "S") ? 0 : !strcmp(s, "D") ? 1 : !strcmp(s, "R") ? 3 : 2;
}

/* One off interval's wait and runqueue time given to (inc, syscall, file). */
static void attribute(struct os *o, uint32_t inc, const struct pend *p, uint32_t name, uint32_t file)
{
	struct agg *w, *iw;

	if (p->state < 3 && p->wait) {
		w = km_get(&o->waits, (uint32_t)o->inc_prog[inc - 1] + 1, name, file, &o->nomem);
		iw = km_get(&o->incw, inc, name, file, &o->nomem);
		if (w) {
			w->wait[p->state] += p->wait;
			w->runq += p->runq;
			w->offs++;
		}
		if (iw) {
			iw->wait[p->state] += p->wait;
			iw->offs++;
		}
	}
}

static struct tid_pend *pend_of(struct os *o, int64_t tid, bool make)
{
	uint32_t lo = (uint32_t)((uint64_t)tid & 0xffffffffu), hi = (uint32_t)((uint64_t)tid >> 32);
	struct agg *e = make ? km_get(&o->tids, lo, hi, 1, &o->nomem) : km_find(&o->tids, lo, hi, 1);

	if (!e)
		return NULL;
	if (!e->count) {
		if (o->npend + 1 > o->pcap) {
			size_t nc = o->pcap ? o->pcap * 2 : 64;
			struct tid_pend *np = realloc(o->pend, nc * sizeof(*np));

			if (!np) {
				o->nomem = true;
				return NULL;
			}
			o->pend = np;
			o->pcap = nc;
		}
		memset(&o->pend[o->npend], 0, sizeof(o->pend[0]));
		e->count = ++o->npend;
	}
	return &o->pend[e->count - 1];
}

static void pend_pop(struct tid_pend *t)
{
	memmove(&t->p[0], &t->p[1], (size_t)(t->n - 1) * sizeof(t->p[0]));
	t->n--;
}

static void on_off(struct os *o, const struct pmu_jrec *r)
{
	uint32_t inc = inc_of(o, r);
	char st[16] = "other", sc[64] = "", chain[8192];
	uint64_t off = 0, wait = 0, runq = 0;
	int64_t tid = -1;
	struct pend p;
	struct agg *e;
	struct tid_pend *t;

	if (!inc)
		return;
	jstrb(r, "state", st, sizeof(st));
	jint(r, "off_ns", &off);
	jint(r, "wait_ns", &wait);
	jint(r, "runq_ns", &runq);
	jsint(r, "tid", &tid);
	jstrb(r, "syscall", sc, sizeof(sc));
	memset(&p, 0, sizeof(p));
	p.state = state_of(st);
	jint(r, "t_ns", &p.end);
	p.start = p.end >= off ? p.end - off : 0;
	p.wait = p.state == 3 ? 0 : wait ? wait : (off >= runq ? off - runq : 0);
	p.runq = runq;
	p.name = sc[0] ? name_id(o, sc) : OS_NONE;
	o->sc_offs++;
	o->off_total += off;
	o->off_wait += p.wait;
	o->off_runq += runq;
	if ((e = km_get(&o->states, (uint32_t)p.state, 0, 0, &o->nomem))) {
		e->offs++;
		e->total += off;
		e->wait[0] += p.wait;
		e->runq += runq;
	}
	if ((e = km_get(&o->offsc, p.name, 0, 0, &o->nomem))) {
		e->offs++;
		e->total += off;
		e->wait[0] += p.wait;
		e->runq += runq;
		if (off > e->max)
			e->max = off;
	}
	if (jstrb(r, "chain", chain, sizeof(chain)) && chain[0] && p.wait) {
		long c = an_ids_find(&o->chainstr, chain);

		if (c < 0 && o->chainstr.n < OS_CHAINS_MAX)
			c = an_ids_put(&o->chainstr, chain, NULL);
		if (c < 0) {
			o->chains_over += p.wait;
		} else if ((e = km_get(&o->chains, (uint32_t)o->inc_prog[inc - 1] + 1, (uint32_t)c + 1, p.name,
				       &o->nomem))) {
			if (!e->offs) {
				e->t_first = p.start;
				e->inc_first = inc;
			}
			e->wait[0] += p.wait;
			e->offs++;
		}
	} else if (p.wait && (e = km_get(&o->chains, (uint32_t)o->inc_prog[inc - 1] + 1, 0, p.name, &o->nomem))) {
		/* no chain: the program and the syscall alone */
		e->wait[0] += p.wait;
		e->offs++;
	}
	if (p.state == 3 || tid < 0)
		return;
	t = pend_of(o, tid, true);
	if (!t) {
		attribute(o, inc, &p, p.name, OS_NONE);
		o->unjoined++;
		return;
	}
	t->inc = inc;
	if (t->n == OS_PEND) {
		/* held too long without a raw call of the thread: the oldest keeps
		 * the syscall the sched collector saw */
		attribute(o, inc, &t->p[0], t->p[0].name, OS_NONE);
		o->unjoined++;
		o->pend_over++;
		pend_pop(t);
	}
	t->p[t->n++] = p;
}

static void on_call(struct os *o, const struct pmu_jrec *r)
{
	uint32_t inc = inc_of(o, r), file, name;
	uint64_t t = 0, dur = 0;
	int64_t tid = -1;
	char sc[64];
	struct tid_pend *tp;

	o->sys_seen_calls++;
	file = file_of(o, r); /* also learns the path of an open */
	if (!inc || !jint(r, "t_ns", &t) || !jint(r, "dur_ns", &dur) || !jsint(r, "tid", &tid) ||
	    !jstrb(r, "syscall", sc, sizeof(sc)))
		return;
	name = name_id(o, sc);
	if (!(tp = pend_of(o, tid, false)))
		return;
	while (tp->n && tp->p[0].end <= t) {
		if (tp->p[0].start >= t - dur) {
			attribute(o, tp->inc, &tp->p[0], name, file);
			o->joined++;
		} else {
			attribute(o, tp->inc, &tp->p[0], tp->p[0].name, OS_NONE);
			o->unjoined++;
		}
		pend_pop(tp);
	}
}

static void flush_pend(struct os *o)
{
	for (size_t i = 0; i < o->npend; i++)
		for (int k = 0; k < o->pend[i].n; k++) {
			attribute(o, o->pend[i].inc, &o->pend[i].p[k], o->pend[i].p[k].name, OS_NONE);
			o->unjoined++;
		}
	o->npend = 0;
}

static void on_thread(struct os *o, const struct pmu_jrec *r)
{
	uint32_t inc = inc_of(o, r);
	struct thr th;
	uint64_t t = 0, st = 0;

	if (!inc)
		return;
	memset(&th, 0, sizeof(th));
	th.inc = inc;
	jsint(r, "tid", &th.tid);
	jsint(r, "pid", &th.pid);
	jint(r, "t_ns", &t);
	jint(r, "start_ns", &st);
	th.v[0] = t > st ? t - st : 0;
	jint(r, "on_cpu_ns", &th.v[1]);
	jint(r, "runq_ns", &th.v[2]);
	jint(r, "sleep_ns", &th.v[3]);
	jint(r, "blocked_ns", &th.v[4]);
	jint(r, "other_ns", &th.v[5]);
	jint(r, "unobserved_ns", &th.v[6]);
	o->nthreads++;
	for (int k = 0; k < 7; k++)
		o->inc_v[inc - 1][k] += th.v[k];
	o->inc_threads[inc - 1]++;
	if (o->ntop < OS_TOP_THREADS) {
		o->top[o->ntop++] = th;
	} else {
		size_t lo = 0;

		for (size_t i = 1; i < o->ntop; i++)
			if (o->top[i].v[0] < o->top[lo].v[0])
				lo = i;
		if (th.v[0] > o->top[lo].v[0])
			o->top[lo] = th;
	}
}

static void on_sched(struct os *o, const struct pmu_jrec *r)
{
	char ch[16];

	if (is_type(r, "off"))
		on_off(o, r);
	else if (is_type(r, "thread"))
		on_thread(o, r);
	else if (is_type(r, "config")) {
		jint(r, "min_off_ns", &o->min_off_ns);
		if (jstrb(r, "chains", ch, sizeof(ch))) {
			free(o->chains_mode);
			o->chains_mode = strdup(ch);
			o->have_chains = strcmp(ch, "none") != 0;
		}
	} else if (is_type(r, "loss")) {
		uint64_t v = 0;

		jint(r, "lost", &v);
		o->sc_seen_lost += v;
	} else if (is_type(r, "summary")) {
		o->sc_summary = true;
		jint(r, "offs", &o->sc_offs);
		jint(r, "threads", &o->sc_threads);
		jint(r, "short_offs", &o->sc_short);
		jint(r, "unattributed", &o->sc_unatt);
		jint(r, "lost", &o->sc_lost);
		jint(r, "malformed", &o->sc_malformed);
	}
}

static void on_sys(struct os *o, const struct pmu_jrec *r)
{
	if (is_type(r, "call"))
		on_call(o, r);
	else if (is_type(r, "fd"))
		file_of(o, r);
	else if (is_type(r, "config")) {
		const struct pmu_jfield *f = pmu_jrec_get(r, "raw_calls");

		if (f && f->type == PMU_JV_STR) {
			free(o->raw_calls);
			o->raw_calls = dupn(f->s, f->slen);
		}
	} else if (is_type(r, "loss")) {
		uint64_t v = 0;

		jint(r, "lost", &v);
		o->sys_seen_lost += v;
	} else if (is_type(r, "summary")) {
		o->sys_summary = true;
		jint(r, "calls", &o->sys_calls);
		jint(r, "fd_records", &o->sys_fds);
		jint(r, "truncated", &o->sys_trunc);
		jint(r, "lost", &o->sys_lost);
		jint(r, "unattributed", &o->sys_unatt);
		jint(r, "malformed", &o->sys_malformed);
	}
}

static int pass_events(struct os *o)
{
	struct rd s, y;
	int es = rd_open(&s, o->b, o->rep, "sched", "sched.jsonl");
	int ey = es < 0 ? 0 : rd_open(&y, o->b, o->rep, "syscalls", "syscalls.jsonl");

	if (es < 0 || ey < 0) {
		if (es > 0)
			rd_close(&s);
		return es < 0 ? es : ey;
	}
	o->have_sched = es > 0;
	o->have_sys = ey > 0;
	if (es > 0)
		rd_next(&s);
	if (ey > 0)
		rd_next(&y);
	/* by t_ns; an off interval before a call that returns at the same ns */
	while ((es > 0 && s.have) || (ey > 0 && y.have)) {
		if (es > 0 && s.have && (!(ey > 0 && y.have) || s.t <= y.t)) {
			on_sched(o, &s.r);
			rd_next(&s);
		} else {
			on_sys(o, &y.r);
			rd_next(&y);
		}
	}
	flush_pend(o);
	if (es > 0) {
		o->malformed += s.malformed;
		rd_close(&s);
	}
	if (ey > 0) {
		o->malformed += y.malformed;
		rd_close(&y);
	}
	return 0;
}

/* ---- passes 2 and 3: syscall-stats ------------------------------------------------ */

/* an unentered record: calls of this syscall seen only leaving the kernel */
static void on_unentered(struct os *o, const struct pmu_jrec *r)
{
	char sc[32];
	uint64_t n = 0;
	size_t i;

	if (!jstrb(r, "syscall", sc, sizeof(sc)) || !jint(r, "count", &n))
		return;
	o->unent += n;
	for (i = 0; i < o->nunent && strcmp(o->unent_by[i].name, sc); i++)
		;
	if (i == o->nunent) {
		if (i == OS_UNENTERED) {
			o->unent_other += n;
			return;
		}
		snprintf(o->unent_by[i].name, sizeof(o->unent_by[i].name), "%s", sc);
		o->unent_by[i].n = 0;
		o->nunent++;
	}
	o->unent_by[i].n += n;
}

static void on_stat(struct os *o, const struct pmu_jrec *r, bool second)
{
	uint32_t inc = inc_of(o, r), file = file_of(o, r), name, en = OS_NONE;
	uint64_t count = 0, total = 0, mn = 0, mx = 0, bytes = 0, er = 0;
	bool has_bytes, has_err;
	char sc[64], ename[64];
	const struct pmu_jfield *h = pmu_jrec_get(r, "hist");
	struct agg *e;

	if (!inc || !jstrb(r, "syscall", sc, sizeof(sc)) || !jint(r, "count", &count))
		return;
	name = name_id(o, sc);
	jint(r, "total_ns", &total);
	jint(r, "min_ns", &mn);
	jint(r, "max_ns", &mx);
	has_bytes = jint(r, "bytes", &bytes);
	has_err = jint(r, "errno", &er);
	if (has_err) {
		if (!jstrb(r, "error", ename, sizeof(ename)))
			snprintf(ename, sizeof(ename), "errno %" PRIu64, er);
		en = name_id(o, ename);
	}
	if (second) {
		e = km_find(&o->rows, inc, name, file);
		if (e && e->hist && h && h->type == PMU_JV_STR)
			hist_add(e->hist, h->s, h->slen);
		if (o->dom && o->dom->a == (uint32_t)o->inc_prog[inc - 1] + 1 && o->dom->b == name && o->dom->c == file) {
			o->dom_count += count;
			o->dom_total += total;
			if (mx > o->dom_max)
				o->dom_max = mx;
			if (h && h->type == PMU_JV_STR)
				hist_add(o->dom_hist, h->s, h->slen);
		}
		return;
	}
	o->st_seen++;
	for (int k = 0; k < 2; k++) {
		e = km_get(k ? &o->bysc : &o->rows, k ? name : inc, k ? 0 : name, k ? 0 : file, &o->nomem);
		if (!e)
			continue;
		e->count += count;
		e->total += total;
		if (mn < e->min)
			e->min = mn;
		if (mx > e->max)
			e->max = mx;
		if (has_bytes) {
			e->bytes += bytes;
			e->has_bytes = true;
		}
		if (has_err) {
			int j;

			e->errors += count;
			for (j = 0; j < 4 && e->err_count[j] && e->err_name[j] != en; j++)
				;
			if (j < 4) {
				e->err_name[j] = en;
				e->err_count[j] += count;
			} else {
				e->err_other += count;
			}
		}
		if (k && !e->hist && !(e->hist = calloc(OS_HB, sizeof(uint64_t))))
			o->nomem = true;
		if (k && e->hist && h && h->type == PMU_JV_STR && !hist_add(e->hist, h->s, h->slen))
			o->malformed++;
	}
	if (has_err && (e = km_get(&o->errs, name, en, 0, &o->nomem)))
		e->count += count;
}

static int pass_stats(struct os *o, bool second)
{
	struct rd d;
	int e = rd_open(&d, o->b, o->rep, "syscalls", "syscall-stats.jsonl");

	if (e <= 0)
		return e;
	o->have_stats = true;
	while (rd_next(&d)) {
		if (is_type(&d.r, "stat"))
			on_stat(o, &d.r, second);
		else if (!second && is_type(&d.r, "unentered"))
			on_unentered(o, &d.r);
		else if (!second && is_type(&d.r, "summary")) {
			o->st_summary = true;
			jint(&d.r, "stats", &o->st_stats);
			jint(&d.r, "calls", &o->st_calls);
			jint(&d.r, "lost", &o->st_lost);
			jint(&d.r, "unattributed", &o->st_unatt);
		}
	}
	if (!second)
		o->malformed += d.malformed;
	rd_close(&d);
	return 0;
}

/* ---- JSON ------------------------------------------------------------------------ */

static json_t *file_json(const struct os *o, uint32_t f)
{
	const char *key;

	if (f == OS_NONE)
		return json_null();
	key = an_ids_name(&o->files, f);
	const char *colon = strrchr(key, ':');
	json_t *j = json_pack("{s:s%,s:I}", "dev", key, (size_t)(colon ? colon - key : 0), "ino",
			      (json_int_t)strtoull(colon ? colon + 1 : "0", NULL, 10));

	if (o->file_ftype[f])
		json_object_set_new(j, "ftype", json_string(o->file_ftype[f]));
	json_object_set_new(j, "path", o->file_path[f] ? pmu_json_text(o->file_path[f]) : json_null());
	return j;
}

static json_t *errors_json(const struct os *o, const struct agg *e)
{
	json_t *j = json_object();

	for (int k = 0; k < 4 && e->err_count[k]; k++)
		json_object_set_new(j, name_of(o, e->err_name[k]), json_integer((json_int_t)e->err_count[k]));
	if (e->err_other)
		json_object_set_new(j, "other", json_integer((json_int_t)e->err_other));
	return j;
}

static uint64_t wsum(const struct agg *e)
{
	return e->wait[0] + e->wait[1] + e->wait[2];
}

static int by_total_desc(const void *a, const void *b)
{
	const struct agg *x = *(struct agg *const *)a, *y = *(struct agg *const *)b;

	return x->total < y->total ? 1 : x->total > y->total ? -1 : 0;
}

static int by_wait_desc(const void *a, const void *b)
{
	const struct agg *x = *(struct agg *const *)a, *y = *(struct agg *const *)b;

	return wsum(x) < wsum(y) ? 1 : wsum(x) > wsum(y) ? -1 : 0;
}

static int by_count_desc(const void *a, const void *b)
{
	const struct agg *x = *(struct agg *const *)a, *y = *(struct agg *const *)b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

/* The table's entries sorted by cmp, as pointers (the caller frees). */
static struct agg **sorted(const struct kmap *m, int (*cmp)(const void *, const void *))
{
	struct agg **v = malloc((m->n ? m->n : 1) * sizeof(*v));

	if (!v)
		return NULL;
	for (size_t i = 0; i < m->n; i++)
		v[i] = &m->v[i];
	qsort(v, m->n, sizeof(*v), cmp);
	return v;
}

static const char *prog_name(const struct os *o, uint32_t inc1)
{
	return an_ids_name(&o->progs, (size_t)o->inc_prog[inc1 - 1]);
}

static json_t *absent(json_t *fates, const char *coll, const char *what)
{
	json_t *f = NULL, *x;
	size_t i;
	char why[600];

	json_array_foreach(fates, i, x)
		if (!strcmp(json_string_value(json_object_get(x, "name")) ?: "", coll))
			f = x;
	if (!f) {
		snprintf(why, sizeof(why), "this recording has no %s collector (recorded before spec 1.7, or not in "
			 "mode full)", coll);
		return json_pack("{s:s,s:s,s:s}", "status", "not-recorded", "reason", why, "remedy",
				 "record with pmurec --mode full (pmu 1.7 or later)");
	}
	const char *st = json_string_value(json_object_get(f, "status")) ?: "?";

	if (!strcmp(st, "ok") || !strcmp(st, "no-events")) {
		snprintf(why, sizeof(why), "the %s collector ran but wrote no %s", coll, what);
		return json_pack("{s:s,s:s,s:s}", "status", "empty", "reason", why, "remedy", "");
	}
	if (!strcmp(st, "not-requested") && !*(json_string_value(json_object_get(f, "reason")) ?: "")) {
		snprintf(why, sizeof(why), "the %s collector was not requested", coll);
		return json_pack("{s:s,s:s,s:s}", "status", "not-requested", "reason", why, "remedy",
				 "record with pmurec --mode full");
	}
	return json_pack("{s:s,s:O,s:O}", "status", st, "reason", json_object_get(f, "reason") ?: json_string("?"),
			 "remedy", json_object_get(f, "remedy") ?: json_string(""));
}

static json_t *syscalls_json(struct os *o, json_t *fates)
{
	json_t *j, *rows = json_array(), *bys = json_array(), *errs = json_array();
	struct agg **v;

	if (!o->have_stats && !o->have_sys)
		return absent(fates, "syscalls", "syscalls stream");
	j = json_pack("{s:s}", "status", "ok");
	json_object_set_new(j, "raw", o->have_sys ? json_pack("{s:I,s:I,s:I,s:I,s:I,s:o}", "calls",
						      (json_int_t)(o->sys_summary ? o->sys_calls : o->sys_seen_calls),
						      "fd_records", (json_int_t)o->sys_fds, "truncated",
						      (json_int_t)o->sys_trunc, "lost",
						      (json_int_t)(o->sys_summary ? o->sys_lost : o->sys_seen_lost),
						      "unattributed", (json_int_t)o->sys_unatt, "raw_calls",
						      o->raw_calls ? pmu_json_text(o->raw_calls) : json_null())
						: json_null());
	json_object_set_new(j, "stats", o->have_stats ? json_pack("{s:I,s:I,s:I,s:I,s:I}", "stats",
						    (json_int_t)(o->st_summary ? o->st_stats : o->st_seen), "calls",
						    (json_int_t)o->st_calls, "lost", (json_int_t)o->st_lost,
						    "unattributed", (json_int_t)o->st_unatt, "unentered",
						    (json_int_t)o->unent)
						  : json_null());
	if (o->unent) {
		json_t *u = json_array();

		for (size_t i = 0; i < o->nunent; i++)
			json_array_append_new(u, json_pack("{s:s,s:I}", "syscall", o->unent_by[i].name, "calls",
							   (json_int_t)o->unent_by[i].n));
		if (o->unent_other)
			json_array_append_new(u, json_pack("{s:s,s:I}", "syscall", "(others)", "calls",
							   (json_int_t)o->unent_other));
		json_object_set_new(j, "unentered", u);
		json_object_set_new(j, "unentered_why",
				    json_string("calls seen only leaving the kernel, so without a duration: refused "
						"before entry (seccomp), or in flight when the collector attached"));
	}
	if (!o->have_stats)
		json_object_set_new(j, "rows_reason", json_string("the syscalls collector wrote no syscall-stats stream"));
	v = sorted(&o->rows, by_total_desc);
	for (size_t i = 0; v && i < o->rows.n && i < OS_ROWS_JSON; i++) {
		struct agg *e = v[i];
		json_t *r = json_pack("{s:s,s:I,s:s,s:s,s:o,s:I,s:I,s:I,s:I,s:I,s:I,s:o}", "inc",
				      an_ids_name(&o->incs, e->a - 1), "pid", (json_int_t)o->inc_pid[e->a - 1], "program",
				      prog_name(o, e->a), "syscall", name_of(o, e->b), "file", file_json(o, e->c),
				      "count", (json_int_t)e->count, "total_ns", (json_int_t)e->total, "min_ns",
				      (json_int_t)e->min, "max_ns", (json_int_t)e->max, "mean_ns",
				      (json_int_t)(e->count ? e->total / e->count : 0), "errors_total",
				      (json_int_t)e->errors, "errors", errors_json(o, e));

		if (e->has_bytes)
			json_object_set_new(r, "bytes", json_integer((json_int_t)e->bytes));
		if (e->hist)
			pct_json(r, e->hist, e->min, e->max);
		json_array_append_new(rows, r);
	}
	free(v);
	json_object_set_new(j, "rows", rows);
	json_object_set_new(j, "rows_total", json_integer((json_int_t)o->rows.n));
	json_object_set_new(j, "rows_over", json_integer((json_int_t)o->rows.over));
	v = sorted(&o->bysc, by_total_desc);
	for (size_t i = 0; v && i < o->bysc.n; i++) {
		struct agg *e = v[i];
		json_t *r = json_pack("{s:s,s:I,s:I,s:I,s:I,s:I}", "syscall", name_of(o, e->a), "count",
				      (json_int_t)e->count, "total_ns", (json_int_t)e->total, "min_ns",
				      (json_int_t)e->min, "max_ns", (json_int_t)e->max, "errors_total",
				      (json_int_t)e->errors);

		if (e->has_bytes)
			json_object_set_new(r, "bytes", json_integer((json_int_t)e->bytes));
		if (e->hist)
			pct_json(r, e->hist, e->min, e->max);
		json_array_append_new(bys, r);
	}
	free(v);
	json_object_set_new(j, "by_syscall", bys);
	v = sorted(&o->errs, by_count_desc);
	for (size_t i = 0; v && i < o->errs.n; i++)
		json_array_append_new(errs, json_pack("{s:s,s:s,s:I}", "syscall", name_of(o, v[i]->a), "error",
						      name_of(o, v[i]->b), "count", (json_int_t)v[i]->count));
	free(v);
	json_object_set_new(j, "errors", errs);
	json_object_set_new(j, "percentiles_note",
			    json_string("p50, p90 and p99 are estimates from the in-kernel histogram (log-linear "
					"buckets, section 23.4: within 12.5%); count, total, min and max are exact"));
	return j;
}

static json_t *offcpu_json(struct os *o, json_t *fates)
{
	json_t *j, *bs = json_array(), *sc = json_array(), *ch = json_array();
	struct agg **v;

	if (!o->have_sched)
		return absent(fates, "sched", "sched stream");
	j = json_pack("{s:s,s:I,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "status", "ok", "min_off_ns",
		      (json_int_t)o->min_off_ns, "chains", o->chains_mode ? o->chains_mode : "none", "intervals",
		      (json_int_t)o->sc_offs, "off_ns", (json_int_t)o->off_total, "wait_ns", (json_int_t)o->off_wait,
		      "runq_ns", (json_int_t)o->off_runq, "short_offs", (json_int_t)o->sc_short, "lost",
		      (json_int_t)(o->sc_summary ? o->sc_lost : o->sc_seen_lost), "unattributed",
		      (json_int_t)o->sc_unatt);
	for (int s = 0; s < 4; s++) {
		struct agg *e = km_find(&o->states, (uint32_t)s, 0, 0);

		if (e)
			json_array_append_new(bs, json_pack("{s:s,s:I,s:I,s:I,s:I}", "state", state_names[s],
							    "intervals", (json_int_t)e->offs, "off_ns",
							    (json_int_t)e->total, "wait_ns", (json_int_t)e->wait[0],
							    "runq_ns", (json_int_t)e->runq));
	}
	json_object_set_new(j, "by_state", bs);
	v = sorted(&o->offsc, by_wait_desc);
	for (size_t i = 0; v && i < o->offsc.n && i < OS_TOP; i++)
		json_array_append_new(sc, json_pack("{s:o,s:I,s:I,s:I,s:I,s:I}", "syscall",
						    v[i]->a == OS_NONE ? json_null() : json_string(name_of(o, v[i]->a)),
						    "intervals", (json_int_t)v[i]->offs, "off_ns", (json_int_t)v[i]->total,
						    "wait_ns", (json_int_t)v[i]->wait[0], "runq_ns", (json_int_t)v[i]->runq,
						    "max_off_ns", (json_int_t)v[i]->max));
	free(v);
	json_object_set_new(j, "by_syscall", sc);
	v = sorted(&o->chains, by_wait_desc);
	for (size_t i = 0, k = 0; v && i < o->chains.n && k < 10; i++)
		if (v[i]->b) {
			json_array_append_new(ch, json_pack("{s:s,s:s,s:o,s:I,s:I,s:o}", "program",
							    an_ids_name(&o->progs, v[i]->a - 1), "chain",
							    an_ids_name(&o->chainstr, v[i]->b - 1), "syscall",
							    v[i]->c == OS_NONE ? json_null() : json_string(name_of(o, v[i]->c)),
							    "wait_ns", (json_int_t)v[i]->wait[0], "intervals",
							    (json_int_t)v[i]->offs, "frames",
							    v[i]->names ? pmu_json_text(v[i]->names) : json_null()));
			k++;
		}
	free(v);
	json_object_set_new(j, "chains", o->have_chains ? ch : (json_decref(ch), json_null()));
	if (o->have_chains && o->sym_why[0])
		json_object_set_new(j, "chains_symbolized", pmu_json_text(o->sym_why));
	if (!o->have_chains)
		json_object_set_new(j, "chains_reason",
				    json_string("the sched collector recorded no call chains (they need sampling with "
						"--call-graph fp)"));
	return j;
}

static const char *const part_keys[7] = { "thread_ns", "on_cpu_ns", "runq_ns", "sleep_ns", "blocked_ns",
					  "other_ns", "unobserved_ns" };

static json_t *parts_json(const uint64_t *v)
{
	json_t *j = json_object();

	for (int k = 0; k < 7; k++)
		json_object_set_new(j, part_keys[k], json_integer((json_int_t)v[k]));
	return j;
}

/* The waits of one incarnation (inc1 != 0) or the whole cohort (0),
 * largest first, at most n. */
static json_t *waits_json(const struct os *o, const struct kmap *m, uint32_t inc1, size_t n, uint64_t base)
{
	json_t *a = json_array();
	struct agg **v = sorted(m, by_wait_desc);

	for (size_t i = 0, k = 0; v && i < m->n && k < n; i++) {
		struct agg *e = v[i];

		if (inc1 && e->a != inc1)
			continue;
		json_t *r = json_pack("{s:o,s:o,s:I,s:I,s:I,s:I,s:I}", "syscall",
				      e->b == OS_NONE ? json_null() : json_string(name_of(o, e->b)), "file",
				      file_json(o, e->c), "wait_ns", (json_int_t)wsum(e), "sleep_ns",
				      (json_int_t)e->wait[0], "blocked_ns", (json_int_t)e->wait[1], "other_ns",
				      (json_int_t)e->wait[2], "intervals", (json_int_t)e->offs);

		if (!inc1)
			json_object_set_new(r, "program", json_string(an_ids_name(&o->progs, e->a - 1)));
		if (base)
			json_object_set_new(r, "percent", json_real(100.0 * (double)wsum(e) / (double)base));
		json_array_append_new(a, r);
		k++;
	}
	free(v);
	return a;
}

static json_t *decomposition_json(struct os *o)
{
	uint64_t c[7] = { 0 }, waited = 0, offwait;
	json_t *j, *incs = json_array(), *thr = json_array();
	size_t *ord;

	if (!o->have_sched)
		return json_pack("{s:s,s:s}", "status", "unavailable", "reason",
				 "no sched stream: the thread records give the decomposition");
	for (size_t i = 0; i < o->ninc; i++)
		for (int k = 0; k < 7; k++)
			c[k] += o->inc_v[i][k];
	for (size_t i = 0; i < o->waits.n; i++)
		waited += wsum(&o->waits.v[i]);
	offwait = c[3] + c[4] + c[5];
	j = json_pack("{s:s,s:o,s:I,s:I}", "status", "ok", "cohort", parts_json(c), "threads",
		      (json_int_t)o->nthreads, "wait_in_intervals_ns", (json_int_t)waited);
	/* the waits of the cohort by program x syscall x file */
	json_object_set_new(json_object_get(j, "cohort"), "waits", waits_json(o, &o->waits, 0, OS_TOP, c[0]));
	json_object_set_new(j, "wait_unattributed_ns", json_integer((json_int_t)(offwait > waited ? offwait - waited : 0)));
	json_object_set_new(j, "wait_unattributed_why",
			    json_string("waits in off-CPU intervals shorter than the sched collector's min_off_ns "
					"(in the thread totals only), and from a thread's start to its first switch "
					"(unobserved); a smaller min_off_ns (0: every interval) would attribute them"));
	json_object_set_new(j, "joined_intervals", json_integer((json_int_t)o->joined));
	json_object_set_new(j, "unjoined_intervals", json_integer((json_int_t)o->unjoined));
	json_object_set_new(j, "join_note",
			    json_string("an off-CPU interval inside a raw call of the same thread is given that call's "
					"syscall and file; any other keeps the syscall the sched collector saw in "
					"progress, with no file (only the I/O family has raw calls)"));
	/* incarnations by thread time, at most OS_TOP */
	ord = malloc((o->ninc ? o->ninc : 1) * sizeof(*ord));
	for (size_t i = 0; ord && i < o->ninc; i++)
		ord[i] = i;
	for (size_t i = 0; ord && i < o->ninc && i < OS_TOP; i++) {
		size_t best = i;

		for (size_t k = i + 1; k < o->ninc; k++)
			if (o->inc_v[ord[k]][0] > o->inc_v[ord[best]][0])
				best = k;
		size_t t = ord[i];

		ord[i] = ord[best];
		ord[best] = t;
		if (!o->inc_threads[ord[i]])
			break;
		json_t *x = parts_json(o->inc_v[ord[i]]);

		json_object_set_new(x, "inc", json_string(an_ids_name(&o->incs, ord[i])));
		json_object_set_new(x, "pid", json_integer(o->inc_pid[ord[i]]));
		json_object_set_new(x, "program", json_string(prog_name(o, (uint32_t)ord[i] + 1)));
		json_object_set_new(x, "threads", json_integer(o->inc_threads[ord[i]]));
		json_object_set_new(x, "waits", waits_json(o, &o->incw, (uint32_t)ord[i] + 1, 5, o->inc_v[ord[i]][0]));
		json_array_append_new(incs, x);
	}
	free(ord);
	json_object_set_new(j, "incarnations", incs);
	for (size_t i = 0; i < o->ntop; i++)
		for (size_t k = i + 1; k < o->ntop; k++)
			if (o->top[k].v[0] > o->top[i].v[0]) {
				struct thr t = o->top[i];

				o->top[i] = o->top[k];
				o->top[k] = t;
			}
	for (size_t i = 0; i < o->ntop; i++) {
		json_t *x = parts_json(o->top[i].v);

		json_object_set_new(x, "inc", json_string(an_ids_name(&o->incs, o->top[i].inc - 1)));
		json_object_set_new(x, "pid", json_integer(o->top[i].pid));
		json_object_set_new(x, "tid", json_integer(o->top[i].tid));
		json_array_append_new(thr, x);
	}
	json_object_set_new(j, "thread_list", thr);
	json_object_set_new(j, "note", json_string("per thread: thread_ns (first seen to exit or stop) = on_cpu + "
						   "runq + sleep + blocked + other + unobserved, exact; incarnations "
						   "and cohort sum their threads"));
	return j;
}

static json_t *blocked_json(struct os *o)
{
	struct agg *d = o->dom;
	json_t *j;

	if (!d)
		return json_null();
	j = json_pack("{s:s,s:i,s:o,s:o,s:I,s:I,s:I,s:I}", "program", an_ids_name(&o->progs, d->a - 1), "processes",
		      (int)o->dom_procs, "syscall", d->b == OS_NONE ? json_null() : json_string(name_of(o, d->b)),
		      "file", file_json(o, d->c), "wait_ns", (json_int_t)wsum(d), "sleep_ns", (json_int_t)d->wait[0],
		      "blocked_ns", (json_int_t)d->wait[1], "intervals", (json_int_t)d->offs);
	json_object_set_new(j, "runq_ns", json_integer((json_int_t)d->runq));
	if (o->dom_count) {
		json_object_set_new(j, "calls", json_integer((json_int_t)o->dom_count));
		json_object_set_new(j, "total_ns", json_integer((json_int_t)o->dom_total));
		json_object_set_new(j, "max_ns", json_integer((json_int_t)o->dom_max));
		pct_json(j, o->dom_hist, 0, o->dom_max);
	}
	return j;
}

static int write_folded(struct os *o, const char *path)
{
	struct an_out out;
	FILE *f = an_out_open(&out, path);

	if (!f) {
		fprintf(stderr, "pmuanalyze: cannot write '%s': %s\n", path, strerror(errno));
		an_out_close(&out, false);
		return -1;
	}
	for (size_t i = 0; i < o->chains.n; i++) {
		struct agg *e = &o->chains.v[i];
		const char *ch = e->b ? an_ids_name(&o->chainstr, e->b - 1) : "";
		const char *fr[256];
		size_t n = 0;
		char *cp = strdup(ch), *sp = NULL;

		if (!cp)
			continue;
		for (char *t = strtok_r(cp, " ", &sp); t && n < 256; t = strtok_r(NULL, " ", &sp))
			fr[n++] = t;
		fputs(an_ids_name(&o->progs, e->a - 1), f);
		if (e->names && e->names[0])
			fprintf(f, ";%s", e->names);
		else
			while (n)
				fprintf(f, ";%s", fr[--n]);  /* outermost first */
		fprintf(f, ";[%s] %" PRIu64 "\n", e->c == OS_NONE ? "no syscall" : name_of(o, e->c), e->wait[0]);
		free(cp);
	}
	return an_out_close(&out, !ferror(f));
}

/*
 * Each chain named from the bundle (symbolize.h: its maps and retained
 * files, by build-id) at its first interval's incarnation and time; a frame
 * that cannot be named keeps its address.  Without a maps stream every
 * chain stays addresses (chains_symbolized says why).
 */
static void symbolize_chains(struct os *o, char *why, size_t wn)
{
	struct pmu_sym *sym = NULL;

	if (pmu_sym_new(&sym, o->b, o->rep)) {
		snprintf(why, wn, "not symbolized: %s", pmu_error_detail());
		return;
	}
	for (size_t i = 0; i < o->chains.n; i++) {
		struct agg *e = &o->chains.v[i];
		const char *ch = e->b ? an_ids_name(&o->chainstr, e->b - 1) : NULL;
		const char *inc;
		char *cp, *sp = NULL, *t;
		uint64_t pcs[128];
		size_t n = 0, len = 0, cap = 256;
		char *out;

		if (!ch || !e->inc_first)
			continue;
		inc = an_ids_name(&o->incs, e->inc_first - 1);
		if (!(cp = strdup(ch)))
			continue;
		for (t = strtok_r(cp, " ", &sp); t && n < 128; t = strtok_r(NULL, " ", &sp))
			pcs[n++] = strtoull(t, NULL, 16);
		free(cp);
		if (!(out = malloc(cap)))
			continue;
		out[0] = 0;
		/* outermost first: the chain is innermost first */
		for (size_t k = n; k-- > 0;) {
			struct pmu_frame fr[8];
			size_t nf = pmu_sym_frames(sym, inc, e->t_first, pcs[k], k > 0, false, fr, 8);
			char nm[512];

			if (nf && fr[0].status == PMU_FRAME_OK && fr[nf - 1].func)
				snprintf(nm, sizeof(nm), "%s", fr[nf - 1].func);
			else
				snprintf(nm, sizeof(nm), "0x%" PRIx64, pcs[k]);
			for (char *c = nm; *c; c++)
				if (*c == ';' || *c == ' ' || *c == '\n')
					*c = '_';
			if (len + strlen(nm) + 2 > cap) {
				char *no = realloc(out, cap = 2 * (len + strlen(nm) + 2));

				if (!no)
					break;
				out = no;
			}
			len += (size_t)sprintf(out + len, "%s%s", len ? ";" : "", nm);
		}
		e->names = out;
	}
	pmu_sym_free(sym);
}

static bool is_child_wait(const char *sc)
{
	return !strcmp(sc, "wait4") || !strcmp(sc, "waitid") || !strcmp(sc, "waitpid");
}

static void os_free(struct os *o)
{
	for (size_t i = 0; i < o->ninc; i++) {
		free(o->inc_comm[i]);
		free(o->inc_own[i]);
	}
	free(o->inc_parent);
	free(o->inc_prog);
	free(o->inc_pid);
	free(o->inc_comm);
	free(o->inc_own);
	free(o->inc_v);
	free(o->inc_threads);
	for (size_t i = 0; i < o->files.n && i < o->fcap; i++) {
		free(o->file_path[i]);
		free(o->file_ftype[i]);
	}
	free(o->file_path);
	free(o->file_ftype);
	an_ids_release(&o->incs);
	an_ids_release(&o->progs);
	an_ids_release(&o->names);
	an_ids_release(&o->files);
	an_ids_release(&o->chainstr);
	km_release(&o->rows);
	km_release(&o->bysc);
	km_release(&o->errs);
	km_release(&o->waits);
	km_release(&o->incw);
	km_release(&o->states);
	km_release(&o->offsc);
	km_release(&o->chains);
	km_release(&o->tids);
	free(o->pend);
	free(o->raw_calls);
	free(o->chains_mode);
}

json_t *an_oscall_load(const struct pmu_bundle *b, int rep, json_t *fates, const char *folded, int *folded_err)
{
	struct os o;
	json_t *j;
	int err;

	if (folded_err)
		*folded_err = 0;
	memset(&o, 0, sizeof(o));
	o.b = b;
	o.rep = rep;
	an_ids_init(&o.incs);
	an_ids_init(&o.progs);
	an_ids_init(&o.names);
	an_ids_init(&o.files);
	an_ids_init(&o.chainstr);
	an_ids_put(&o.names, "", NULL);   /* OS_NONE */
	an_ids_put(&o.files, "", NULL);   /* OS_NONE */
	if (grow_incs(&o, 1) || !(o.file_path = calloc(256, sizeof(char *))) ||
	    !(o.file_ftype = calloc(256, sizeof(char *)))) {
		os_free(&o);
		return NULL;
	}
	o.fcap = 256;
	/* no OS-event stream: the sections say why, and the cohort (of any
	 * size) is not read again */
	{
		static const char *const rel[] = { "syscalls/syscalls.jsonl", "syscalls/syscall-stats.jsonl",
						   "sched/sched.jsonl" };
		bool any = false;

		for (size_t i = 0; i < 3 && !any; i++) {
			char pth[300];
			struct stat st;

			if (rep <= 1)
				snprintf(pth, sizeof(pth), "data/collectors/%s", rel[i]);
			else
				snprintf(pth, sizeof(pth), "data/repeats/%d/collectors/%s", rep, rel[i]);
			any = fstatat(b->rootfd, pth, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT;
		}
		if (!any) {
			j = json_pack("{s:s,s:o,s:o,s:o,s:n,s:I,s:I}", "status", "absent", "syscalls",
				      syscalls_json(&o, fates), "offcpu", offcpu_json(&o, fates), "decomposition",
				      decomposition_json(&o), "blocked", "malformed", (json_int_t)0,
				      "unknown_incarnation", (json_int_t)0);
			if (folded && folded_err) {
				fprintf(stderr, "pmuanalyze: --offcpu-folded: the bundle has no sched stream (%s)\n",
					json_string_value(json_object_get(json_object_get(j, "offcpu"), "reason")) ?: "?");
				*folded_err = -1;
			}
			os_free(&o);
			return j;
		}
	}
	err = cohort_load(&o);
	if (!err)
		err = pass_events(&o);
	if (!err)
		err = pass_stats(&o, false);
	if (!err && !o.nomem) {
		/* the rows listed get a histogram; the largest wait is the one the
		 * dominant cost may name */
		struct agg **v = sorted(&o.rows, by_total_desc);

		for (size_t i = 0; v && i < o.rows.n && i < OS_ROWS_JSON; i++)
			if (!(v[i]->hist = calloc(OS_HB, sizeof(uint64_t))))
				o.nomem = true;
		free(v);
		/* a wait for a child (wait4, waitid, waitpid) holds the child's own
		 * time, which its own waits name: never the blocking cost itself */
		for (size_t i = 0; i < o.waits.n; i++)
			if (o.waits.v[i].b != OS_NONE && !is_child_wait(name_of(&o, o.waits.v[i].b)) &&
			    (!o.dom || wsum(&o.waits.v[i]) + o.waits.v[i].runq > wsum(o.dom) + o.dom->runq))
				o.dom = &o.waits.v[i];
		if (o.dom)
			for (size_t i = 0; i < o.incw.n; i++)
				if (o.incw.v[i].b == o.dom->b && o.incw.v[i].c == o.dom->c &&
				    (uint32_t)o.inc_prog[o.incw.v[i].a - 1] + 1 == o.dom->a)
					o.dom_procs++;
		if (o.have_stats)
			err = pass_stats(&o, true);
	}
	if (err || o.nomem) {
		j = json_pack("{s:s,s:o,s:s}", "status", "failed", "reason",
			      pmu_json_text(err ? pmu_error_detail() : "out of memory"), "remedy",
			      "pmuvalidate the bundle; analyze it with --allow-invalid to see the rest");
		os_free(&o);
		return j;
	}
	if (o.have_chains && o.chains.n)
		symbolize_chains(&o, o.sym_why, sizeof(o.sym_why));
	j = json_pack("{s:s,s:o,s:o,s:o,s:o,s:I,s:I}", "status",
		      o.have_sys || o.have_stats || o.have_sched ? "ok" : "absent", "syscalls", syscalls_json(&o, fates),
		      "offcpu", offcpu_json(&o, fates), "decomposition", decomposition_json(&o), "blocked",
		      blocked_json(&o), "malformed", (json_int_t)o.malformed, "unknown_incarnation",
		      (json_int_t)o.unknown_inc);
	json_object_set_new(j, "table_overflow", json_pack("{s:I,s:I,s:I,s:I,s:I}", "rows", (json_int_t)o.rows.over,
							   "files", (json_int_t)o.files_over, "waits",
							   (json_int_t)(o.waits.over + o.incw.over), "chains_ns",
							   (json_int_t)o.chains_over, "pending_intervals",
							   (json_int_t)o.pend_over));
	if (folded && folded_err) {
		if (!o.have_sched) {
			fprintf(stderr, "pmuanalyze: --offcpu-folded: the bundle has no sched stream (%s)\n",
				json_string_value(json_object_get(json_object_get(j, "offcpu"), "reason")) ?: "?");
			*folded_err = -1;
		} else {
			*folded_err = write_folded(&o, folded);
		}
	}
	os_free(&o);
	return j;
}

/* ---- the dominant cost ----------------------------------------------------------- */

static void dur_text(double ns, char *out, size_t n)
{
	if (ns >= 1e9)
		snprintf(out, n, "%.2f s", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(out, n, "%.1f ms", ns / 1e6);
	else if (ns >= 1e3)
		snprintf(out, n, "%.1f us", ns / 1e3);
	else
		snprintf(out, n, "%.0f ns", ns);
}

static void grouped_u(uint64_t v, char *out, size_t n)
{
	char t[32];
	size_t l, o = 0;

	snprintf(t, sizeof(t), "%" PRIu64, v);
	l = strlen(t);
	for (size_t i = 0; i < l && o + 2 < n; i++) {
		if (i && (l - i) % 3 == 0)
			out[o++] = ',';
		out[o++] = t[i];
	}
	out[o] = 0;
}

bool an_oscall_statement(json_t *os, double wall_ns, bool off_cpu_dominates, char *out, size_t n)
{
	json_t *bl = json_object_get(os, "blocked"), *f, *dec = json_object_get(os, "decomposition");
	double w, rq, in, share;
	char path[600], calls[400] = "", un[300] = "", d[32], dw[32], dr[32];
	int procs;

	if (!json_is_object(bl) || wall_ns <= 0)
		return false;
	w = (double)json_integer_value(json_object_get(bl, "wait_ns"));
	rq = (double)json_integer_value(json_object_get(bl, "runq_ns"));
	/* the time in the calls: the statistics' total where they have it,
	 * else the off-CPU time inside them */
	in = json_object_get(bl, "total_ns") ? (double)json_integer_value(json_object_get(bl, "total_ns")) : w + rq;
	if (in < w + rq)
		in = w + rq;
	share = 100.0 * in / wall_ns;
	/* at least half the wall time; or a tenth of it when the off-CPU time
	 * is the dominant cost already (a smaller share does not explain it) */
	if (share < 50 && !(off_cpu_dominates && share >= 10))
		return false;
	f = json_object_get(bl, "file");
	if (json_is_string(json_object_get(f, "path")))
		snprintf(path, sizeof(path), " on %s", json_string_value(json_object_get(f, "path")));
	else if (json_is_object(f))
		snprintf(path, sizeof(path), " on %s %s:%lld (path not recorded)",
			 json_string_value(json_object_get(f, "ftype")) ?: "file",
			 json_string_value(json_object_get(f, "dev")) ?: "?",
			 (long long)json_integer_value(json_object_get(f, "ino")));
	else
		snprintf(path, sizeof(path), " (no file: not a raw I/O call)");
	if (json_object_get(bl, "calls")) {
		char c[32], p50[32], tot[32];

		grouped_u((uint64_t)json_integer_value(json_object_get(bl, "calls")), c, sizeof(c));
		dur_text((double)json_integer_value(json_object_get(bl, "p50_ns")), p50, sizeof(p50));
		dur_text((double)json_integer_value(json_object_get(bl, "total_ns")), tot, sizeof(tot));
		snprintf(calls, sizeof(calls), ": %s call%s, %s in them, p50 ~%s (estimate from the histogram)", c,
			 json_integer_value(json_object_get(bl, "calls")) == 1 ? "" : "s", tot, p50);
	}
	if (json_is_object(dec) && json_object_get(dec, "wait_unattributed_ns")) {
		json_t *c = json_object_get(dec, "cohort");
		double tw = (double)(json_integer_value(json_object_get(c, "sleep_ns")) +
				     json_integer_value(json_object_get(c, "blocked_ns")) +
				     json_integer_value(json_object_get(c, "other_ns")));
		double u = (double)json_integer_value(json_object_get(dec, "wait_unattributed_ns"));

		dur_text(u, d, sizeof(d));
		snprintf(un, sizeof(un), "; of the cohort's off-CPU waits %s (%.0f%%) are in no recorded interval "
			 "(shorter than min_off_ns, or before a thread's first switch: a smaller min_off_ns would "
			 "attribute them)", d, tw > 0 ? 100.0 * u / tw : 0.0);
	}
	dur_text(w, dw, sizeof(dw));
	dur_text(rq, dr, sizeof(dr));
	procs = (int)json_integer_value(json_object_get(bl, "processes"));
	snprintf(out, n, "%s (%d process%s) was in %s%s %.0f%% of wall time%s; off the CPU in it: blocked %s (%.0f%% "
		 "of wall), runnable waiting for a CPU %s (%.0f%%)%s",
		 json_string_value(json_object_get(bl, "program")) ?: "?", procs, procs == 1 ? "" : "es",
		 json_string_value(json_object_get(bl, "syscall")) ?: "?", path, share, calls, dw, 100.0 * w / wall_ns,
		 dr, 100.0 * rq / wall_ns, un);
	return true;
}

/* ---- A/B ---------------------------------------------------------------------------- */

json_t *an_oscall_compare(json_t *a, json_t *b)
{
	json_t *sa = json_object_get(json_object_get(a, "oscall"), "syscalls"),
	       *sb = json_object_get(json_object_get(b, "oscall"), "syscalls"), *rows = json_array(), *x, *y;
	const char *st_a = json_string_value(json_object_get(sa, "status")) ?: "absent",
		   *st_b = json_string_value(json_object_get(sb, "status")) ?: "absent";
	size_t i, k;

	if (strcmp(st_a, "ok") || strcmp(st_b, "ok")) {
		char why[300];

		json_decref(rows);
		snprintf(why, sizeof(why), "no system calls to compare: A's syscalls section is %s, B's %s", st_a, st_b);
		return json_pack("{s:s,s:s}", "status", "unavailable", "reason", why);
	}
	/* every syscall of A, then those only in B */
	for (int pass = 0; pass < 2; pass++)
		json_array_foreach(json_object_get(pass ? sb : sa, "by_syscall"), i, x) {
			const char *name = json_string_value(json_object_get(x, "syscall")) ?: "?";
			json_t *o = NULL, *r;

			json_array_foreach(json_object_get(pass ? sa : sb, "by_syscall"), k, y)
				if (!strcmp(json_string_value(json_object_get(y, "syscall")) ?: "", name))
					o = y;
			if (pass && o)
				continue;
			json_t *ra = pass ? o : x, *rb = pass ? x : o;
			json_int_t ca = json_integer_value(json_object_get(ra, "count")),
				   cb = json_integer_value(json_object_get(rb, "count")),
				   ta = json_integer_value(json_object_get(ra, "total_ns")),
				   tb = json_integer_value(json_object_get(rb, "total_ns"));

			r = json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I}", "syscall", name, "presence",
				      ra && rb ? "both" : ra ? "only-a" : "only-b", "count_a", ca, "count_b", cb,
				      "count_delta", cb - ca, "total_ns_a", ta, "total_ns_b", tb, "total_ns_delta", tb - ta);
			if (ra && json_object_get(ra, "p50_ns"))
				json_object_set(r, "p50_ns_a", json_object_get(ra, "p50_ns"));
			if (rb && json_object_get(rb, "p50_ns"))
				json_object_set(r, "p50_ns_b", json_object_get(rb, "p50_ns"));
			json_object_set_new(r, "errors_delta",
					    json_integer(json_integer_value(json_object_get(rb, "errors_total")) -
							 json_integer_value(json_object_get(ra, "errors_total"))));
			json_array_append_new(rows, r);
		}
	/* largest change in time first */
	for (i = 0; i < json_array_size(rows); i++)
		for (k = i + 1; k < json_array_size(rows); k++) {
			json_int_t di = json_integer_value(json_object_get(json_array_get(rows, i), "total_ns_delta")),
				   dk = json_integer_value(json_object_get(json_array_get(rows, k), "total_ns_delta"));

			if ((dk < 0 ? -dk : dk) > (di < 0 ? -di : di)) {
				json_t *t = json_incref(json_array_get(rows, i));

				json_array_set(rows, i, json_array_get(rows, k));
				json_array_set_new(rows, k, t);
			}
		}
	return json_pack("{s:s,s:o,s:s}", "status", "ok", "rows", rows, "note",
			 "one recording per side: counts and times are exact per run; p50 are histogram estimates; "
			 "a difference is not a significance test");
}

/* ---- the Chrome trace ----------------------------------------------------------------- */

int an_oscall_trace(const struct pmu_bundle *b, int rep, an_os_emit_fn emit, void *ctx)
{
	struct rd d;
	int err = 0;

	for (int s = 0; s < 2 && !err; s++) {
		int e = rd_open(&d, b, rep, s ? "sched" : "syscalls", s ? "sched.jsonl" : "syscalls.jsonl");

		if (e <= 0) {
			err = e;
			break;
		}
		while (!err && rd_next(&d)) {
			uint64_t t, dur;
			int64_t pid, tid;
			char name[80], path[512];
			json_t *args;

			if (!jint(&d.r, "t_ns", &t) || !jsint(&d.r, "pid", &pid) || !jsint(&d.r, "tid", &tid))
				continue;
			if (!s && is_type(&d.r, "call") && jstrb(&d.r, "syscall", name, sizeof(name)) &&
			    jint(&d.r, "dur_ns", &dur) && dur <= t) {
				uint64_t v;
				char e2[64];

				args = json_object();
				if (jstrb(&d.r, "path", path, sizeof(path)))
					json_object_set_new(args, "path", pmu_json_text(path));
				if (jint(&d.r, "fd", &v))
					json_object_set_new(args, "fd", json_integer((json_int_t)v));
				if (jint(&d.r, "bytes", &v))
					json_object_set_new(args, "bytes", json_integer((json_int_t)v));
				if (jstrb(&d.r, "error", e2, sizeof(e2)))
					json_object_set_new(args, "error", json_string(e2));
				json_object_set_new(args, "dur_ns", json_integer((json_int_t)dur));
				err = emit(ctx, name, "syscall", pid, tid, (int64_t)(t - dur), (int64_t)t, args);
			} else if (s && is_type(&d.r, "off") && jint(&d.r, "off_ns", &dur) && dur <= t) {
				char st[16] = "?", sc[64];

				jstrb(&d.r, "state", st, sizeof(st));
				args = json_pack("{s:s,s:I}", "state", st, "off_ns", (json_int_t)dur);
				if (jstrb(&d.r, "syscall", sc, sizeof(sc)))
					json_object_set_new(args, "syscall", json_string(sc));
				if (jint(&d.r, "runq_ns", &dur))
					json_object_set_new(args, "runq_ns", json_integer((json_int_t)dur));
				snprintf(name, sizeof(name), "off-CPU %s", st);
				jint(&d.r, "off_ns", &dur);
				err = emit(ctx, name, "off-cpu", pid, tid, (int64_t)(t - dur), (int64_t)t, args);
			}
		}
		rd_close(&d);
	}
	return err;
}

/* ---- text, CSV and HTML ------------------------------------------------------------- */

static const char *js(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "?";
}

static json_int_t ji(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

/* Text from a bundle: control characters shown as '?'. */
static void put_safe(FILE *f, const char *t)
{
	for (const unsigned char *c = (const unsigned char *)(t ? t : "?"); *c; c++)
		fputc(*c < 0x20 || *c == 0x7f ? '?' : *c, f);
}

static void file_label(json_t *file, char *out, size_t n)
{
	if (!json_is_object(file))
		snprintf(out, n, "-");
	else if (json_is_string(json_object_get(file, "path")))
		snprintf(out, n, "%s", js(file, "path"));
	else
		snprintf(out, n, "%s %s:%lld", json_object_get(file, "ftype") ? js(file, "ftype") : "file", js(file, "dev"),
			 (long long)ji(file, "ino"));
}

static void dt(json_t *o, const char *k, char *out, size_t n)
{
	if (!json_object_get(o, k))
		snprintf(out, n, "-");
	else
		dur_text((double)ji(o, k), out, n);
}

static void absent_text(FILE *f, const char *what, json_t *s)
{
	fprintf(f, "\n%s: %s: ", what, js(s, "status"));
	put_safe(f, js(s, "reason"));
	if (*js(s, "remedy") && strcmp(js(s, "remedy"), "?")) {
		fputs("; remedy: ", f);
		put_safe(f, js(s, "remedy"));
	}
	fputc('\n', f);
}

static void parts_text(FILE *f, json_t *x)
{
	static const char *const lab[] = { "on CPU", "runqueue", "sleeping", "blocked", "other", "unobserved" };
	double tt = (double)ji(x, "thread_ns");
	char d[32];

	dur_text(tt, d, sizeof(d));
	fprintf(f, "%s:", d);
	for (int k = 1; k < 7; k++) {
		double v = (double)ji(x, part_keys[k]);

		dur_text(v, d, sizeof(d));
		fprintf(f, "%s %s %s (%.0f%%)", k > 1 ? "," : "", lab[k - 1], d, tt > 0 ? 100.0 * v / tt : 0.0);
	}
	fputc('\n', f);
}

static void waits_text(FILE *f, json_t *a, const char *indent)
{
	json_t *w;
	size_t i;

	json_array_foreach(a, i, w) {
		char fl[600], d[32];

		if (i >= 5)
			break;
		file_label(json_object_get(w, "file"), fl, sizeof(fl));
		dur_text((double)ji(w, "wait_ns"), d, sizeof(d));
		fprintf(f, "%swaiting %s (%.0f%%) ", indent, d, json_real_value(json_object_get(w, "percent")));
		if (json_object_get(w, "program")) {
			put_safe(f, js(w, "program"));
			fputc(' ', f);
		}
		fprintf(f, "in %s", json_is_string(json_object_get(w, "syscall")) ? js(w, "syscall") : "no system call");
		if (json_is_object(json_object_get(w, "file"))) {
			fputs(" on ", f);
			put_safe(f, fl);
		}
		fprintf(f, " (%lld interval%s)\n", (long long)ji(w, "intervals"), ji(w, "intervals") == 1 ? "" : "s");
	}
}

void an_oscall_print(json_t *os, FILE *f)
{
	json_t *sc = json_object_get(os, "syscalls"), *oc = json_object_get(os, "offcpu"),
	       *dc = json_object_get(os, "decomposition"), *x;
	size_t i;
	char a[32], b[32], c[32], d[32], e[32], fl[600];

	if (!os)
		return;
	if (!strcmp(js(os, "status"), "failed")) {
		absent_text(f, "system calls and off-CPU time", os);
		return;
	}
	if (strcmp(js(sc, "status"), "ok")) {
		absent_text(f, "system calls", sc);
	} else {
		json_t *raw = json_object_get(sc, "raw"), *st = json_object_get(sc, "stats");

		fprintf(f, "\nsystem calls (exact counts and times; p50/p90/p99 marked ~ are estimates from the "
			   "in-kernel histogram, within 12.5%%)\n");
		if (json_is_object(st))
			fprintf(f, "  %lld calls in %lld statistics (every syscall of the cohort); lost %lld, unattributed %lld\n",
				(long long)ji(st, "calls"), (long long)ji(st, "stats"), (long long)ji(st, "lost"),
				(long long)ji(st, "unattributed"));
		if (json_is_object(raw))
			fprintf(f, "  %lld raw call records (the I/O family), truncated %lld, lost %lld, unattributed %lld\n",
				(long long)ji(raw, "calls"), (long long)ji(raw, "truncated"), (long long)ji(raw, "lost"),
				(long long)ji(raw, "unattributed"));
		if (json_is_array(json_object_get(sc, "unentered"))) {
			json_t *u;
			size_t k;

			fprintf(f, "  %lld more calls without a duration (%s):", (long long)ji(st, "unentered"),
				js(sc, "unentered_why"));
			json_array_foreach(json_object_get(sc, "unentered"), k, u)
				fprintf(f, "%s %s x%lld", k ? "," : "", js(u, "syscall"), (long long)ji(u, "calls"));
			fputc('\n', f);
		}
		fprintf(f, "  %-22s %-16s %-28s %8s %10s %10s %10s %10s %10s %s\n", "program (pid)", "syscall", "file",
			"calls", "total", "p50~", "p90~", "p99~", "max", "errors, bytes");
		json_array_foreach(json_object_get(sc, "rows"), i, x) {
			char who[300];

			if (i >= 10)
				break;
			snprintf(who, sizeof(who), "%s (%lld)", js(x, "program"), (long long)ji(x, "pid"));
			file_label(json_object_get(x, "file"), fl, sizeof(fl));
			dur_text((double)ji(x, "total_ns"), a, sizeof(a));
			dt(x, "p50_ns", b, sizeof(b));
			dt(x, "p90_ns", c, sizeof(c));
			dt(x, "p99_ns", d, sizeof(d));
			dur_text((double)ji(x, "max_ns"), e, sizeof(e));
			fputs("  ", f);
			put_safe(f, who);
			fprintf(f, "%*s %-16s ", (int)(strlen(who) < 22 ? 22 - strlen(who) : 0), "", js(x, "syscall"));
			put_safe(f, fl);
			fprintf(f, "%*s %8lld %10s %10s %10s %10s %10s", (int)(strlen(fl) < 28 ? 28 - strlen(fl) : 0), "",
				(long long)ji(x, "count"), a, b, c, d, e);
			if (ji(x, "errors_total")) {
				const char *k;
				json_t *v;

				json_object_foreach(json_object_get(x, "errors"), k, v)
					fprintf(f, " %s %lld", k, (long long)json_integer_value(v));
			}
			if (json_object_get(x, "bytes"))
				fprintf(f, " %lld B", (long long)ji(x, "bytes"));
			fputc('\n', f);
		}
		if (ji(sc, "rows_total") > 10)
			fprintf(f, "  (%lld more rows in --json)\n", (long long)(ji(sc, "rows_total") - 10));
		if (json_array_size(json_object_get(sc, "errors"))) {
			fputs("  errors:", f);
			json_array_foreach(json_object_get(sc, "errors"), i, x)
				fprintf(f, "%s %s %s x%lld", i ? "," : "", js(x, "syscall"), js(x, "error"),
					(long long)ji(x, "count"));
			fputc('\n', f);
		}
	}
	if (strcmp(js(oc, "status"), "ok")) {
		absent_text(f, "off-CPU", oc);
	} else {
		dur_text((double)ji(oc, "min_off_ns"), a, sizeof(a));
		if (ji(oc, "min_off_ns") > 0)
			fprintf(f, "\noff-CPU (%lld intervals of at least %s; %lld shorter ones are in the thread totals "
				   "only)\n", (long long)ji(oc, "intervals"), a, (long long)ji(oc, "short_offs"));
		else
			fprintf(f, "\noff-CPU (%lld intervals: every one)\n", (long long)ji(oc, "intervals"));
		fputs("  by state:", f);
		json_array_foreach(json_object_get(oc, "by_state"), i, x) {
			dur_text((double)ji(x, "off_ns"), a, sizeof(a));
			fprintf(f, "%s %s %s (%lld)", i ? "," : "", js(x, "state"), a, (long long)ji(x, "intervals"));
		}
		fputs("\n  by syscall in progress:", f);
		json_array_foreach(json_object_get(oc, "by_syscall"), i, x) {
			if (i >= 8)
				break;
			dur_text((double)ji(x, "wait_ns"), a, sizeof(a));
			fprintf(f, "%s %s %s waited (%lld)", i ? "," : "",
				json_is_string(json_object_get(x, "syscall")) ? js(x, "syscall") : "none", a,
				(long long)ji(x, "intervals"));
		}
		fputc('\n', f);
		if (json_is_array(json_object_get(oc, "chains"))) {
			json_array_foreach(json_object_get(oc, "chains"), i, x) {
				if (i >= 5)
					break;
				dur_text((double)ji(x, "wait_ns"), a, sizeof(a));
				fprintf(f, "  chain %s: ", a);
				put_safe(f, js(x, "program"));
				fprintf(f, " [%s] ", json_is_string(json_object_get(x, "syscall")) ? js(x, "syscall") : "-");
				put_safe(f, json_is_string(json_object_get(x, "frames")) ? js(x, "frames") : js(x, "chain"));
				fputc('\n', f);
			}
		} else {
			fprintf(f, "  chains: %s\n", js(oc, "chains_reason"));
		}
	}
	if (!strcmp(js(dc, "status"), "ok")) {
		json_t *co = json_object_get(dc, "cohort");

		fprintf(f, "\nthread time (per thread: on CPU + runqueue + sleeping + blocked + other + unobserved, exact)\n");
		fprintf(f, "  cohort (%lld thread%s) ", (long long)ji(dc, "threads"), ji(dc, "threads") == 1 ? "" : "s");
		parts_text(f, co);
		waits_text(f, json_object_get(co, "waits"), "    ");
		dur_text((double)ji(dc, "wait_unattributed_ns"), a, sizeof(a));
		fprintf(f, "    not attributed: %s of the waits: %s\n", a, js(dc, "wait_unattributed_why"));
		json_array_foreach(json_object_get(dc, "incarnations"), i, x) {
			if (i >= 5)
				break;
			fputs("  ", f);
			put_safe(f, js(x, "program"));
			fprintf(f, " (pid %lld, %s, %lld thread%s) ", (long long)ji(x, "pid"), js(x, "inc"),
				(long long)ji(x, "threads"), ji(x, "threads") == 1 ? "" : "s");
			parts_text(f, x);
			waits_text(f, json_object_get(x, "waits"), "    ");
		}
	}
}

static void csv_field(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void an_oscall_csv(json_t *os, FILE *f)
{
	json_t *sc = json_object_get(os, "syscalls"), *oc = json_object_get(os, "offcpu"),
	       *dc = json_object_get(os, "decomposition"), *x;
	size_t i;
	char fl[600];

	fputs("\nsection,program,inc,pid,syscall,file,count,total_ns,min_ns,max_ns,p50_ns_estimate,p90_ns_estimate,"
	      "p99_ns_estimate,errors,bytes\n", f);
	if (strcmp(js(sc, "status"), "ok")) {
		fprintf(f, "syscalls_status,%s,", js(sc, "status"));
		csv_field(f, js(sc, "reason"));
		fputc('\n', f);
	}
	json_array_foreach(json_object_get(sc, "rows"), i, x) {
		fputs("syscall,", f);
		csv_field(f, js(x, "program"));
		fprintf(f, ",%s,%lld,%s,", js(x, "inc"), (long long)ji(x, "pid"), js(x, "syscall"));
		file_label(json_object_get(x, "file"), fl, sizeof(fl));
		csv_field(f, fl);
		fprintf(f, ",%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,", (long long)ji(x, "count"), (long long)ji(x, "total_ns"),
			(long long)ji(x, "min_ns"), (long long)ji(x, "max_ns"), (long long)ji(x, "p50_ns"),
			(long long)ji(x, "p90_ns"), (long long)ji(x, "p99_ns"), (long long)ji(x, "errors_total"));
		if (json_object_get(x, "bytes"))
			fprintf(f, "%lld", (long long)ji(x, "bytes"));
		fputc('\n', f);
	}
	fputs("\nsection,state_or_syscall,intervals,off_ns,wait_ns,runq_ns\n", f);
	if (strcmp(js(oc, "status"), "ok")) {
		fprintf(f, "offcpu_status,%s,", js(oc, "status"));
		csv_field(f, js(oc, "reason"));
		fputc('\n', f);
	}
	json_array_foreach(json_object_get(oc, "by_state"), i, x)
		fprintf(f, "offcpu_state,%s,%lld,%lld,%lld,%lld\n", js(x, "state"), (long long)ji(x, "intervals"),
			(long long)ji(x, "off_ns"), (long long)ji(x, "wait_ns"), (long long)ji(x, "runq_ns"));
	json_array_foreach(json_object_get(oc, "by_syscall"), i, x)
		fprintf(f, "offcpu_syscall,%s,%lld,%lld,%lld,%lld\n",
			json_is_string(json_object_get(x, "syscall")) ? js(x, "syscall") : "", (long long)ji(x, "intervals"),
			(long long)ji(x, "off_ns"), (long long)ji(x, "wait_ns"), (long long)ji(x, "runq_ns"));
	fputs("\nsection,scope,program,inc,pid,tid,thread_ns,on_cpu_ns,runq_ns,sleep_ns,blocked_ns,other_ns,"
	      "unobserved_ns\n", f);
	if (!strcmp(js(dc, "status"), "ok")) {
		json_t *co = json_object_get(dc, "cohort");

		fprintf(f, "thread_time,cohort,,,,,");
		for (int k = 0; k < 7; k++)
			fprintf(f, "%s%lld", k ? "," : "", (long long)ji(co, part_keys[k]));
		fputc('\n', f);
		json_array_foreach(json_object_get(dc, "incarnations"), i, x) {
			fputs("thread_time,incarnation,", f);
			csv_field(f, js(x, "program"));
			fprintf(f, ",%s,%lld,,", js(x, "inc"), (long long)ji(x, "pid"));
			for (int k = 0; k < 7; k++)
				fprintf(f, "%s%lld", k ? "," : "", (long long)ji(x, part_keys[k]));
			fputc('\n', f);
		}
		json_array_foreach(json_object_get(dc, "thread_list"), i, x) {
			fprintf(f, "thread_time,thread,,%s,%lld,%lld,", js(x, "inc"), (long long)ji(x, "pid"),
				(long long)ji(x, "tid"));
			for (int k = 0; k < 7; k++)
				fprintf(f, "%s%lld", k ? "," : "", (long long)ji(x, part_keys[k]));
			fputc('\n', f);
		}
	}
}

static void hesc(FILE *f, const char *s)
{
	for (; s && *s; s++)
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
}

void an_oscall_html(json_t *os, FILE *f)
{
	json_t *sc = json_object_get(os, "syscalls"), *oc = json_object_get(os, "offcpu"),
	       *dc = json_object_get(os, "decomposition"), *x;
	size_t i;
	char fl[600], a[32], b[32], c[32], d[32], e[32];

	fputs("<section id=\"oscall\">\n<h2>System calls and off-CPU time</h2>\n", f);
	if (strcmp(js(sc, "status"), "ok")) {
		fprintf(f, "<p class=\"mut\">System calls: %s: ", js(sc, "status"));
		hesc(f, js(sc, "reason"));
		fputs("</p>\n", f);
	} else {
		fputs("<p>Exact counts and times; p50/p90/p99 marked ~ are estimates from the in-kernel histogram "
		      "(within 12.5%).</p>\n<div class=\"scroll\"><table><tr><th>program</th><th class=\"num\">pid</th>"
		      "<th>syscall</th><th>file</th><th class=\"num\">calls</th><th class=\"num\">total</th>"
		      "<th class=\"num\">p50~</th><th class=\"num\">p90~</th><th class=\"num\">p99~</th>"
		      "<th class=\"num\">max</th><th class=\"num\">errors</th><th class=\"num\">bytes</th></tr>\n", f);
		json_array_foreach(json_object_get(sc, "rows"), i, x) {
			file_label(json_object_get(x, "file"), fl, sizeof(fl));
			dur_text((double)ji(x, "total_ns"), a, sizeof(a));
			dt(x, "p50_ns", b, sizeof(b));
			dt(x, "p90_ns", c, sizeof(c));
			dt(x, "p99_ns", d, sizeof(d));
			dur_text((double)ji(x, "max_ns"), e, sizeof(e));
			fputs("<tr><td>", f);
			hesc(f, js(x, "program"));
			fprintf(f, "</td><td class=\"num\">%lld</td><td>", (long long)ji(x, "pid"));
			hesc(f, js(x, "syscall"));
			fputs("</td><td>", f);
			hesc(f, fl);
			fprintf(f, "</td><td class=\"num\">%lld</td><td class=\"num\">%s</td><td class=\"num\">~%s</td>"
				   "<td class=\"num\">~%s</td><td class=\"num\">~%s</td><td class=\"num\">%s</td>"
				   "<td class=\"num\">%lld</td><td class=\"num\">",
				(long long)ji(x, "count"), a, b, c, d, e, (long long)ji(x, "errors_total"));
			if (json_object_get(x, "bytes"))
				fprintf(f, "%lld", (long long)ji(x, "bytes"));
			fputs("</td></tr>\n", f);
		}
		fputs("</table></div>\n", f);
	}
	if (strcmp(js(oc, "status"), "ok")) {
		fprintf(f, "<p class=\"mut\">Off-CPU: %s: ", js(oc, "status"));
		hesc(f, js(oc, "reason"));
		fputs("</p>\n", f);
	} else {
		fputs("<h3>Off-CPU intervals by state and system call in progress</h3>\n<div class=\"scroll\"><table>"
		      "<tr><th>state / syscall</th><th class=\"num\">intervals</th><th class=\"num\">off-CPU</th>"
		      "<th class=\"num\">waiting</th><th class=\"num\">runqueue</th></tr>\n", f);
		for (int pass = 0; pass < 2; pass++)
			json_array_foreach(json_object_get(oc, pass ? "by_syscall" : "by_state"), i, x) {
				dur_text((double)ji(x, "off_ns"), a, sizeof(a));
				dur_text((double)ji(x, "wait_ns"), b, sizeof(b));
				dur_text((double)ji(x, "runq_ns"), c, sizeof(c));
				fprintf(f, "<tr><td>%s ", pass ? "syscall" : "state");
				hesc(f, pass ? (json_is_string(json_object_get(x, "syscall")) ? js(x, "syscall") : "none")
					     : js(x, "state"));
				fprintf(f, "</td><td class=\"num\">%lld</td><td class=\"num\">%s</td><td class=\"num\">%s</td>"
					   "<td class=\"num\">%s</td></tr>\n", (long long)ji(x, "intervals"), a, b, c);
			}
		fputs("</table></div>\n", f);
	}
	if (!strcmp(js(dc, "status"), "ok")) {
		static const char *const lab[] = { "thread time", "on CPU", "runqueue", "sleeping", "blocked", "other",
						   "unobserved" };

		fputs("<h3>Thread time decomposed</h3>\n<div class=\"scroll\"><table><tr><th>scope</th>", f);
		for (int k = 0; k < 7; k++)
			fprintf(f, "<th class=\"num\">%s</th>", lab[k]);
		fputs("</tr>\n", f);
		for (int pass = 0; pass < 2; pass++) {
			json_t *arr = pass ? json_object_get(dc, "incarnations") : NULL;
			size_t n = pass ? json_array_size(arr) : 1;

			for (i = 0; i < n; i++) {
				x = pass ? json_array_get(arr, i) : json_object_get(dc, "cohort");
				fputs("<tr><td>", f);
				if (pass) {
					hesc(f, js(x, "program"));
					fprintf(f, " (pid %lld)", (long long)ji(x, "pid"));
				} else {
					fputs("cohort", f);
				}
				fputs("</td>", f);
				for (int k = 0; k < 7; k++) {
					dur_text((double)ji(x, part_keys[k]), a, sizeof(a));
					fprintf(f, "<td class=\"num\">%s</td>", a);
				}
				fputs("</tr>\n", f);
			}
		}
		fputs("</table></div>\n<p class=\"mut\">", f);
		hesc(f, js(dc, "note"));
		fputs("</p>\n", f);
	}
	fputs("</section>\n", f);
}
