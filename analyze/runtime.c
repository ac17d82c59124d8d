/*
 * The runtime-evidence section of pmuanalyze (runtime.h): the probes and
 * alloc streams (bundle-spec section 24) and spans.jsonl, read record by
 * record.  Memory is bounded in the streams' length: the span index (id ->
 * name and parent, for the name paths), the groups (name paths, names, GC
 * incarnation x runtime x kind, allocation chains) and the durations kept
 * for exact percentiles each have a bound; what did not fit is counted in
 * table_overflow and said where it matters (a group whose durations were
 * not all kept has no percentiles, with the reason).
 *
 * Passes, each a stream read once:
 *  0. the marks of spans.jsonl and of the probes stream: the phases' cuts;
 *  1. the spans of both: the index of (incarnation, id) -> name, parent;
 *  2. every record of the probes stream and spans.jsonl: spans by name path
 *     and name, GC pauses, runtimes, probes, loss; per phase;
 *  3. the alloc stream: samples by chain, per phase; incarnations;
 *  4. samples.jsonl and syscalls.jsonl, when there: per phase, counts only.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "bundle.h"
#include "error.h"
#include "jsonl.h"
#include "model.h"
#include "runtime.h"
#include "spec_json.h"
#include "symbolize.h"
#include "util.h"

#define RT_GROUPS_MAX 4096        /* distinct keys per table */
#define RT_SPANS_MAX (1u << 18)   /* spans indexed for their name paths */
#define RT_DURS_MAX (2u << 20)    /* durations kept for exact percentiles, all groups */
#define RT_DEPTH 16               /* name path depth */
#define RT_LIST 100               /* marks, runtimes, unended listed */
#define RT_PROBES 200             /* probe records listed */
#define RT_INCS 1000              /* alloc incarnation records listed */
#define RT_TOP 20                 /* rows per ranking in the report */
#define RT_ROWS 200               /* span paths / names / GC rows in the report */

/* ---- helpers ---------------------------------------------------------------------- */

static const char *js(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

static json_int_t ji(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

static bool jint(const struct pmu_jrec *r, const char *k, uint64_t *v)
{
	const struct pmu_jfield *f = pmu_jrec_get(r, k);

	if (!f || f->type != PMU_JV_INT || f->overflow || f->i < 0)
		return false;
	*v = (uint64_t)f->i;
	return true;
}

static uint64_t jint0(const struct pmu_jrec *r, const char *k)
{
	uint64_t v = 0;

	jint(r, k, &v);
	return v;
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

/* A flat record as a JSON object (scalars; the type member left out). */
static json_t *jrec_json(const struct pmu_jrec *r)
{
	json_t *o = json_object();

	for (int i = 0; o && i < r->n; i++) {
		const struct pmu_jfield *f = &r->f[i];
		char key[128], *s;
		json_t *v = NULL;

		if (f->klen >= sizeof(key))
			continue;
		memcpy(key, f->key, f->klen);
		key[f->klen] = 0;
		if (!strcmp(key, "type"))
			continue;
		switch (f->type) {
		case PMU_JV_STR:
			if ((s = malloc(f->slen + 1))) {
				memcpy(s, f->s, f->slen);
				s[f->slen] = 0;
				v = pmu_json_text(s);
				free(s);
			}
			break;
		case PMU_JV_INT: v = f->overflow ? NULL : json_integer(f->i); break;
		case PMU_JV_BOOL: v = json_boolean(f->b); break;
		case PMU_JV_REAL:
		case PMU_JV_NULL:
		case PMU_JV_NESTED: v = NULL; break;
		}
		if (v)
			json_object_set_new(o, key, v);
	}
	return o;
}

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

static void bytes_text(double b, char *out, size_t n)
{
	if (b >= 1024.0 * 1024 * 1024)
		snprintf(out, n, "%.1f GiB", b / (1024.0 * 1024 * 1024));
	else if (b >= 1024.0 * 1024)
		snprintf(out, n, "%.1f MiB", b / (1024.0 * 1024));
	else if (b >= 1024.0)
		snprintf(out, n, "%.1f KiB", b / 1024.0);
	else
		snprintf(out, n, "%.0f B", b);
}

/* s for a terminal: control characters as '?'. */
static void put_safe(FILE *f, const char *s)
{
	for (; s && *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

static uint64_t fnv(const char *s, uint64_t h)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h ? h : 1;
}

/* ---- a stream, line by line ------------------------------------------------------- */

struct rd {
	FILE *f;
	char *line;
	size_t cap;
	struct pmu_jrec r;
	uint64_t malformed;
};

/* data/<rel> of repetition rep: 1 open, 0 absent, or a negative pmu_err. */
static int rd_open(struct rd *d, const struct pmu_bundle *b, int rep, const char *rel)
{
	char path[400];
	int fd;

	memset(d, 0, sizeof(*d));
	pmu_jrec_init(&d->r);
	if (rep <= 1)
		snprintf(path, sizeof(path), "data/%s", rel);
	else
		snprintf(path, sizeof(path), "data/repeats/%d/%s", rep, rel);
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

/* The next record into d->r: true, or false at the end.  The header (no
 * type member) is a record like any other to the caller, which skips
 * what it does not know. */
static bool rd_next(struct rd *d)
{
	ssize_t n;
	const char *why;
	size_t at;

	while (d->f && (n = getline(&d->line, &d->cap, d->f)) >= 0) {
		if (n && d->line[n - 1] == '\n')
			n--;
		if (!n)
			continue;
		if ((size_t)n > (1u << 20) || pmu_jrec_parse(&d->r, d->line, (size_t)n, &why, &at)) {
			d->malformed++;
			continue;
		}
		return true;
	}
	return false;
}

static bool file_exists(const struct pmu_bundle *b, int rep, const char *rel)
{
	char path[400];
	struct stat st;

	if (rep <= 1)
		snprintf(path, sizeof(path), "data/%s", rel);
	else
		snprintf(path, sizeof(path), "data/repeats/%d/%s", rep, rel);
	return fstatat(b->rootfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* ---- groups: a key string -> counts and durations ------------------------------- */

struct grp {
	uint64_t count, total, min, max;
	uint64_t *d;                /* the durations, while kept */
	size_t nd, cap;
	bool cut;                   /* not all durations kept */
	int depth;                  /* span paths */
	uint64_t est_bytes, est_milli, samples; /* alloc chains */
	uint64_t t_first;           /* the first sample's time and incarnation (+ 1) */
	uint32_t inc_first;
	char *frames;               /* symbolized chain, outermost first, ';'-separated */
	char *site;                 /* the allocating function */
};

struct gtab {
	struct an_ids keys;
	struct grp *v;
	size_t cap;
	uint64_t over;              /* records whose key did not fit */
};

struct rt_phase {
	const char *name;
	uint64_t from, to;
	uint64_t spans, gc_n, gc_ns, al_bytes, al_samples, al_milli, cpu, sc_n, sc_ns;
};

/* The phases of one incarnation that marked its own startup or warmup end
 * (a JVM's vm__init__end, a program's startup-end), counted from its start
 * with its own records only. */
#define RT_PHSETS 16
struct phset {
	long inc;
	uint64_t s, w;              /* its first startup-end and warmup-end, 0: none */
	char src[64];               /* the startup-end's source */
	struct rt_phase ph[3];
	int nph;
};

struct sp {
	uint64_t key, parent;
	uint32_t name;
	bool has_parent;
};

struct rt {
	const struct pmu_bundle *b;
	int rep;
	bool nomem;
	/* the cohort */
	struct an_ids incs;
	int64_t *inc_pid;
	uint64_t *inc_start, *inc_end;  /* end 0: alive at the end */
	char **inc_prog;
	size_t icap;
	long root;
	size_t root_seq;
	uint64_t run_start, run_end;
	/* phases */
	struct rt_phase ph[3];
	int nph;
	uint64_t origin, end;
	uint64_t cut_startup, cut_warmup, cut_delay; /* 0: none */
	char cut_startup_inc[64], cut_warmup_inc[64];
	json_t *marks;
	uint64_t marks_n;
	struct phset ps[RT_PHSETS];
	int nps;
	uint64_t ps_over;
	/* spans */
	struct sp *sp;
	size_t nsp, spcap;
	uint64_t sp_over;
	struct an_ids names;            /* span names */
	uint64_t names_over;
	struct gtab paths, bynames, gcs, jits, chains, sites;
	uint64_t durs;                  /* durations kept */
	uint64_t spans_usdt, spans_ctl, unresolved;
	uint64_t gc_records;
	/* the probes stream */
	bool have_probes, have_alloc, have_spans_file, have_samples, have_syscalls;
	json_t *pconfig, *psummary, *probes, *runtimes, *unended, *allocs, *hits;
	uint64_t probes_n, runtimes_n, unended_n, threads, threads_ended, lost_probes[3];
	uint64_t pmalformed, amalformed;
	/* the alloc stream */
	json_t *aconfig, *asummary, *aincs;
	uint64_t aincs_n, samples, frees, al_est_bytes, al_milli, al_lost[4], al_unknown_inc;
	uint64_t sample_bytes;
	char sym_why[300];
};

static void gt_init(struct gtab *t)
{
	memset(t, 0, sizeof(*t));
	an_ids_init(&t->keys);
}

static void gt_release(struct gtab *t)
{
	for (size_t i = 0; i < t->keys.n && t->v; i++) {
		free(t->v[i].d);
		free(t->v[i].frames);
		free(t->v[i].site);
	}
	free(t->v);
	an_ids_release(&t->keys);
	memset(t, 0, sizeof(*t));
}

/* The group of key, made when new; NULL when the table is full (counted)
 * or out of memory (r->nomem). */
static struct grp *gt_get(struct rt *r, struct gtab *t, const char *key)
{
	long i = an_ids_find(&t->keys, key);
	bool added = false;

	if (i < 0) {
		if (t->keys.n >= RT_GROUPS_MAX) {
			t->over++;
			return NULL;
		}
		if ((i = an_ids_put(&t->keys, key, &added)) < 0) {
			r->nomem = true;
			return NULL;
		}
	}
	if ((size_t)i >= t->cap) {
		size_t nc = t->cap ? 2 * t->cap : 64;
		struct grp *nv = realloc(t->v, nc * sizeof(*nv));

		if (!nv) {
			r->nomem = true;
			return NULL;
		}
		memset(nv + t->cap, 0, (nc - t->cap) * sizeof(*nv));
		t->v = nv;
		t->cap = nc;
	}
	if (added)
		t->v[i].min = UINT64_MAX;
	return &t->v[i];
}

/* One duration into g: exact sums always; the value itself while the
 * bound on kept durations allows (else g's percentiles are not given). */
static void grp_dur(struct rt *r, struct grp *g, uint64_t v)
{
	g->count++;
	g->total += v;
	if (v < g->min)
		g->min = v;
	if (v > g->max)
		g->max = v;
	if (g->cut)
		return;
	if (r->durs >= RT_DURS_MAX) {
		g->cut = true;
		return;
	}
	if (g->nd == g->cap) {
		size_t nc = g->cap ? 2 * g->cap : 16;
		uint64_t *nd = realloc(g->d, nc * sizeof(*nd));

		if (!nd) {
			g->cut = true;
			return;
		}
		g->d = nd;
		g->cap = nc;
	}
	g->d[g->nd++] = v;
	r->durs++;
}

static int u64cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The nearest-rank q-quantile of the sorted v[0..n). */
static uint64_t rank_q(const uint64_t *v, size_t n, double q)
{
	size_t k = (size_t)ceil(q * (double)n);

	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

/* count, total, min, max and exact percentiles of g into o. */
static void grp_stats(json_t *o, struct grp *g, bool p99)
{
	json_object_set_new(o, "count", json_integer((json_int_t)g->count));
	json_object_set_new(o, "total_ns", json_integer((json_int_t)g->total));
	json_object_set_new(o, "min_ns", json_integer(g->count ? (json_int_t)g->min : 0));
	json_object_set_new(o, "max_ns", json_integer((json_int_t)g->max));
	if (!g->cut && g->nd == g->count && g->nd) {
		qsort(g->d, g->nd, sizeof(*g->d), u64cmp);
		json_object_set_new(o, "p50_ns", json_integer((json_int_t)rank_q(g->d, g->nd, 0.5)));
		json_object_set_new(o, "p90_ns", json_integer((json_int_t)rank_q(g->d, g->nd, 0.9)));
		if (p99)
			json_object_set_new(o, "p99_ns", json_integer((json_int_t)rank_q(g->d, g->nd, 0.99)));
		json_object_set_new(o, "percentiles_exact", json_true());
	} else {
		json_object_set_new(o, "percentiles_exact", json_false());
		json_object_set_new(o, "percentiles_reason",
				    json_string("not every duration could be kept (the analyzer keeps at most 2097152): "
						"count, total, min and max are exact, percentiles not given"));
	}
}

/* Groups by a numeric member, descending: an array of indices. */
static const struct gtab *sort_tab;
static int sort_by_total(const void *a, const void *b)
{
	const struct grp *x = &sort_tab->v[*(const size_t *)a], *y = &sort_tab->v[*(const size_t *)b];

	return x->total < y->total ? 1 : x->total > y->total ? -1 : 0;
}

static int sort_by_est(const void *a, const void *b)
{
	const struct grp *x = &sort_tab->v[*(const size_t *)a], *y = &sort_tab->v[*(const size_t *)b];

	return x->est_bytes < y->est_bytes ? 1 : x->est_bytes > y->est_bytes ? -1 : 0;
}

static size_t *sorted(const struct gtab *t, int (*cmp)(const void *, const void *))
{
	size_t *v = malloc((t->keys.n ? t->keys.n : 1) * sizeof(*v));

	if (!v)
		return NULL;
	for (size_t i = 0; i < t->keys.n; i++)
		v[i] = i;
	sort_tab = t;
	qsort(v, t->keys.n, sizeof(*v), cmp);
	return v;
}

/* ---- the cohort ------------------------------------------------------------------- */

static const char *base_of(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static int cohort_inc(void *ctx, json_t *in, size_t seq)
{
	struct rt *r = ctx;
	const char *id = json_string_value(json_object_get(in, "id"));
	const char *comm = json_string_value(json_object_get(in, "comm"));
	json_t *ex = json_object_get(in, "exec"), *last = json_array_get(ex, json_array_size(ex) - 1);
	const char *path = json_string_value(json_object_get(last, "path"));
	long i;

	if (!id)
		return 0;
	if ((i = an_ids_put(&r->incs, id, NULL)) < 0)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	if ((size_t)i >= r->icap) {
		size_t nc = r->icap ? 2 * r->icap : 64;
		int64_t *np = realloc(r->inc_pid, nc * sizeof(*np));
		uint64_t *ns, *ne;
		char **pr;

		if (np)
			r->inc_pid = np;
		ns = np ? realloc(r->inc_start, nc * sizeof(*ns)) : NULL;
		if (ns)
			r->inc_start = ns;
		ne = ns ? realloc(r->inc_end, nc * sizeof(*ne)) : NULL;
		if (ne)
			r->inc_end = ne;
		pr = ne ? realloc(r->inc_prog, nc * sizeof(*pr)) : NULL;
		if (!pr)
			return pmu_error(PMU_ERR_NOMEM, "out of memory");
		r->inc_prog = pr;
		memset(r->inc_prog + r->icap, 0, (nc - r->icap) * sizeof(*pr));
		r->icap = nc;
	}
	if (r->inc_prog[i])
		return 0;
	r->inc_pid[i] = json_integer_value(json_object_get(in, "pid"));
	r->inc_start[i] = (uint64_t)json_integer_value(json_object_get(in, "start_ns"));
	r->inc_end[i] = (uint64_t)json_integer_value(json_object_get(in, "end_ns"));
	r->inc_prog[i] = strdup(path ? base_of(path) : comm ? comm : "?");
	if (!r->inc_prog[i])
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	if (!json_object_get(in, "parent") && (r->root < 0 || seq < r->root_seq)) {
		r->root = i;
		r->root_seq = seq;
	}
	return 0;
}

/* The incarnation number of a record, or -1. */
static long inc_of(const struct rt *r, const struct pmu_jrec *rec)
{
	char id[256];
	long i;

	if (!jstrb(rec, "inc", id, sizeof(id)) || (i = an_ids_find(&r->incs, id)) < 0 || (size_t)i >= r->icap ||
	    !r->inc_prog[i])
		return -1;
	return i;
}

static uint64_t inc_wall(const struct rt *r, long i)
{
	uint64_t e = r->inc_end[i] ? r->inc_end[i] : r->run_end;

	return e > r->inc_start[i] ? e - r->inc_start[i] : 0;
}

/* ---- pass 0: marks and phases ------------------------------------------------------ */

static void mark_seen(struct rt *r, const struct pmu_jrec *rec, const char *via)
{
	char name[256] = "", inc[64] = "", src[128] = "";
	uint64_t t = 0;

	if (!jstrb(rec, "name", name, sizeof(name)) || !jint(rec, "t_ns", &t))
		return;
	jstrb(rec, "inc", inc, sizeof(inc));
	if (!jstrb(rec, "source", src, sizeof(src)))
		snprintf(src, sizeof(src), "%s", !strcmp(via, "ctl") ? "control channel" : "?");
	if (!strcmp(name, "startup-end") && (!r->cut_startup || t < r->cut_startup)) {
		r->cut_startup = t;
		snprintf(r->cut_startup_inc, sizeof(r->cut_startup_inc), "%s", inc);
	}
	if (!strcmp(name, "warmup-end") && (!r->cut_warmup || t < r->cut_warmup)) {
		r->cut_warmup = t;
		snprintf(r->cut_warmup_inc, sizeof(r->cut_warmup_inc), "%s", inc);
	}
	if (!strcmp(name, "pmurec:delay-end") && (!r->cut_delay || t < r->cut_delay))
		r->cut_delay = t;
	if (!strcmp(name, "startup-end") || !strcmp(name, "warmup-end")) {
		long i = inc_of(r, rec);
		struct phset *ps = NULL;

		for (int k = 0; i >= 0 && k < r->nps; k++)
			if (r->ps[k].inc == i)
				ps = &r->ps[k];
		if (i >= 0 && !ps) {
			if (r->nps < RT_PHSETS) {
				ps = &r->ps[r->nps++];
				memset(ps, 0, sizeof(*ps));
				ps->inc = i;
			} else {
				r->ps_over++;
			}
		}
		if (ps && name[0] == 's' && (!ps->s || t < ps->s)) {
			ps->s = t;
			snprintf(ps->src, sizeof(ps->src), "%s", src);
		}
		if (ps && name[0] == 'w' && (!ps->w || t < ps->w))
			ps->w = t;
	}
	r->marks_n++;
	if (json_array_size(r->marks) < RT_LIST)
		json_array_append_new(r->marks, json_pack("{s:o,s:s,s:I,s:I,s:o,s:s}", "name", pmu_json_text(name),
							  "inc", inc, "t_ns", (json_int_t)t, "offset_ns",
							  (json_int_t)(t > r->origin ? t - r->origin : 0), "source",
							  pmu_json_text(src), "via", via));
}

static int pass_marks(struct rt *r)
{
	static const struct {
		const char *rel, *via;
	} s[] = { { "spans.jsonl", "ctl" }, { "collectors/probes/probes.jsonl", "usdt" } };

	for (size_t k = 0; k < 2; k++) {
		struct rd d;
		int e = rd_open(&d, r->b, r->rep, s[k].rel);

		if (e < 0)
			return e;
		while (e && rd_next(&d))
			if (is_type(&d.r, "mark"))
				mark_seen(r, &d.r, s[k].via);
		rd_close(&d);
	}
	return 0;
}

/* The phases: cut at startup-end (else pmurec:delay-end) and warmup-end,
 * each the first of its name in the cohort; one phase without a cut. */
static int cut_phases(struct rt_phase *ph, uint64_t origin, uint64_t end, uint64_t s, uint64_t w)
{
	int n = 0;

	if (s && (s < origin || s > end))
		s = 0;
	if (w && (w < origin || w > end || (s && w < s)))
		w = 0;
	if (!s && !w) {
		ph[n++] = (struct rt_phase){ .name = "run", .from = origin, .to = end };
		return n;
	}
	if (s)
		ph[n++] = (struct rt_phase){ .name = "startup", .from = origin, .to = s };
	if (w)
		ph[n++] = (struct rt_phase){ .name = "warmup", .from = s ? s : origin, .to = w };
	ph[n++] = (struct rt_phase){ .name = "steady", .from = w ? w : s, .to = end };
	return n;
}

static void make_phases(struct rt *r)
{
	r->nph = cut_phases(r->ph, r->origin, r->end, r->cut_startup ? r->cut_startup : r->cut_delay, r->cut_warmup);
	for (int k = 0; k < r->nps; k++) {
		struct phset *ps = &r->ps[k];
		uint64_t a = r->inc_start[ps->inc], z = r->inc_end[ps->inc] ? r->inc_end[ps->inc] : r->run_end;

		ps->nph = cut_phases(ps->ph, a, z < a ? a : z, ps->s, ps->w);
	}
}

/* The phase of time t (by end time) in ph[0..n), or NULL outside them. */
static struct rt_phase *phase_in(struct rt_phase *ph, int n, uint64_t t)
{
	for (int i = 0; i < n; i++)
		if (t >= ph[i].from && (t < ph[i].to || (i == n - 1 && t <= ph[i].to)))
			return &ph[i];
	return NULL;
}

/* v added to the member at off of the cohort's phase of t and of the
 * phase of t of incarnation inc's own phases, when it has them. */
static void ph_add(struct rt *r, long inc, uint64_t t, size_t off, uint64_t v)
{
	struct rt_phase *p = phase_in(r->ph, r->nph, t);

	if (p)
		*(uint64_t *)((char *)p + off) += v;
	for (int k = 0; inc >= 0 && k < r->nps; k++)
		if (r->ps[k].inc == inc && (p = phase_in(r->ps[k].ph, r->ps[k].nph, t)))
			*(uint64_t *)((char *)p + off) += v;
}
#define PH(f) offsetof(struct rt_phase, f)

/* ---- pass 1: the span index ----------------------------------------------------------- */

static uint64_t span_key(long inc, const char *id)
{
	return mix(fnv(id, 0xcbf29ce484222325ull ^ ((uint64_t)(inc + 1) * 0x9e3779b97f4a7c15ull)));
}

static struct sp *sp_find(const struct rt *r, uint64_t key)
{
	if (!r->spcap)
		return NULL;
	for (size_t s = key & (r->spcap - 1);; s = (s + 1) & (r->spcap - 1)) {
		if (!r->sp[s].key)
			return NULL;
		if (r->sp[s].key == key)
			return &r->sp[s];
	}
}

static void sp_put(struct rt *r, uint64_t key, uint64_t parent, bool has_parent, uint32_t name)
{
	struct sp *e;

	if (sp_find(r, key))
		return;
	if (r->nsp >= RT_SPANS_MAX) {
		r->sp_over++;
		return;
	}
	if (2 * (r->nsp + 1) > r->spcap) {
		size_t nc = r->spcap ? 2 * r->spcap : 1024;
		struct sp *nv = calloc(nc, sizeof(*nv));

		if (!nv) {
			r->nomem = true;
			return;
		}
		for (size_t i = 0; i < r->spcap; i++)
			if (r->sp[i].key) {
				size_t s = r->sp[i].key & (nc - 1);

				while (nv[s].key)
					s = (s + 1) & (nc - 1);
				nv[s] = r->sp[i];
			}
		free(r->sp);
		r->sp = nv;
		r->spcap = nc;
	}
	{
		size_t s = key & (r->spcap - 1);

		while (r->sp[s].key)
			s = (s + 1) & (r->spcap - 1);
		e = &r->sp[s];
	}
	e->key = key;
	e->parent = parent;
	e->has_parent = has_parent;
	e->name = name;
	r->nsp++;
}

/* The number of a span name; names past the bound share one. */
static uint32_t name_num(struct rt *r, const char *name)
{
	long i = an_ids_find(&r->names, name);

	if (i >= 0)
		return (uint32_t)i;
	if (r->names.n >= RT_GROUPS_MAX - 1) {
		r->names_over++;
		name = "(other names)";
	}
	if ((i = an_ids_put(&r->names, name, NULL)) < 0) {
		r->nomem = true;
		return 0;
	}
	return (uint32_t)i;
}

static void span_index(struct rt *r, const struct pmu_jrec *rec)
{
	char id[128], par[128], name[256];
	long inc = inc_of(r, rec);
	bool hp;

	if (!jstrb(rec, "id", id, sizeof(id)) || !jstrb(rec, "name", name, sizeof(name)))
		return;
	hp = jstrb(rec, "parent", par, sizeof(par));
	sp_put(r, span_key(inc, id), hp ? span_key(inc, par) : 0, hp, name_num(r, name));
}

static int pass_index(struct rt *r)
{
	static const char *const rel[] = { "spans.jsonl", "collectors/probes/probes.jsonl" };

	for (size_t k = 0; k < 2; k++) {
		struct rd d;
		int e = rd_open(&d, r->b, r->rep, rel[k]);

		if (e < 0)
			return e;
		/* an unended span (what span: it began and never ended) is a
		 * parent as well: its children name it (section 24.2) */
		while (e && rd_next(&d)) {
			char what[8];

			if (is_type(&d.r, "span") || (k == 1 && is_type(&d.r, "unended") &&
						      jstrb(&d.r, "what", what, sizeof(what)) && !strcmp(what, "span")))
				span_index(r, &d.r);
		}
		rd_close(&d);
	}
	return 0;
}

/* ---- pass 2: spans, GC pauses, the probes stream ------------------------------------ */

/* The name path of a span (its name, and its parent's id when it has one),
 * outermost first, "a>b>c": "?" where a parent is not in the index (past
 * its bound, or not in the stream), cut at RT_DEPTH (and on a cycle). */
static void span_path(struct rt *r, long inc, const char *name, const char *parent, char *out, size_t n, int *depth)
{
	uint32_t chain[RT_DEPTH];
	int k = 0;
	bool unknown = false;
	struct sp *e = parent ? sp_find(r, span_key(inc, parent)) : NULL;
	size_t l = 0;

	chain[k++] = name_num(r, name);
	if (parent && !e)
		unknown = true;
	while (e && k < RT_DEPTH) {
		chain[k++] = e->name;
		if (!e->has_parent)
			break;
		if (!(e = sp_find(r, e->parent)))
			unknown = true;
	}
	out[0] = 0;
	if (unknown)
		l += (size_t)snprintf(out, n, "?>");
	for (int i = k; i-- > 0 && l < n;)
		l += (size_t)snprintf(out + l, n - l, "%s%s", an_ids_name(&r->names, chain[i]), i ? ">" : "");
	*depth = k + (unknown ? 1 : 0);
	if (unknown)
		r->unresolved++;
}

static void span_seen(struct rt *r, const struct pmu_jrec *rec, bool usdt)
{
	char id[128], name[256], par[128], path[2048];
	uint64_t a, z;
	long inc = inc_of(r, rec);
	struct grp *g;
	int depth = 1;

	if (!jstrb(rec, "id", id, sizeof(id)) || !jstrb(rec, "name", name, sizeof(name)) ||
	    !jint(rec, "begin_ns", &a) || !jint(rec, "end_ns", &z) || z < a)
		return;
	if (usdt)
		r->spans_usdt++;
	else
		r->spans_ctl++;
	span_path(r, inc, name, jstrb(rec, "parent", par, sizeof(par)) ? par : NULL, path, sizeof(path), &depth);
	if ((g = gt_get(r, &r->paths, path))) {
		grp_dur(r, g, z - a);
		g->depth = depth;
	}
	if ((g = gt_get(r, &r->bynames, an_ids_name(&r->names, name_num(r, name)))))
		grp_dur(r, g, z - a);
	ph_add(r, inc, z, PH(spans), 1);
}

static void gc_seen(struct rt *r, const struct pmu_jrec *rec)
{
	char inc[64] = "", rtn[32] = "", kind[128] = "", pool[256] = "", key[600];
	uint64_t t, dur;
	struct grp *g;

	if (!jint(rec, "t_ns", &t) || !jint(rec, "dur_ns", &dur))
		return;
	jstrb(rec, "inc", inc, sizeof(inc));
	jstrb(rec, "runtime", rtn, sizeof(rtn));
	jstrb(rec, "kind", kind, sizeof(kind));
	jstrb(rec, "pool", pool, sizeof(pool));
	if (strcmp(kind, "pool"))
		r->gc_records++; /* whole pauses (see below) */
	snprintf(key, sizeof(key), "%s\x1f%s\x1f%s\x1f%s", inc, rtn, kind, pool);
	if ((g = gt_get(r, &r->gcs, key)))
		grp_dur(r, g, dur);
	/* a HotSpot pool's record (kind pool) is a view of a pause its
	 * gc__begin/gc__end record already counts: phases count whole pauses */
	if (strcmp(kind, "pool")) {
		ph_add(r, inc_of(r, rec), t, PH(gc_n), 1);
		ph_add(r, inc_of(r, rec), t, PH(gc_ns), dur);
	}
}

static void jit_seen(struct rt *r, const struct pmu_jrec *rec)
{
	char inc[64] = "", comp[64] = "", key[200];
	uint64_t dur;
	struct grp *g;

	if (!jint(rec, "dur_ns", &dur))
		return;
	jstrb(rec, "inc", inc, sizeof(inc));
	jstrb(rec, "compiler", comp, sizeof(comp));
	snprintf(key, sizeof(key), "%s\x1f%s", inc, comp);
	if ((g = gt_get(r, &r->jits, key)))
		grp_dur(r, g, dur);
}

static void probes_record(struct rt *r, const struct pmu_jrec *rec)
{
	static const char *const lw[] = { "reserve", "open-map", "inc-map" };
	char w[32];

	if (is_type(rec, "span")) {
		span_seen(r, rec, true);
	} else if (is_type(rec, "gc")) {
		gc_seen(r, rec);
	} else if (is_type(rec, "jit")) {
		jit_seen(r, rec);
	} else if (is_type(rec, "config")) {
		json_decref(r->pconfig);
		r->pconfig = jrec_json(rec);
	} else if (is_type(rec, "summary")) {
		json_decref(r->psummary);
		r->psummary = jrec_json(rec);
	} else if (is_type(rec, "probe")) {
		if (r->probes_n++ < RT_PROBES)
			json_array_append_new(r->probes, jrec_json(rec));
	} else if (is_type(rec, "runtime")) {
		if (r->runtimes_n++ < RT_LIST)
			json_array_append_new(r->runtimes, jrec_json(rec));
	} else if (is_type(rec, "unended")) {
		if (r->unended_n++ < RT_LIST)
			json_array_append_new(r->unended, jrec_json(rec));
	} else if (is_type(rec, "allocs")) {
		if (json_array_size(r->allocs) < RT_INCS) {
			json_t *o = jrec_json(rec);

			json_object_set_new(o, "estimate", json_false());
			json_array_append_new(r->allocs, o);
		}
	} else if (is_type(rec, "thread")) {
		r->threads++;
		if (pmu_jrec_get(rec, "ended") && pmu_jrec_get(rec, "ended")->type == PMU_JV_BOOL &&
		    pmu_jrec_get(rec, "ended")->b)
			r->threads_ended++;
	} else if (is_type(rec, "hit")) {
		char pv[128] = "", nm[128] = "", key[300];

		jstrb(rec, "provider", pv, sizeof(pv));
		jstrb(rec, "name", nm, sizeof(nm));
		snprintf(key, sizeof(key), "%s:%s", pv, nm);
		json_object_set_new(r->hits, key, json_integer(json_integer_value(json_object_get(r->hits, key)) + 1));
	} else if (is_type(rec, "loss") && jstrb(rec, "what", w, sizeof(w))) {
		for (int k = 0; k < 3; k++)
			if (!strcmp(w, lw[k]))
				r->lost_probes[k] += jint0(rec, "lost");
	}
}

static int pass_events(struct rt *r)
{
	struct rd d;
	int e = rd_open(&d, r->b, r->rep, "spans.jsonl");

	if (e < 0)
		return e;
	while (e && rd_next(&d))
		if (is_type(&d.r, "span"))
			span_seen(r, &d.r, false);
	rd_close(&d);
	e = rd_open(&d, r->b, r->rep, "collectors/probes/probes.jsonl");
	if (e < 0)
		return e;
	while (e && rd_next(&d))
		probes_record(r, &d.r);
	r->pmalformed = d.malformed;
	rd_close(&d);
	return 0;
}

/* ---- pass 3: the alloc stream ----------------------------------------------------------- */

static void alloc_sample(struct rt *r, const struct pmu_jrec *rec)
{
	char chain[8192], func[32] = "?", key[8300];
	uint64_t t = jint0(rec, "t_ns"), eb = jint0(rec, "est_bytes"), em = jint0(rec, "est_objects_milli");
	long inc = inc_of(r, rec);
	struct grp *g;

	r->samples++;
	r->al_est_bytes += eb;
	r->al_milli += em;
	if (inc < 0)
		r->al_unknown_inc++;
	jstrb(rec, "func", func, sizeof(func));
	if (jstrb(rec, "chain", chain, sizeof(chain)) && chain[0])
		snprintf(key, sizeof(key), "%s", chain);
	else
		snprintf(key, sizeof(key), "(no chain) %s", func);
	if ((g = gt_get(r, &r->chains, key))) {
		if (!g->samples) {
			g->t_first = t;
			g->inc_first = inc >= 0 ? (uint32_t)inc + 1 : 0;
		}
		g->samples++;
		g->est_bytes += eb;
		g->est_milli += em;
	}
	ph_add(r, inc, t, PH(al_bytes), eb);
	ph_add(r, inc, t, PH(al_milli), em);
	ph_add(r, inc, t, PH(al_samples), 1);
}

static int pass_alloc(struct rt *r)
{
	static const char *const lw[] = { "reserve", "pending-map", "live-map", "channel" };
	struct rd d;
	int e = rd_open(&d, r->b, r->rep, "collectors/alloc/alloc.jsonl");
	char w[32];

	if (e < 0)
		return e;
	while (e && rd_next(&d)) {
		const struct pmu_jrec *rec = &d.r;

		if (is_type(rec, "sample")) {
			alloc_sample(r, rec);
		} else if (is_type(rec, "free")) {
			r->frees++;
		} else if (is_type(rec, "inc")) {
			if (r->aincs_n++ < RT_INCS) {
				json_t *o = jrec_json(rec);
				long i = inc_of(r, rec);

				if (i >= 0)
					json_object_set_new(o, "program", pmu_json_text(r->inc_prog[i]));
				json_object_set_new(o, "estimate", json_true());
				json_array_append_new(r->aincs, o);
			}
		} else if (is_type(rec, "config")) {
			json_decref(r->aconfig);
			r->aconfig = jrec_json(rec);
			r->sample_bytes = jint0(rec, "sample_bytes");
		} else if (is_type(rec, "summary")) {
			json_decref(r->asummary);
			r->asummary = jrec_json(rec);
			json_object_set_new(r->asummary, "estimate", json_true());
		} else if (is_type(rec, "loss") && jstrb(rec, "what", w, sizeof(w))) {
			for (int k = 0; k < 4; k++)
				if (!strcmp(w, lw[k]))
					r->al_lost[k] += jint0(rec, "lost");
		}
	}
	r->amalformed = d.malformed;
	rd_close(&d);
	return 0;
}

/* ---- pass 4: CPU samples and system calls per phase -------------------------------------- */

static int pass_other(struct rt *r)
{
	struct rd d;
	int e;

	if (r->have_samples) {
		if ((e = rd_open(&d, r->b, r->rep, "collectors/sampling/samples.jsonl")) < 0)
			return e;
		while (e && rd_next(&d))
			if (is_type(&d.r, "sample"))
				ph_add(r, inc_of(r, &d.r), jint0(&d.r, "t_ns"), PH(cpu), 1);
		rd_close(&d);
	}
	if (r->have_syscalls) {
		if ((e = rd_open(&d, r->b, r->rep, "collectors/syscalls/syscalls.jsonl")) < 0)
			return e;
		while (e && rd_next(&d))
			if (is_type(&d.r, "call")) {
				long inc = inc_of(r, &d.r);

				ph_add(r, inc, jint0(&d.r, "t_ns"), PH(sc_n), 1);
				ph_add(r, inc, jint0(&d.r, "t_ns"), PH(sc_ns), jint0(&d.r, "dur_ns"));
			}
		rd_close(&d);
	}
	return 0;
}

/* ---- symbolization of the allocation chains ----------------------------------------------- */

/* A frame of the allocator itself (the C library's or the interposer's
 * allocation functions), not the allocating site. */
static bool allocator_frame(const struct pmu_frame *f)
{
	static const char *const fn[] = { "malloc", "calloc", "realloc", "free", "aligned_alloc", "posix_memalign",
					  "memalign", "valloc", "pvalloc", "mmap", "__libc_malloc", "__libc_calloc",
					  "__libc_realloc", "__libc_memalign", "_int_malloc", "_int_realloc",
					  "tcache_init", "sysmalloc", NULL };
	const char *o = f->object ? base_of(f->object) : "";

	if (!strncmp(o, "libpmu-alloc", 12) || (!strncmp(o, "libc.so", 7) && f->status != PMU_FRAME_OK))
		return true;
	if (!f->func)
		return false;
	for (int i = 0; fn[i]; i++)
		if (!strcmp(f->func, fn[i]))
			return true;
	return !strncmp(f->func, "__GI_", 5) || !strncmp(f->func, "pmu_alloc_", 10);
}

static void symbolize_chains(struct rt *r)
{
	struct pmu_sym *sym = NULL;

	if (pmu_sym_new(&sym, r->b, r->rep)) {
		snprintf(r->sym_why, sizeof(r->sym_why), "not symbolized: %s", pmu_error_detail());
		return;
	}
	for (size_t i = 0; i < r->chains.keys.n; i++) {
		struct grp *g = &r->chains.v[i];
		const char *ch = an_ids_name(&r->chains.keys, i);
		const char *inc;
		char *cp, *sp = NULL, *t, *out, site[512] = "";
		uint64_t pcs[128];
		size_t n = 0, len = 0, cap = 256;

		if (!strncmp(ch, "(no chain)", 10) || !g->inc_first)
			continue;
		inc = an_ids_name(&r->incs, g->inc_first - 1);
		if (!(cp = strdup(ch)))
			continue;
		for (t = strtok_r(cp, " ", &sp); t && n < 128; t = strtok_r(NULL, " ", &sp))
			pcs[n++] = strtoull(t, NULL, 16);
		free(cp);
		if (!(out = malloc(cap)))
			continue;
		out[0] = 0;
		/* the site: the innermost frame that is not the allocator's */
		for (size_t k = 0; k < n && !site[0]; k++) {
			struct pmu_frame fr[8];
			size_t nf = pmu_sym_frames(sym, inc, g->t_first, pcs[k], k > 0, false, fr, 8);

			if (!nf || allocator_frame(&fr[0]))
				continue;
			if (fr[0].status == PMU_FRAME_OK && fr[nf - 1].func)
				snprintf(site, sizeof(site), "%s", fr[nf - 1].func);
			else if (fr[0].object)
				snprintf(site, sizeof(site), "[unknown] in %s", base_of(fr[0].object));
			else
				snprintf(site, sizeof(site), "0x%" PRIx64, pcs[k]);
		}
		/* outermost first: the chain is innermost first */
		for (size_t k = n; k-- > 0;) {
			struct pmu_frame fr[8];
			size_t nf = pmu_sym_frames(sym, inc, g->t_first, pcs[k], k > 0, false, fr, 8);
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
		g->frames = out;
		g->site = strdup(site[0] ? site : "?");
	}
	pmu_sym_free(sym);
}

/* Chains that name the same frames become one site row. */
static void merge_sites(struct rt *r)
{
	for (size_t i = 0; i < r->chains.keys.n; i++) {
		struct grp *g = &r->chains.v[i], *s;
		const char *ch = an_ids_name(&r->chains.keys, i);
		char key[8300];

		snprintf(key, sizeof(key), "%s", g->frames ? g->frames : ch);
		if (!(s = gt_get(r, &r->sites, key)))
			continue;
		if (!s->samples) {
			s->site = strdup(g->site ? g->site : !strncmp(ch, "(no chain) ", 11) ? ch + 11 : "?");
			s->frames = g->frames ? strdup(g->frames) : NULL;
		}
		s->samples += g->samples;
		s->est_bytes += g->est_bytes;
		s->est_milli += g->est_milli;
	}
}

/* ---- the section ------------------------------------------------------------------------ */

static json_t *absent(json_t *fates, const char *coll, const char *what, const char *remedy)
{
	json_t *f = NULL, *x;
	size_t i;
	char why[600];
	const char *st;

	json_array_foreach(fates, i, x)
		if (!strcmp(js(x, "name"), coll))
			f = x;
	if (!f) {
		snprintf(why, sizeof(why), "not recorded: this recording has no %s collector (recorded before spec "
			 "1.8, or not in mode full)", coll);
		return json_pack("{s:s,s:s,s:s}", "status", "not-recorded", "reason", why, "remedy", remedy);
	}
	st = js(f, "status");
	if (!strcmp(st, "ok") || !strcmp(st, "no-events")) {
		snprintf(why, sizeof(why), "the %s collector ran but wrote no %s", coll, what);
		return json_pack("{s:s,s:s,s:s}", "status", "empty", "reason", why, "remedy", remedy);
	}
	if (!strcmp(st, "not-requested") && !*js(f, "reason")) {
		snprintf(why, sizeof(why), "not recorded: the %s collector was not requested", coll);
		return json_pack("{s:s,s:s,s:s}", "status", "not-requested", "reason", why, "remedy", remedy);
	}
	return json_pack("{s:s,s:s,s:s}", "status", *st ? st : "missing", "reason",
			 *js(f, "reason") ? js(f, "reason") : "the collector left no final status", "remedy",
			 *js(f, "remedy") ? js(f, "remedy") : remedy);
}

static const char *const probes_remedy =
	"record with pmurec --mode full (pmu 1.8 or later) as root or with CAP_BPF+CAP_PERFMON, a program built "
	"with include/pmu/probe.h or a runtime with its own probes (python, hotspot)";
static const char *const alloc_remedy = "record with pmurec --alloc (or --alloc-sample BYTES)";

static json_t *probes_json(struct rt *r, json_t *fates)
{
	json_t *o, *jit;

	if (!r->have_probes)
		return absent(fates, "probes", "probes stream", probes_remedy);
	jit = json_array();
	for (size_t i = 0; i < r->jits.keys.n; i++) {
		const char *k = an_ids_name(&r->jits.keys, i), *sep = strchr(k, '\x1f');
		json_t *row = json_object();

		json_object_set_new(row, "inc", sep ? json_stringn(k, (size_t)(sep - k)) : json_string(k));
		json_object_set_new(row, "compiler", pmu_json_text(sep ? sep + 1 : ""));
		grp_stats(row, &r->jits.v[i], false);
		json_array_append_new(jit, row);
	}
	o = json_pack("{s:s,s:O?,s:O?,s:O,s:I,s:O,s:I,s:O,s:I,s:O,s:O,s:{s:I,s:I},s:{s:I,s:I,s:I},s:I}", "status",
		      "ok", "config", r->pconfig, "summary", r->psummary, "probes", r->probes, "probes_total",
		      (json_int_t)r->probes_n, "runtimes", r->runtimes, "runtimes_total", (json_int_t)r->runtimes_n,
		      "unended", r->unended, "unended_total", (json_int_t)r->unended_n, "raw_hits", r->hits,
		      "allocs_reported", r->allocs, "threads", "records", (json_int_t)r->threads, "ended",
		      (json_int_t)r->threads_ended, "lost", "reserve", (json_int_t)r->lost_probes[0], "open_map",
		      (json_int_t)r->lost_probes[1], "inc_map", (json_int_t)r->lost_probes[2], "malformed_lines",
		      (json_int_t)r->pmalformed);
	if (o)
		json_object_set_new(o, "jit", jit);
	else
		json_decref(jit);
	return o;
}

static json_t *spans_json(struct rt *r)
{
	json_t *o, *paths = json_array(), *names = json_array();
	size_t *v;

	if (!r->spans_usdt && !r->spans_ctl) {
		json_decref(paths);
		json_decref(names);
		return json_pack("{s:s,s:s,s:s}", "status", "none", "reason",
				 r->have_probes || r->have_spans_file
					 ? "the program began and ended no span (neither its probes nor the control "
					   "channel delivered one)"
					 : "not recorded: this recording has neither a probes stream nor spans.jsonl",
				 "remedy", "mark spans with include/pmu/probe.h (PMU_SPAN_BEGIN/END) or include/pmu/mark.h");
	}
	if ((v = sorted(&r->paths, sort_by_total)))
		for (size_t i = 0; i < r->paths.keys.n && i < RT_ROWS; i++) {
			json_t *row = json_pack("{s:o,s:i}", "path", pmu_json_text(an_ids_name(&r->paths.keys, v[i])),
						"depth", r->paths.v[v[i]].depth);

			grp_stats(row, &r->paths.v[v[i]], false);
			json_array_append_new(paths, row);
		}
	free(v);
	if ((v = sorted(&r->bynames, sort_by_total)))
		for (size_t i = 0; i < r->bynames.keys.n && i < RT_ROWS; i++) {
			json_t *row = json_pack("{s:o}", "name", pmu_json_text(an_ids_name(&r->bynames.keys, v[i])));

			grp_stats(row, &r->bynames.v[v[i]], false);
			json_array_append_new(names, row);
		}
	free(v);
	o = json_pack("{s:s,s:{s:I,s:I},s:o,s:I,s:o,s:I,s:I,s:s}", "status", "ok", "sources", "usdt",
		      (json_int_t)r->spans_usdt, "ctl", (json_int_t)r->spans_ctl, "paths", paths, "paths_total",
		      (json_int_t)r->paths.keys.n, "names", names, "names_total", (json_int_t)r->bynames.keys.n,
		      "unresolved_paths", (json_int_t)r->unresolved, "note",
		      "exact: every span's duration end_ns - begin_ns; a path names the span's ancestors outermost "
		      "first (a>b), ? where a parent is not in the stream; percentiles are nearest-rank over every "
		      "duration");
	return o;
}

static json_t *gc_json(struct rt *r, json_t *fates)
{
	json_t *rows = json_array();
	size_t *v;

	if (!r->have_probes) {
		json_t *a = absent(fates, "probes", "probes stream", probes_remedy);

		json_decref(rows);
		return a;
	}
	if (!r->gcs.keys.n) {
		json_decref(rows);
		return json_pack("{s:s,s:s,s:s}", "status", "none", "reason",
				 "no GC pause in the probes stream: the program reported none (pmu:gc_begin/gc_end, "
				 "python:gc__start/gc__done, hotspot:gc__begin/gc__end)",
				 "remedy", "");
	}
	if ((v = sorted(&r->gcs, sort_by_total)))
		for (size_t i = 0; i < r->gcs.keys.n && i < RT_ROWS; i++) {
			const char *k = an_ids_name(&r->gcs.keys, v[i]);
			char f[4][256];
			const char *p = k;
			json_t *row;
			long inc;
			uint64_t wall;

			for (int j = 0; j < 4; j++) {
				const char *e = strchr(p, '\x1f');
				size_t l = e ? (size_t)(e - p) : strlen(p);

				if (l >= sizeof(f[j]))
					l = sizeof(f[j]) - 1;
				memcpy(f[j], p, l);
				f[j][l] = 0;
				p = e ? e + 1 : p + strlen(p);
			}
			inc = an_ids_find(&r->incs, f[0]);
			if (inc >= 0 && ((size_t)inc >= r->icap || !r->inc_prog[inc]))
				inc = -1;
			row = json_pack("{s:s,s:s,s:o}", "inc", f[0], "runtime", f[1], "kind", pmu_json_text(f[2]));
			if (f[3][0])
				json_object_set_new(row, "pool", pmu_json_text(f[3]));
			if (inc >= 0) {
				json_object_set_new(row, "pid", json_integer(r->inc_pid[inc]));
				json_object_set_new(row, "program", pmu_json_text(r->inc_prog[inc]));
			}
			grp_stats(row, &r->gcs.v[v[i]], true);
			wall = inc >= 0 ? inc_wall(r, inc) : 0;
			if (wall) {
				json_object_set_new(row, "inc_wall_ns", json_integer((json_int_t)wall));
				json_object_set_new(row, "share_percent",
						    json_real(100.0 * (double)r->gcs.v[v[i]].total / (double)wall));
			}
			json_array_append_new(rows, row);
		}
	free(v);
	return json_pack("{s:s,s:o,s:I,s:I,s:s}", "status", "ok", "rows", rows, "rows_total",
			 (json_int_t)r->gcs.keys.n, "pauses", (json_int_t)r->gc_records, "note",
			 "exact, from the runtimes' probes: per incarnation x runtime x kind; share is the pauses' total "
			 "over the incarnation's wall time (start to exit, or to the run's end); pauses counts whole "
			 "pauses: a HotSpot pool's row (kind pool) is a view of pauses its minor or full row counts");
}

static json_t *alloc_json(struct rt *r, json_t *fates)
{
	json_t *sites = json_array(), *o;
	size_t *v;

	if (!r->have_alloc) {
		json_decref(sites);
		return absent(fates, "alloc", "alloc stream", alloc_remedy);
	}
	if (r->chains.keys.n)
		symbolize_chains(r);
	merge_sites(r);
	if ((v = sorted(&r->sites, sort_by_est)))
		for (size_t i = 0; i < r->sites.keys.n && i < RT_TOP; i++) {
			struct grp *g = &r->sites.v[v[i]];
			json_t *row = json_pack("{s:o,s:I,s:I,s:I,s:f,s:b}", "site", pmu_json_text(g->site ? g->site : "?"),
						"samples", (json_int_t)g->samples, "est_bytes", (json_int_t)g->est_bytes,
						"est_objects", (json_int_t)((g->est_milli + 500) / 1000), "share_percent",
						r->al_est_bytes ? 100.0 * (double)g->est_bytes / (double)r->al_est_bytes : 0.0,
						"estimate", true);

			if (g->frames)
				json_object_set_new(row, "frames", pmu_json_text(g->frames));
			else
				json_object_set_new(row, "chain", pmu_json_text(an_ids_name(&r->sites.keys, v[i])));
			json_array_append_new(sites, row);
		}
	free(v);
	o = json_pack("{s:s,s:O?,s:O?,s:b,s:I,s:I,s:I,s:I,s:o,s:I,s:O,s:{s:I,s:I,s:I,s:I},s:I,s:I,s:s}", "status",
		      "ok", "config", r->aconfig, "summary", r->asummary, "estimate", true, "samples",
		      (json_int_t)r->samples, "frees", (json_int_t)r->frees, "est_bytes", (json_int_t)r->al_est_bytes,
		      "est_objects", (json_int_t)((r->al_milli + 500) / 1000), "sites", sites, "sites_total",
		      (json_int_t)r->sites.keys.n, "incarnations", r->aincs, "lost", "reserve",
		      (json_int_t)r->al_lost[0], "pending_map", (json_int_t)r->al_lost[1], "live_map",
		      (json_int_t)r->al_lost[2], "channel", (json_int_t)r->al_lost[3], "unknown_incarnation",
		      (json_int_t)r->al_unknown_inc, "malformed_lines", (json_int_t)r->amalformed, "note",
		      "estimates: each sample stands for size / (1 - exp(-size / sample_bytes)) bytes (bundle-spec "
		      "24.3); live at exit is the estimate of the samples not freed when the incarnation ended");
	if (o && r->sym_why[0])
		json_object_set_new(o, "chains_symbolized", json_string(r->sym_why));
	return o;
}

static json_t *phase_list(struct rt *r, struct rt_phase *phs, int n, uint64_t origin, json_t *fates)
{
	json_t *arr = json_array();

	for (int i = 0; arr && i < n; i++) {
		struct rt_phase *p = &phs[i];
		json_t *ph = json_pack("{s:s,s:I,s:I,s:I,s:I}", "name", p->name, "from_ns",
				       (json_int_t)(p->from - origin), "to_ns", (json_int_t)(p->to - origin), "wall_ns",
				       (json_int_t)(p->to - p->from), "spans_completed",
				       (json_int_t)p->spans);

		if (r->have_probes)
			json_object_set_new(ph, "gc", json_pack("{s:s,s:I,s:I}", "status", "ok", "pauses",
								(json_int_t)p->gc_n, "total_ns", (json_int_t)p->gc_ns));
		else
			json_object_set_new(ph, "gc", absent(fates, "probes", "probes stream", probes_remedy));
		if (r->have_alloc)
			json_object_set_new(ph, "alloc", json_pack("{s:s,s:I,s:I,s:I,s:b}", "status", "ok", "samples",
								   (json_int_t)p->al_samples, "est_bytes",
								   (json_int_t)p->al_bytes, "est_objects",
								   (json_int_t)((p->al_milli + 500) / 1000),
								   "estimate", true));
		else
			json_object_set_new(ph, "alloc", absent(fates, "alloc", "alloc stream", alloc_remedy));
		if (r->have_samples)
			json_object_set_new(ph, "cpu_samples", json_pack("{s:s,s:I}", "status", "ok", "samples",
									 (json_int_t)p->cpu));
		else
			json_object_set_new(ph, "cpu_samples",
					    absent(fates, "sampling", "samples stream",
						   "record with pmurec --mode full (the sampling collector)"));
		if (r->have_syscalls)
			json_object_set_new(ph, "syscalls", json_pack("{s:s,s:I,s:I,s:s}", "status", "ok", "calls",
								      (json_int_t)p->sc_n, "time_ns", (json_int_t)p->sc_ns,
								      "scope", "the raw call records (the I/O family); "
								      "syscall-stats has every call but no time"));
		else
			json_object_set_new(ph, "syscalls", absent(fates, "syscalls", "syscalls stream",
								   "record with pmurec --mode full (the syscalls collector)"));
		json_array_append_new(arr, ph);
	}
	return arr;
}

static json_t *phases_json(struct rt *r, json_t *fates)
{
	json_t *arr = phase_list(r, r->ph, r->nph, r->origin, fates), *o, *incs = json_array();
	char note[600];

	for (int k = 0; k < r->nps && incs; k++) {
		struct phset *ps = &r->ps[k];
		json_t *x = json_pack("{s:s,s:I,s:o,s:o}", "inc", an_ids_name(&r->incs, (size_t)ps->inc), "pid",
				      (json_int_t)r->inc_pid[ps->inc], "program", pmu_json_text(r->inc_prog[ps->inc]),
				      "phases", phase_list(r, ps->ph, ps->nph, r->inc_start[ps->inc], fates));

		if (x && ps->s)
			json_object_set_new(x, "startup_end_source", pmu_json_text(ps->src));
		json_array_append_new(incs, x);
	}
	if (r->nph == 1)
		snprintf(note, sizeof(note), "no startup-end, warmup-end or pmurec:delay-end mark: the run is one phase "
			 "(mark it with PMU_MARK(\"startup-end\") / PMU_MARK(\"warmup-end\"), or pmurec --delay)");
	else
		snprintf(note, sizeof(note), "cut at the first %s%s%s in the cohort; times are from the root's start; "
			 "spans, GC pauses (whole pauses: a HotSpot pool's record is a view of one), allocations and calls are counted in the phase where they ended",
			 r->cut_startup ? "startup-end" : r->cut_delay ? "pmurec:delay-end" : "",
			 r->cut_warmup && (r->cut_startup || r->cut_delay) ? " and warmup-end" : "",
			 r->cut_warmup && !(r->cut_startup || r->cut_delay) ? "warmup-end" : "");
	o = json_pack("{s:o,s:o,s:I,s:s,s:o,s:I}", "phases", arr, "marks", json_incref(r->marks), "marks_total",
		      (json_int_t)r->marks_n, "note", note, "incarnations", incs, "incarnations_omitted",
		      (json_int_t)r->ps_over);
	if (o && r->cut_startup_inc[0])
		json_object_set_new(o, "startup_end_inc", json_string(r->cut_startup_inc));
	return o;
}

static void rt_free(struct rt *r)
{
	for (size_t i = 0; i < r->icap; i++)
		free(r->inc_prog[i]);
	free(r->inc_prog);
	free(r->inc_pid);
	free(r->inc_start);
	free(r->inc_end);
	an_ids_release(&r->incs);
	an_ids_release(&r->names);
	free(r->sp);
	gt_release(&r->paths);
	gt_release(&r->bynames);
	gt_release(&r->gcs);
	gt_release(&r->jits);
	gt_release(&r->chains);
	gt_release(&r->sites);
	json_decref(r->marks);
	json_decref(r->pconfig);
	json_decref(r->psummary);
	json_decref(r->probes);
	json_decref(r->runtimes);
	json_decref(r->unended);
	json_decref(r->allocs);
	json_decref(r->hits);
	json_decref(r->aconfig);
	json_decref(r->asummary);
	json_decref(r->aincs);
}

json_t *an_runtime_load(const struct pmu_bundle *b, int rep, json_t *fates)
{
	struct rt r;
	json_t *j = NULL, *run = NULL;
	int err = 0;

	memset(&r, 0, sizeof(r));
	r.b = b;
	r.rep = rep;
	r.root = -1;
	an_ids_init(&r.incs);
	an_ids_init(&r.names);
	gt_init(&r.paths);
	gt_init(&r.bynames);
	gt_init(&r.gcs);
	gt_init(&r.jits);
	gt_init(&r.chains);
	gt_init(&r.sites);
	r.marks = json_array();
	r.probes = json_array();
	r.runtimes = json_array();
	r.unended = json_array();
	r.allocs = json_array();
	r.hits = json_object();
	r.aincs = json_array();
	r.have_probes = file_exists(b, rep, "collectors/probes/probes.jsonl");
	r.have_alloc = file_exists(b, rep, "collectors/alloc/alloc.jsonl");
	r.have_spans_file = file_exists(b, rep, "spans.jsonl");
	r.have_samples = file_exists(b, rep, "collectors/sampling/samples.jsonl");
	r.have_syscalls = file_exists(b, rep, "collectors/syscalls/syscalls.jsonl");
	if (!r.marks || !r.probes || !r.runtimes || !r.unended || !r.allocs || !r.hits || !r.aincs)
		goto nomem;
	{
		char doc[64];

		if (rep <= 1)
			snprintf(doc, sizeof(doc), "run.json");
		else
			snprintf(doc, sizeof(doc), "repeats/%d/run.json", rep);
		if ((err = pmu_bundle_read_doc(b, doc, &run)))
			goto out;
		r.run_start = (uint64_t)ji(run, "start_ns");
		r.run_end = (uint64_t)ji(run, "end_ns");
	}
	if ((err = pmu_bundle_cohort_each(b, rep, cohort_inc, &r, NULL)))
		goto out;
	r.origin = r.root >= 0 ? r.inc_start[r.root] : r.run_start;
	r.end = r.root >= 0 && r.inc_end[r.root] ? r.inc_end[r.root] : r.run_end;
	if (r.end < r.origin)
		r.end = r.origin;
	if ((err = pass_marks(&r)))
		goto out;
	make_phases(&r);
	if ((err = pass_index(&r)) || (err = pass_events(&r)) || (err = pass_alloc(&r)) || (err = pass_other(&r)))
		goto out;
	if (r.nomem)
		goto nomem;
	j = json_pack("{s:s,s:o,s:o,s:o,s:o,s:o}", "status",
		      r.have_probes || r.have_alloc || r.spans_ctl || r.marks_n ? "ok" : "absent", "probes",
		      probes_json(&r, fates), "phases", phases_json(&r, fates), "spans", spans_json(&r), "gc",
		      gc_json(&r, fates), "alloc", alloc_json(&r, fates));
	if (j)
		json_object_set_new(j, "table_overflow",
				    json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "spans_indexed", (json_int_t)r.sp_over, "paths",
					      (json_int_t)r.paths.over, "names", (json_int_t)r.names_over, "gc",
					      (json_int_t)r.gcs.over, "chains", (json_int_t)r.chains.over, "sites",
					      (json_int_t)r.sites.over));
	goto out;
nomem:
	err = pmu_error(PMU_ERR_NOMEM, "out of memory");
out:
	if (err && !j)
		j = json_pack("{s:s,s:o,s:s}", "status", "failed", "reason", pmu_json_text(pmu_error_detail()), "remedy",
			      "pmuvalidate the bundle; analyze it with --allow-invalid to see the rest");
	json_decref(run);
	rt_free(&r);
	return j;
}

/* ---- the Chrome trace ------------------------------------------------------------------ */

int an_runtime_trace(const struct pmu_bundle *b, int rep, an_rt_emit_fn emit, void *ctx)
{
	struct rd d;
	int e = rd_open(&d, b, rep, "collectors/probes/probes.jsonl"), err = 0;

	if (e <= 0)
		return e;
	while (!err && rd_next(&d)) {
		const struct pmu_jrec *rec = &d.r;
		char name[300], inc[64] = "", id[128], par[128], kind[128], rtn[32], pool[256];
		uint64_t pid, tid, a, z, et;
		json_t *args;

		if (!jint(rec, "pid", &pid) || !jint(rec, "tid", &tid))
			continue;
		jstrb(rec, "inc", inc, sizeof(inc));
		if (is_type(rec, "span") && jstrb(rec, "name", name, sizeof(name)) && jstrb(rec, "id", id, sizeof(id)) &&
		    jint(rec, "begin_ns", &a) && jint(rec, "end_ns", &z)) {
			args = json_pack("{s:s,s:s,s:s}", "id", id, "inc", inc, "via", "usdt");
			if (args && jstrb(rec, "parent", par, sizeof(par)))
				json_object_set_new(args, "parent", json_string(par));
			if (args && jint(rec, "end_tid", &et))
				json_object_set_new(args, "end_tid", json_integer((json_int_t)et));
			if (!args)
				err = pmu_error(PMU_ERR_NOMEM, "out of memory");
			else
				err = emit(ctx, 'X', name, "span", (int64_t)pid, (int64_t)tid, (int64_t)a, (int64_t)z, args);
		} else if (is_type(rec, "gc") && jint(rec, "begin_ns", &a) && jint(rec, "t_ns", &z)) {
			kind[0] = rtn[0] = 0;
			jstrb(rec, "kind", kind, sizeof(kind));
			jstrb(rec, "runtime", rtn, sizeof(rtn));
			snprintf(name, sizeof(name), "GC %s %s", rtn, kind);
			args = json_pack("{s:s,s:s,s:o,s:I}", "inc", inc, "runtime", rtn, "kind", pmu_json_text(kind),
					 "dur_ns", (json_int_t)(z - a));
			if (args && jstrb(rec, "pool", pool, sizeof(pool)))
				json_object_set_new(args, "pool", pmu_json_text(pool));
			err = args ? emit(ctx, 'X', name, "gc", (int64_t)pid, (int64_t)tid, (int64_t)a, (int64_t)z, args)
				   : pmu_error(PMU_ERR_NOMEM, "out of memory");
		} else if (is_type(rec, "jit") && jint(rec, "begin_ns", &a) && jint(rec, "t_ns", &z) &&
			   jstrb(rec, "method", name, sizeof(name))) {
			args = json_pack("{s:s}", "inc", inc);
			err = args ? emit(ctx, 'X', name, "jit", (int64_t)pid, (int64_t)tid, (int64_t)a, (int64_t)z, args)
				   : pmu_error(PMU_ERR_NOMEM, "out of memory");
		} else if (is_type(rec, "mark") && jstrb(rec, "name", name, sizeof(name)) && jint(rec, "t_ns", &a)) {
			char src[128] = "";

			jstrb(rec, "source", src, sizeof(src));
			args = json_pack("{s:s,s:s,s:s}", "inc", inc, "source", src, "via", "usdt");
			err = args ? emit(ctx, 'i', name, "mark", (int64_t)pid, (int64_t)tid, (int64_t)a, (int64_t)a, args)
				   : pmu_error(PMU_ERR_NOMEM, "out of memory");
		}
	}
	rd_close(&d);
	return err;
}

/* ---- text ------------------------------------------------------------------------------ */

static void absent_text(FILE *f, const char *what, json_t *s)
{
	fprintf(f, "  %s: %s: ", what, js(s, "status"));
	put_safe(f, js(s, "reason"));
	if (*js(s, "remedy")) {
		fputs("; remedy: ", f);
		put_safe(f, js(s, "remedy"));
	}
	fputc('\n', f);
}

static bool is_ok(json_t *o)
{
	return !strcmp(js(o, "status"), "ok");
}

static void pct_text(json_t *x, const char *k, char *out, size_t n)
{
	if (json_object_get(x, k))
		dur_text((double)ji(x, k), out, n);
	else
		snprintf(out, n, "-");
}

/* One table row per phase of arr (the cohort's or an incarnation's). */
static void phase_rows(FILE *f, json_t *arr, const char *indent)
{
	json_t *x;
	size_t i;
	char a[32], b[32], c[32], d[32], e[32];

	fprintf(f, "%s%-8s %10s %10s %8s %18s %14s %11s %18s\n", indent, "phase", "from", "wall", "spans", "GC pauses",
		"alloc~", "CPU samples", "syscall time");
	json_array_foreach(arr, i, x) {
		json_t *pg = json_object_get(x, "gc"), *pa = json_object_get(x, "alloc"),
		       *pc = json_object_get(x, "cpu_samples"), *ps = json_object_get(x, "syscalls");
		char gcs[48], als[48], cps[32], scs[48];

		dur_text((double)ji(x, "from_ns"), a, sizeof(a));
		dur_text((double)ji(x, "wall_ns"), b, sizeof(b));
		if (is_ok(pg)) {
			dur_text((double)ji(pg, "total_ns"), c, sizeof(c));
			snprintf(gcs, sizeof(gcs), "%lld, %s", (long long)ji(pg, "pauses"), c);
		} else {
			snprintf(gcs, sizeof(gcs), "not recorded");
		}
		if (is_ok(pa)) {
			bytes_text((double)ji(pa, "est_bytes"), d, sizeof(d));
			snprintf(als, sizeof(als), "~%s", d);
		} else {
			snprintf(als, sizeof(als), "not recorded");
		}
		if (is_ok(pc))
			snprintf(cps, sizeof(cps), "%lld", (long long)ji(pc, "samples"));
		else
			snprintf(cps, sizeof(cps), "not recorded");
		if (is_ok(ps)) {
			dur_text((double)ji(ps, "time_ns"), e, sizeof(e));
			snprintf(scs, sizeof(scs), "%s (%lld)", e, (long long)ji(ps, "calls"));
		} else {
			snprintf(scs, sizeof(scs), "not recorded");
		}
		fprintf(f, "%s%-8s %10s %10s %8lld %18s %14s %11s %18s\n", indent, js(x, "name"), a, b,
			(long long)ji(x, "spans_completed"), gcs, als, cps, scs);
	}
}

void an_runtime_print(json_t *rt, FILE *f)
{
	json_t *ph = json_object_get(rt, "phases"), *sp = json_object_get(rt, "spans"), *gc = json_object_get(rt, "gc"),
	       *al = json_object_get(rt, "alloc"), *pr = json_object_get(rt, "probes"), *x;
	size_t i;
	char a[32], b[32], c[32], d[32], e[32], g[32];

	if (!rt)
		return;
	fputs("\nruntime evidence (probes, spans, GC pauses, allocations)\n", f);
	if (!strcmp(js(rt, "status"), "failed")) {
		absent_text(f, "runtime evidence", rt);
		return;
	}
	if (!is_ok(pr))
		absent_text(f, "probes", pr);
	else {
		json_t *s = json_object_get(pr, "summary");

		fprintf(f, "  probes: %lld listed, %lld attached, %lld hits; %lld spans, %lld marks, %lld GC pauses; "
			   "unmatched %lld, unattributed %lld, lost %lld\n",
			(long long)ji(s, "probes"), (long long)ji(s, "attached"), (long long)ji(s, "hits"),
			(long long)ji(s, "spans"), (long long)ji(s, "marks"), (long long)ji(s, "gcs"),
			(long long)ji(s, "unmatched"), (long long)ji(s, "unattributed"), (long long)ji(s, "lost"));
		json_array_foreach(json_object_get(pr, "probes"), i, x)
			if (!json_is_true(json_object_get(x, "attached"))) {
				fprintf(f, "  probe %s:%s not attached: ", js(x, "provider"), js(x, "name"));
				put_safe(f, js(x, "reason"));
				fputc('\n', f);
			}
	}
	fprintf(f, "\nphases (%s)\n", js(ph, "note"));
	phase_rows(f, json_object_get(ph, "phases"), "  ");
	json_array_foreach(json_object_get(ph, "incarnations"), i, x) {
		fputs("  ", f);
		put_safe(f, js(x, "program"));
		fprintf(f, " (pid %lld, %s), its own phases from its start", (long long)ji(x, "pid"), js(x, "inc"));
		if (json_object_get(x, "startup_end_source")) {
			fputs(" (startup-end from ", f);
			put_safe(f, js(x, "startup_end_source"));
			fputc(')', f);
		}
		fputs(":\n", f);
		phase_rows(f, json_object_get(x, "phases"), "    ");
	}
	{
		json_t *p0 = json_array_get(json_object_get(ph, "phases"), 0);
		const char *miss[] = { "gc", "alloc", "cpu_samples", "syscalls" };

		for (int k = 0; k < 4 && p0; k++)
			if (!is_ok(json_object_get(p0, miss[k])) && strcmp(miss[k], "gc"))
				absent_text(f, miss[k], json_object_get(p0, miss[k]));
	}
	if (!is_ok(sp)) {
		fputs("\nspans: ", f);
		put_safe(f, js(sp, "reason"));
		fputc('\n', f);
	} else {
		fprintf(f, "\nspan tree (exact; %lld via probes, %lld via the control channel)\n",
			(long long)ji(json_object_get(sp, "sources"), "usdt"),
			(long long)ji(json_object_get(sp, "sources"), "ctl"));
		fprintf(f, "  %-32s %8s %10s %10s %10s %10s\n", "path", "count", "total", "p50", "p90", "max");
		json_array_foreach(json_object_get(sp, "paths"), i, x) {
			if (i >= RT_TOP)
				break;
			dur_text((double)ji(x, "total_ns"), a, sizeof(a));
			pct_text(x, "p50_ns", b, sizeof(b));
			pct_text(x, "p90_ns", c, sizeof(c));
			dur_text((double)ji(x, "max_ns"), d, sizeof(d));
			fprintf(f, "  %*s", (int)(2 * (ji(x, "depth") > 1 ? ji(x, "depth") - 1 : 0)), "");
			put_safe(f, js(x, "path"));
			fprintf(f, "%*s %8lld %10s %10s %10s %10s\n",
				(int)(strlen(js(x, "path")) + 2 * (ji(x, "depth") > 1 ? ji(x, "depth") - 1 : 0) < 32
					      ? 32 - strlen(js(x, "path")) - 2 * (ji(x, "depth") > 1 ? ji(x, "depth") - 1 : 0)
					      : 0),
				"", (long long)ji(x, "count"), a, b, c, d);
		}
		if (ji(json_object_get(rt, "table_overflow"), "spans_indexed"))
			fprintf(f, "  (%lld spans past the index's bound of %u: their ancestors are shown as ?)\n",
				(long long)ji(json_object_get(rt, "table_overflow"), "spans_indexed"), RT_SPANS_MAX);
		fputs("  by name:", f);
		json_array_foreach(json_object_get(sp, "names"), i, x) {
			if (i >= 10)
				break;
			dur_text((double)ji(x, "total_ns"), a, sizeof(a));
			pct_text(x, "p50_ns", b, sizeof(b));
			fprintf(f, "%s ", i ? "," : "");
			put_safe(f, js(x, "name"));
			fprintf(f, " x%lld %s (p50 %s)", (long long)ji(x, "count"), a, b);
		}
		fputc('\n', f);
	}
	if (!is_ok(gc)) {
		fputs("\nGC pauses: ", f);
		if (strcmp(js(gc, "status"), "none")) {
			put_safe(f, js(gc, "status"));
			fputs(": ", f);
		}
		put_safe(f, js(gc, "reason"));
		if (*js(gc, "remedy")) {
			fputs("; remedy: ", f);
			put_safe(f, js(gc, "remedy"));
		}
		fputc('\n', f);
	} else {
		fputs("\nGC pauses (exact, from the runtimes' probes; share of the incarnation's wall time)\n", f);
		fprintf(f, "  %-22s %-8s %-16s %6s %10s %10s %10s %10s %10s %7s\n", "program (pid)", "runtime", "kind",
			"count", "total", "p50", "p90", "p99", "max", "share");
		json_array_foreach(json_object_get(gc, "rows"), i, x) {
			char who[300], kind[300];

			if (i >= RT_TOP)
				break;
			snprintf(who, sizeof(who), "%s (%lld)", json_object_get(x, "program") ? js(x, "program") : js(x, "inc"),
				 (long long)ji(x, "pid"));
			snprintf(kind, sizeof(kind), "%s%s%s", js(x, "kind"), json_object_get(x, "pool") ? " " : "",
				 js(x, "pool"));
			dur_text((double)ji(x, "total_ns"), a, sizeof(a));
			pct_text(x, "p50_ns", b, sizeof(b));
			pct_text(x, "p90_ns", c, sizeof(c));
			pct_text(x, "p99_ns", d, sizeof(d));
			dur_text((double)ji(x, "max_ns"), e, sizeof(e));
			if (json_object_get(x, "share_percent"))
				snprintf(g, sizeof(g), "%.2f%%", json_real_value(json_object_get(x, "share_percent")));
			else
				snprintf(g, sizeof(g), "-");
			fputs("  ", f);
			put_safe(f, who);
			fprintf(f, "%*s %-8s ", (int)(strlen(who) < 22 ? 22 - strlen(who) : 0), "", js(x, "runtime"));
			put_safe(f, kind);
			fprintf(f, "%*s %6lld %10s %10s %10s %10s %10s %7s\n",
				(int)(strlen(kind) < 16 ? 16 - strlen(kind) : 0), "", (long long)ji(x, "count"), a, b, c,
				d, e, g);
		}
	}
	if (!is_ok(al)) {
		fputs("\nallocations: ", f);
		put_safe(f, js(al, "status"));
		fputs(": ", f);
		put_safe(f, js(al, "reason"));
		if (*js(al, "remedy")) {
			fputs("; remedy: ", f);
			put_safe(f, js(al, "remedy"));
		}
		fputc('\n', f);
	} else {
		json_t *cf = json_object_get(al, "config");

		bytes_text((double)ji(cf, "sample_bytes"), a, sizeof(a));
		bytes_text((double)ji(al, "est_bytes"), b, sizeof(b));
		fprintf(f, "\nallocation hot sites (~ estimates from %lld samples, one per ~%s allocated, via %s): "
			   "~%s in ~%lld allocations\n",
			(long long)ji(al, "samples"), a, js(cf, "via"), b, (long long)ji(al, "est_objects"));
		fprintf(f, "  %12s %12s %7s  %s\n", "bytes~", "objects~", "share~", "site (call chain, outermost first)");
		json_array_foreach(json_object_get(al, "sites"), i, x) {
			if (i >= 10)
				break;
			bytes_text((double)ji(x, "est_bytes"), a, sizeof(a));
			fprintf(f, "  %11s~ %11lld~ %6.1f%%~ ", a, (long long)ji(x, "est_objects"),
				json_real_value(json_object_get(x, "share_percent")));
			put_safe(f, js(x, "site"));
			fputs(" (", f);
			put_safe(f, json_object_get(x, "frames") ? js(x, "frames") : js(x, "chain"));
			fputs(")\n", f);
		}
		{
			json_t *l = json_object_get(al, "lost");
			json_int_t n = ji(l, "reserve") + ji(l, "pending_map") + ji(l, "live_map") + ji(l, "channel");

			if (n)
				fprintf(f, "  lost: %lld samples (ring %lld, pending %lld, live map %lld, channel %lld): the "
					   "estimates are lower bounds\n", (long long)n, (long long)ji(l, "reserve"),
					(long long)ji(l, "pending_map"), (long long)ji(l, "live_map"), (long long)ji(l, "channel"));
		}
		if (json_object_get(al, "chains_symbolized")) {
			fputs("  chains: ", f);
			put_safe(f, js(al, "chains_symbolized"));
			fputc('\n', f);
		}
		json_array_foreach(json_object_get(al, "incarnations"), i, x) {
			if (i >= 5)
				break;
			bytes_text((double)ji(x, "live_est_bytes"), a, sizeof(a));
			bytes_text((double)ji(x, "est_bytes"), b, sizeof(b));
			fputs("  ", f);
			put_safe(f, json_object_get(x, "program") ? js(x, "program") : js(x, "inc"));
			fprintf(f, " (pid %lld, %s): ~%s allocated, live at %s ~%s (estimate, %lld samples not freed)",
				(long long)ji(x, "pid"), js(x, "inc"), b,
				json_is_true(json_object_get(x, "exited")) ? "exit" : "the stop", a,
				(long long)ji(x, "live_samples"));
			if (ji(x, "dropped"))
				fprintf(f, "; %lld samples dropped, in no estimate", (long long)ji(x, "dropped"));
			fputc('\n', f);
		}
	}
}

/* ---- CSV --------------------------------------------------------------------------------- */

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

static void csv_opt(FILE *f, json_t *x, const char *k)
{
	if (json_object_get(x, k))
		fprintf(f, "%lld", (long long)ji(x, k));
}

void an_runtime_csv(json_t *rt, FILE *f)
{
	json_t *ph = json_object_get(rt, "phases"), *sp = json_object_get(rt, "spans"), *gc = json_object_get(rt, "gc"),
	       *al = json_object_get(rt, "alloc"), *x;
	size_t i;

	if (!rt)
		return;
	fputs("\nsection,phase,from_ns,to_ns,wall_ns,spans_completed,gc_pauses,gc_ns,alloc_est_bytes_estimate,"
	      "cpu_samples,syscall_calls,syscall_ns\n", f);
	json_array_foreach(json_object_get(ph, "phases"), i, x) {
		json_t *pg = json_object_get(x, "gc"), *pa = json_object_get(x, "alloc"),
		       *pc = json_object_get(x, "cpu_samples"), *ps = json_object_get(x, "syscalls");

		fprintf(f, "phase,%s,%lld,%lld,%lld,%lld,", js(x, "name"), (long long)ji(x, "from_ns"),
			(long long)ji(x, "to_ns"), (long long)ji(x, "wall_ns"), (long long)ji(x, "spans_completed"));
		if (is_ok(pg))
			fprintf(f, "%lld,%lld,", (long long)ji(pg, "pauses"), (long long)ji(pg, "total_ns"));
		else
			fputs(",,", f);
		if (is_ok(pa))
			fprintf(f, "%lld", (long long)ji(pa, "est_bytes"));
		fputc(',', f);
		if (is_ok(pc))
			fprintf(f, "%lld", (long long)ji(pc, "samples"));
		fputc(',', f);
		if (is_ok(ps))
			fprintf(f, "%lld,%lld", (long long)ji(ps, "calls"), (long long)ji(ps, "time_ns"));
		else
			fputc(',', f);
		fputc('\n', f);
	}
	fputs("\nsection,key,count,total_ns,min_ns,p50_ns,p90_ns,max_ns\n", f);
	if (!is_ok(sp)) {
		fputs("span_status,", f);
		csv_field(f, js(sp, "reason"));
		fputc('\n', f);
	}
	for (int pass = 0; pass < 2; pass++)
		json_array_foreach(json_object_get(sp, pass ? "names" : "paths"), i, x) {
			fputs(pass ? "span_name," : "span_path,", f);
			csv_field(f, js(x, pass ? "name" : "path"));
			fprintf(f, ",%lld,%lld,%lld,", (long long)ji(x, "count"), (long long)ji(x, "total_ns"),
				(long long)ji(x, "min_ns"));
			csv_opt(f, x, "p50_ns");
			fputc(',', f);
			csv_opt(f, x, "p90_ns");
			fprintf(f, ",%lld\n", (long long)ji(x, "max_ns"));
		}
	fputs("\nsection,program,inc,pid,runtime,kind,pool,count,total_ns,min_ns,p50_ns,p90_ns,p99_ns,max_ns,"
	      "share_percent\n", f);
	if (!is_ok(gc)) {
		fputs("gc_status,", f);
		csv_field(f, js(gc, "reason"));
		fputc('\n', f);
	}
	json_array_foreach(json_object_get(gc, "rows"), i, x) {
		fputs("gc,", f);
		csv_field(f, js(x, "program"));
		fprintf(f, ",%s,", js(x, "inc"));
		csv_opt(f, x, "pid");
		fprintf(f, ",%s,", js(x, "runtime"));
		csv_field(f, js(x, "kind"));
		fputc(',', f);
		csv_field(f, js(x, "pool"));
		fprintf(f, ",%lld,%lld,%lld,", (long long)ji(x, "count"), (long long)ji(x, "total_ns"),
			(long long)ji(x, "min_ns"));
		csv_opt(f, x, "p50_ns");
		fputc(',', f);
		csv_opt(f, x, "p90_ns");
		fputc(',', f);
		csv_opt(f, x, "p99_ns");
		fprintf(f, ",%lld,", (long long)ji(x, "max_ns"));
		if (json_object_get(x, "share_percent"))
			fprintf(f, "%.4f", json_real_value(json_object_get(x, "share_percent")));
		fputc('\n', f);
	}
	fputs("\nsection,site,frames,samples,est_bytes_estimate,est_objects_estimate,share_percent_estimate\n", f);
	if (!is_ok(al)) {
		fputs("alloc_status,", f);
		csv_field(f, js(al, "reason"));
		fputc('\n', f);
	}
	json_array_foreach(json_object_get(al, "sites"), i, x) {
		fputs("alloc_site,", f);
		csv_field(f, js(x, "site"));
		fputc(',', f);
		csv_field(f, json_object_get(x, "frames") ? js(x, "frames") : js(x, "chain"));
		fprintf(f, ",%lld,%lld,%lld,%.4f\n", (long long)ji(x, "samples"), (long long)ji(x, "est_bytes"),
			(long long)ji(x, "est_objects"), json_real_value(json_object_get(x, "share_percent")));
	}
	fputs("\nsection,program,inc,pid,exited,samples,est_bytes_estimate,live_samples,live_est_bytes_estimate,"
	      "dropped\n", f);
	json_array_foreach(json_object_get(al, "incarnations"), i, x) {
		fputs("alloc_inc,", f);
		csv_field(f, js(x, "program"));
		fprintf(f, ",%s,%lld,%s,%lld,%lld,%lld,%lld,%lld\n", js(x, "inc"), (long long)ji(x, "pid"),
			json_is_true(json_object_get(x, "exited")) ? "true" : "false", (long long)ji(x, "samples"),
			(long long)ji(x, "est_bytes"), (long long)ji(x, "live_samples"), (long long)ji(x, "live_est_bytes"),
			(long long)ji(x, "dropped"));
	}
}

/* ---- HTML --------------------------------------------------------------------------------- */

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

static void html_absent(FILE *f, const char *what, json_t *s)
{
	fprintf(f, "<p class=\"mut\">%s: ", what);
	hesc(f, js(s, "status"));
	fputs(": ", f);
	hesc(f, js(s, "reason"));
	if (*js(s, "remedy")) {
		fputs("; remedy: ", f);
		hesc(f, js(s, "remedy"));
	}
	fputs("</p>\n", f);
}

static void html_pct(FILE *f, json_t *x, const char *k)
{
	char a[32];

	pct_text(x, k, a, sizeof(a));
	fprintf(f, "<td class=\"num\">%s</td>", a);
}

void an_runtime_html(json_t *rt, FILE *f)
{
	json_t *ph = json_object_get(rt, "phases"), *sp = json_object_get(rt, "spans"), *gc = json_object_get(rt, "gc"),
	       *al = json_object_get(rt, "alloc"), *x;
	size_t i;
	char a[32], b[32], c[32];

	if (!rt)
		return;
	fputs("<section id=\"runtime\">\n<h2>Runtime evidence: phases, spans, GC pauses, allocations</h2>\n", f);
	if (!strcmp(js(rt, "status"), "failed")) {
		html_absent(f, "Runtime evidence", rt);
		fputs("</section>\n", f);
		return;
	}
	fputs("<h3>Phases</h3>\n<p class=\"mut\">", f);
	hesc(f, js(ph, "note"));
	fputs("</p>\n<div class=\"scroll\"><table><tr><th>phase</th><th class=\"num\">from</th><th class=\"num\">wall"
	      "</th><th class=\"num\">spans</th><th class=\"num\">GC pauses</th><th class=\"num\">GC time</th>"
	      "<th class=\"num\">allocated (estimate)</th><th class=\"num\">CPU samples</th>"
	      "<th class=\"num\">syscall time</th></tr>\n", f);
	json_array_foreach(json_object_get(ph, "phases"), i, x) {
		json_t *pg = json_object_get(x, "gc"), *pa = json_object_get(x, "alloc"),
		       *pc = json_object_get(x, "cpu_samples"), *ps = json_object_get(x, "syscalls");

		dur_text((double)ji(x, "from_ns"), a, sizeof(a));
		dur_text((double)ji(x, "wall_ns"), b, sizeof(b));
		fprintf(f, "<tr><td>%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%lld</td>",
			js(x, "name"), a, b, (long long)ji(x, "spans_completed"));
		if (is_ok(pg)) {
			dur_text((double)ji(pg, "total_ns"), c, sizeof(c));
			fprintf(f, "<td class=\"num\">%lld</td><td class=\"num\">%s</td>", (long long)ji(pg, "pauses"), c);
		} else {
			fputs("<td class=\"num\">not recorded</td><td class=\"num\">not recorded</td>", f);
		}
		if (is_ok(pa)) {
			bytes_text((double)ji(pa, "est_bytes"), c, sizeof(c));
			fprintf(f, "<td class=\"num\">~%s</td>", c);
		} else {
			fputs("<td class=\"num\">not recorded</td>", f);
		}
		if (is_ok(pc))
			fprintf(f, "<td class=\"num\">%lld</td>", (long long)ji(pc, "samples"));
		else
			fputs("<td class=\"num\">not recorded</td>", f);
		if (is_ok(ps)) {
			dur_text((double)ji(ps, "time_ns"), c, sizeof(c));
			fprintf(f, "<td class=\"num\">%s</td>", c);
		} else {
			fputs("<td class=\"num\">not recorded</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table></div>\n<h3>Span tree</h3>\n", f);
	if (!is_ok(sp)) {
		html_absent(f, "Spans", sp);
	} else {
		fputs("<p>Exact durations by name path (outermost first).</p>\n<div class=\"scroll\"><table><tr><th>path"
		      "</th><th class=\"num\">count</th><th class=\"num\">total</th><th class=\"num\">p50</th>"
		      "<th class=\"num\">p90</th><th class=\"num\">max</th></tr>\n", f);
		json_array_foreach(json_object_get(sp, "paths"), i, x) {
			dur_text((double)ji(x, "total_ns"), a, sizeof(a));
			dur_text((double)ji(x, "max_ns"), b, sizeof(b));
			fputs("<tr><td>", f);
			hesc(f, js(x, "path"));
			fprintf(f, "</td><td class=\"num\">%lld</td><td class=\"num\">%s</td>", (long long)ji(x, "count"), a);
			html_pct(f, x, "p50_ns");
			html_pct(f, x, "p90_ns");
			fprintf(f, "<td class=\"num\">%s</td></tr>\n", b);
		}
		fputs("</table></div>\n", f);
	}
	fputs("<h3>GC pauses</h3>\n", f);
	if (!is_ok(gc)) {
		html_absent(f, "GC pauses", gc);
	} else {
		fputs("<p>Exact, from the runtimes' probes, per incarnation, runtime and kind.</p>\n<div class=\"scroll\">"
		      "<table><tr><th>program</th><th class=\"num\">pid</th><th>runtime</th><th>kind</th>"
		      "<th class=\"num\">count</th><th class=\"num\">total</th><th class=\"num\">p50</th>"
		      "<th class=\"num\">p90</th><th class=\"num\">p99</th><th class=\"num\">max</th>"
		      "<th class=\"num\">share of wall</th></tr>\n", f);
		json_array_foreach(json_object_get(gc, "rows"), i, x) {
			dur_text((double)ji(x, "total_ns"), a, sizeof(a));
			dur_text((double)ji(x, "max_ns"), b, sizeof(b));
			fputs("<tr><td>", f);
			hesc(f, json_object_get(x, "program") ? js(x, "program") : js(x, "inc"));
			fprintf(f, "</td><td class=\"num\">%lld</td><td>%s</td><td>", (long long)ji(x, "pid"), js(x, "runtime"));
			hesc(f, js(x, "kind"));
			if (json_object_get(x, "pool")) {
				fputc(' ', f);
				hesc(f, js(x, "pool"));
			}
			fprintf(f, "</td><td class=\"num\">%lld</td><td class=\"num\">%s</td>", (long long)ji(x, "count"), a);
			html_pct(f, x, "p50_ns");
			html_pct(f, x, "p90_ns");
			html_pct(f, x, "p99_ns");
			fprintf(f, "<td class=\"num\">%s</td><td class=\"num\">", b);
			if (json_object_get(x, "share_percent"))
				fprintf(f, "%.2f%%", json_real_value(json_object_get(x, "share_percent")));
			fputs("</td></tr>\n", f);
		}
		fputs("</table></div>\n", f);
	}
	fputs("<h3>Allocation hot sites</h3>\n", f);
	if (!is_ok(al)) {
		html_absent(f, "Allocations", al);
	} else {
		fputs("<p>Estimates (~) from byte-sampled allocations (bundle-spec 24.3).</p>\n<div class=\"scroll\"><table>"
		      "<tr><th>site</th><th>call chain</th><th class=\"num\">samples</th><th class=\"num\">bytes~</th>"
		      "<th class=\"num\">objects~</th><th class=\"num\">share~</th></tr>\n", f);
		json_array_foreach(json_object_get(al, "sites"), i, x) {
			bytes_text((double)ji(x, "est_bytes"), a, sizeof(a));
			fputs("<tr><td>", f);
			hesc(f, js(x, "site"));
			fputs("</td><td>", f);
			hesc(f, json_object_get(x, "frames") ? js(x, "frames") : js(x, "chain"));
			fprintf(f, "</td><td class=\"num\">%lld</td><td class=\"num\">~%s</td><td class=\"num\">~%lld</td>"
				   "<td class=\"num\">~%.1f%%</td></tr>\n",
				(long long)ji(x, "samples"), a, (long long)ji(x, "est_objects"),
				json_real_value(json_object_get(x, "share_percent")));
		}
		fputs("</table></div>\n<div class=\"scroll\"><table><tr><th>program</th><th class=\"num\">pid</th>"
		      "<th class=\"num\">allocated~</th><th class=\"num\">live at exit~</th></tr>\n", f);
		json_array_foreach(json_object_get(al, "incarnations"), i, x) {
			bytes_text((double)ji(x, "est_bytes"), a, sizeof(a));
			bytes_text((double)ji(x, "live_est_bytes"), b, sizeof(b));
			fputs("<tr><td>", f);
			hesc(f, json_object_get(x, "program") ? js(x, "program") : js(x, "inc"));
			fprintf(f, "</td><td class=\"num\">%lld</td><td class=\"num\">~%s</td><td class=\"num\">~%s%s</td></tr>\n",
				(long long)ji(x, "pid"), a, b, json_is_true(json_object_get(x, "exited")) ? "" : " (at the stop)");
		}
		fputs("</table></div>\n", f);
	}
	fputs("</section>\n", f);
}

/* ---- A/B ------------------------------------------------------------------------------------ */

/* The rows of key k (a string member, or two joined) of A's and B's arrays
 * side by side: every key of A, then those only in B. */
static json_t *side_by_side(json_t *xa, json_t *xb, const char *k1, const char *k2, const char *const *nums)
{
	json_t *rows = json_array(), *x, *y;
	size_t i, j;

	for (int pass = 0; pass < 2 && rows; pass++)
		json_array_foreach(pass ? xb : xa, i, x) {
			json_t *o = NULL, *ra, *rb, *r;

			json_array_foreach(pass ? xa : xb, j, y)
				if (!strcmp(js(x, k1), js(y, k1)) && (!k2 || !strcmp(js(x, k2), js(y, k2))))
					o = y;
			if (pass && o)
				continue;
			ra = pass ? o : x;
			rb = pass ? x : o;
			r = json_pack("{s:s,s:s}", k1, js(x, k1), "presence", ra && rb ? "both" : ra ? "only-a" : "only-b");
			if (k2)
				json_object_set_new(r, k2, json_string(js(x, k2)));
			for (int n = 0; nums[n]; n++) {
				char ka[64], kb[64];

				snprintf(ka, sizeof(ka), "%s_a", nums[n]);
				snprintf(kb, sizeof(kb), "%s_b", nums[n]);
				if (ra && json_object_get(ra, nums[n]))
					json_object_set(r, ka, json_object_get(ra, nums[n]));
				if (rb && json_object_get(rb, nums[n]))
					json_object_set(r, kb, json_object_get(rb, nums[n]));
			}
			json_array_append_new(rows, r);
		}
	return rows;
}

/* GC rows summed over incarnations by runtime x kind (x pool): the
 * incarnations of two runs are not the same. */
static json_t *gc_by_kind(json_t *gc)
{
	json_t *out = json_array(), *x, *y;
	size_t i, j;

	json_array_foreach(json_object_get(gc, "rows"), i, x) {
		char kind[600];
		json_t *o = NULL;

		snprintf(kind, sizeof(kind), "%s%s%s", js(x, "kind"), json_object_get(x, "pool") ? " " : "", js(x, "pool"));
		json_array_foreach(out, j, y)
			if (!strcmp(js(y, "runtime"), js(x, "runtime")) && !strcmp(js(y, "kind"), kind))
				o = y;
		if (!o) {
			o = json_pack("{s:s,s:s,s:I,s:I,s:I}", "runtime", js(x, "runtime"), "kind", kind, "count",
				      (json_int_t)0, "total_ns", (json_int_t)0, "max_ns", (json_int_t)0);
			json_array_append_new(out, o);
		}
		json_object_set_new(o, "count", json_integer(ji(o, "count") + ji(x, "count")));
		json_object_set_new(o, "total_ns", json_integer(ji(o, "total_ns") + ji(x, "total_ns")));
		if (ji(x, "max_ns") > ji(o, "max_ns"))
			json_object_set_new(o, "max_ns", json_integer(ji(x, "max_ns")));
	}
	return out;
}

json_t *an_runtime_compare(json_t *a, json_t *b)
{
	static const char *const span_nums[] = { "count", "total_ns", "p50_ns", "p90_ns", "max_ns", NULL };
	static const char *const gc_nums[] = { "count", "total_ns", "max_ns", NULL };
	json_t *ra = json_object_get(a, "runtime"), *rb = json_object_get(b, "runtime");
	json_t *sa = json_object_get(ra, "spans"), *sb = json_object_get(rb, "spans");
	json_t *ga = json_object_get(ra, "gc"), *gb = json_object_get(rb, "gc");
	json_t *aa = json_object_get(ra, "alloc"), *ab = json_object_get(rb, "alloc"), *o, *ka, *kb;

	if (!is_ok(sa) && !is_ok(sb) && !is_ok(ga) && !is_ok(gb) && !is_ok(aa) && !is_ok(ab)) {
		char why[300];

		snprintf(why, sizeof(why), "no spans, GC pauses or allocations on either side (A: spans %s, gc %s, alloc %s; "
			 "B: spans %s, gc %s, alloc %s)", *js(sa, "status") ? js(sa, "status") : "absent",
			 *js(ga, "status") ? js(ga, "status") : "absent", *js(aa, "status") ? js(aa, "status") : "absent",
			 *js(sb, "status") ? js(sb, "status") : "absent", *js(gb, "status") ? js(gb, "status") : "absent",
			 *js(ab, "status") ? js(ab, "status") : "absent");
		return json_pack("{s:s,s:s}", "status", "unavailable", "reason", why);
	}
	ka = gc_by_kind(ga);
	kb = gc_by_kind(gb);
	o = json_pack("{s:s,s:o,s:o,s:s}", "status", "ok", "spans",
		      side_by_side(json_object_get(sa, "names"), json_object_get(sb, "names"), "name", NULL, span_nums),
		      "gc", side_by_side(ka, kb, "runtime", "kind", gc_nums), "note",
		      "one recording per side: span and GC counts, totals and percentiles are exact per run, allocation "
		      "bytes estimates; a difference is not a significance test");
	json_decref(ka);
	json_decref(kb);
	if (o && (is_ok(aa) || is_ok(ab))) {
		json_t *al = json_pack("{s:b}", "estimate", true);

		if (is_ok(aa))
			json_object_set(al, "est_bytes_a", json_object_get(aa, "est_bytes"));
		if (is_ok(ab))
			json_object_set(al, "est_bytes_b", json_object_get(ab, "est_bytes"));
		json_object_set_new(o, "alloc", al);
	}
	return o;
}
