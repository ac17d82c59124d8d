/*
 * The bundle report (model.h): validation, the documents of the first
 * repetition, and the metrics of every repetition.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "checks.h"
#include "error.h"
#include "model.h"
#include "oscall.h"
#include "runtime.h"
#include "profile.h"
#include "spec_json.h"
#include "stats.h"
#include "trace.h"
#include "util.h"
#include "validate.h"

static const char *sget(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "?";
}

void an_fmt_value(double v, const char *unit, char *out, size_t n)
{
	if (!strcmp(unit, "ns"))
		snprintf(out, n, "%.3f ms", v / 1e6);
	else if (!strcmp(unit, "bytes"))
		snprintf(out, n, "%.1f KiB", v / 1024.0);
	else if (!strcmp(unit, "ratio"))
		snprintf(out, n, "%.3f", v);
	else
		snprintf(out, n, "%.0f", v);
}

void an_fmt_count(json_t *r, char *out, size_t n)
{
	json_t *v = json_object_get(r, "value"), *vns = json_object_get(r, "value_ns");
	char num[64];

	if (strcmp(sget(r, "status"), "ok") || (!v && !vns)) {
		snprintf(out, n, "not counted");
		return;
	}
	if (vns)
		snprintf(num, sizeof(num), "%.3f ms", (double)json_integer_value(vns) / 1e6);
	else
		snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
	if (json_is_true(json_object_get(r, "estimate")))
		snprintf(out, n, "~%s (estimate, counted %.1f%% of the time)", num,
			 (double)json_integer_value(json_object_get(r, "running_ppm")) / 1e4);
	else if (json_is_true(json_object_get(r, "suspect_zero")))
		snprintf(out, n, "%s (suspect zero: a hardware counter that read 0)", num);
	else
		snprintf(out, n, "%s", num);
}

void an_fmt_compared(json_t *x, struct an_cells *c)
{
	const char *unit = sget(x, "unit"), *st = sget(x, "status");

	snprintf(c->va, sizeof(c->va), "n/a");
	snprintf(c->vb, sizeof(c->vb), "n/a");
	c->ch[0] = c->ci[0] = c->p[0] = '\0';
	c->verdict = !strcmp(st, "ok") ? sget(x, "verdict") : sget(x, "reason");
	if (json_object_get(x, "a_median"))
		an_fmt_value(json_real_value(json_object_get(x, "a_median")), unit, c->va, sizeof(c->va));
	if (json_object_get(x, "b_median"))
		an_fmt_value(json_real_value(json_object_get(x, "b_median")), unit, c->vb, sizeof(c->vb));
	if (json_object_get(x, "delta_percent"))
		snprintf(c->ch, sizeof(c->ch), "%+.1f%%", json_real_value(json_object_get(x, "delta_percent")));
	if (!strcmp(st, "ok"))
		snprintf(c->ci, sizeof(c->ci), "%+.1f%% .. %+.1f%%", json_real_value(json_object_get(x, "ci_low_percent")),
			 json_real_value(json_object_get(x, "ci_high_percent")));
	if (json_object_get(x, "p_value"))
		snprintf(c->p, sizeof(c->p), "%.3f", json_real_value(json_object_get(x, "p_value")));
}

/* ---- output files ------------------------------------------------------------ */

FILE *an_out_open(struct an_out *o, const char *path)
{
	struct stat st;

	memset(o, 0, sizeof(*o));
	o->path = strdup(path);
	if (!o->path)
		return NULL;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		o->f = fopen(path, "w");
		return o->f;
	}
	if (asprintf(&o->tmp, "%s.pmuanalyze-%d.tmp", path, (int)getpid()) < 0) {
		o->tmp = NULL;
		return NULL;
	}
	o->f = fopen(o->tmp, "wx");
	return o->f;
}

int an_out_close(struct an_out *o, bool ok)
{
	int err = 0;

	if (o->f && fclose(o->f)) {
		fprintf(stderr, "pmuanalyze: cannot write '%s': %s\n", o->path, strerror(errno));
		err = -1;
	}
	if (o->tmp) {
		if (ok && !err && rename(o->tmp, o->path)) {
			fprintf(stderr, "pmuanalyze: cannot write '%s': %s\n", o->path, strerror(errno));
			err = -1;
		}
		if (!ok || err)
			unlink(o->tmp);
	}
	free(o->path);
	free(o->tmp);
	memset(o, 0, sizeof(*o));
	return err;
}

/* ---- validation ------------------------------------------------------------ */

struct failures {
	json_t *list;
};

static void on_finding(void *ctx, const struct pmu_finding *f)
{
	struct failures *fl = ctx;
	char where[600];

	if (f->severity != PMU_SEV_ERROR)
		return;
	if (f->file && f->record)
		snprintf(where, sizeof(where), "%s:%llu", f->file, (unsigned long long)f->record);
	else
		snprintf(where, sizeof(where), "%s", f->file ? f->file : "");
	json_array_append_new(fl->list, json_pack("{s:s,s:s,s:s}", "check", pmu_checks[f->check].id, "where", where,
						  "message", f->message));
}

/* ---- incarnation ids --------------------------------------------------------- */

void an_ids_init(struct an_ids *x)
{
	memset(x, 0, sizeof(*x));
	/* ids come from the bundle: a seed it cannot know keeps a crafted set
	 * of ids from piling into one probe chain (quadratic time) */
	if (getrandom(&x->seed, sizeof(x->seed), GRND_NONBLOCK) != sizeof(x->seed))
		x->seed = (uint64_t)(uintptr_t)x ^ (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
}

void an_ids_release(struct an_ids *x)
{
	free(x->str);
	free(x->off);
	free(x->slot);
	memset(x, 0, sizeof(*x));
}

/* FNV-1a from a seeded basis, and the high bits folded down: ids are
 * short ("i4711"), and the table only needs them spread */
static uint64_t id_hash(const struct an_ids *x, const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull ^ x->seed;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

long an_ids_find(const struct an_ids *x, const char *id)
{
	size_t m;

	if (!x->nslot)
		return -1;
	m = x->nslot - 1;
	for (size_t i = id_hash(x, id) & m;; i = (i + 1) & m) {
		uint32_t v = x->slot[i];

		if (!v)
			return -1;
		if (!strcmp(x->str + x->off[v - 1], id))
			return (long)v - 1;
	}
}

static void ids_place(struct an_ids *x, size_t num)
{
	size_t m = x->nslot - 1, i = id_hash(x, x->str + x->off[num]) & m;

	while (x->slot[i])
		i = (i + 1) & m;
	x->slot[i] = (uint32_t)num + 1;
}

long an_ids_put(struct an_ids *x, const char *id, bool *added)
{
	long f = an_ids_find(x, id);
	size_t len = strlen(id) + 1;

	if (added)
		*added = f < 0;
	if (f >= 0)
		return f;
	if (x->n >= UINT32_MAX - 1)
		return -1;
	if ((x->n + 1) * 2 > x->nslot) {
		size_t ns = x->nslot ? 2 * x->nslot : 1024;
		uint32_t *s = calloc(ns, sizeof(*s));

		if (!s)
			return -1;
		free(x->slot);
		x->slot = s;
		x->nslot = ns;
		for (size_t i = 0; i < x->n; i++)
			ids_place(x, i);
	}
	if (x->slen + len > x->scap) {
		size_t nc = x->scap ? 2 * x->scap : 4096;
		char *s;

		while (nc < x->slen + len)
			nc *= 2;
		if (!(s = realloc(x->str, nc)))
			return -1;
		x->str = s;
		x->scap = nc;
	}
	if (x->n == x->cap) {
		size_t nc = x->cap ? 2 * x->cap : 256, *o = realloc(x->off, nc * sizeof(*o));

		if (!o)
			return -1;
		x->off = o;
		x->cap = nc;
	}
	memcpy(x->str + x->slen, id, len);
	x->off[x->n] = x->slen;
	x->slen += len;
	ids_place(x, x->n);
	return (long)x->n++;
}

const char *an_ids_name(const struct an_ids *x, size_t i)
{
	return x->str + x->off[i];
}

/* ---- reading a bundle's files ---------------------------------------------- */

static void rep_path(int rep, const char *name, char *out, size_t n)
{
	if (rep <= 1)
		snprintf(out, n, "%s", name);
	else
		snprintf(out, n, "repeats/%d/%s", rep, name);
}

int an_cohort_each(const struct pmu_bundle *b, int rep, an_inc_fn fn, void *ctx)
{
	return pmu_bundle_cohort_each(b, rep, fn, ctx, NULL);
}

/* A stream record, including its LF, is at most 1 MiB (spec 8.2): a longer
 * line is not a record, and is skipped without being held. */
#define AN_LINE_MAX (1u << 20)

/*
 * Each record of the stream data/<rel> of repetition rep, one line at a
 * time, parsed and handed to fn (borrowed); lines that skip() names (a
 * cheap test of the line's start) are not parsed.  Memory: one line.
 * Returns 0, 1 when the repetition has no such file, or fn's nonzero
 * return.  A line that is not a JSON object (a bundle analyzed with
 * --allow-invalid) is passed over.
 */
static int each_record(const struct pmu_bundle *b, int rep, const char *rel, bool (*skip)(const char *line),
		       int (*fn)(json_t *r, void *ctx), void *ctx)
{
	char path[400], *line;
	int fd, err = 0;
	FILE *f;

	memcpy(path, "data/", 5);
	rep_path(rep, rel, path + 5, sizeof(path) - 5);
	fd = openat(b->rootfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return 1;
	}
	line = malloc(AN_LINE_MAX + 2);
	while (!err && line && fgets(line, AN_LINE_MAX + 2, f)) {
		size_t n = strlen(line);
		json_t *r;
		int c;

		if (n && line[n - 1] != '\n' && !feof(f)) {
			while ((c = getc(f)) != EOF && c != '\n')
				;
			continue;
		}
		if (skip && skip(line))
			continue;
		r = json_loadb(line, n, 0, NULL);
		if (json_is_object(r))
			err = fn(r, ctx);
		json_decref(r);
	}
	if (!line)
		err = pmu_error(PMU_ERR_NOMEM, "out of memory");
	free(line);
	fclose(f);
	return err;
}

/* ---- collectors ------------------------------------------------------------ */

struct fate {
	json_t *fin;
	char ev[400];
	json_int_t dropped, malformed;
};

static int fate_record(json_t *r, void *ctx)
{
	struct fate *fa = ctx;
	const char *e = sget(r, "event");

	if (!strcmp(e, "attached") && json_object_get(r, "evidence"))
		snprintf(fa->ev, sizeof(fa->ev), "%s", sget(r, "evidence"));
	else if (!strcmp(e, "drop"))
		fa->dropped += json_integer_value(json_object_get(r, "count"));
	else if (!strcmp(e, "malformed"))
		fa->malformed += json_integer_value(json_object_get(r, "count"));
	else if (!strcmp(e, "final")) {
		json_decref(fa->fin);
		fa->fin = json_incref(r);
	}
	return 0;
}

/* Each collector's final status, evidence and drops, from its lifecycle
 * (read as a stream: a collector may log many drops). */
static json_t *collector_fates(const struct pmu_bundle *b, int rep, json_t *run)
{
	json_t *out = json_array(), *c;
	size_t i;

	json_array_foreach(json_object_get(run, "collectors"), i, c) {
		struct fate fa = { NULL, "", 0, 0 };
		char rel[300];
		json_t *fin;

		snprintf(rel, sizeof(rel), "collectors/%s/lifecycle.jsonl", sget(c, "name"));
		each_record(b, rep, rel, NULL, fate_record, &fa);
		fin = fa.fin;
		json_array_append_new(out, json_pack("{s:s,s:b,s:s,s:s,s:s,s:s,s:I,s:I}", "name", sget(c, "name"),
						     "requested", json_is_true(json_object_get(c, "requested")),
						     "status", fin ? sget(fin, "status") : "missing", "reason",
						     fin && json_object_get(fin, "reason") ? sget(fin, "reason") : "",
						     "remedy", fin && json_object_get(fin, "remedy") ? sget(fin, "remedy") : "",
						     "evidence", fa.ev, "dropped", fa.dropped, "malformed", fa.malformed));
		json_decref(fin);
	}
	return out;
}

/* ---- the cohort, compact ------------------------------------------------------ */

/*
 * One incarnation as the whole-cohort passes keep it: what the totals, the
 * ranking, the tree and the dominant cost need, and none of its strings
 * (its id is in the scan's an_ids, by the same number).  About 56 bytes, so
 * that the largest cohort a bundle may hold (spec: 262144 incarnations)
 * stays well inside the analyzer's 64 MiB.
 */
struct an_inc {
	int64_t cpu_user_ns, cpu_system_ns; /* -1: not measured */
	int64_t task_ns;                    /* counted task-clock, -1: none */
	uint32_t seq;                       /* its place in the cohort's order */
	int32_t parent;                     /* its parent's number, -1: none */
	int32_t pos;                        /* its index in the report's cohort[], -1: none */
	int32_t prog;                       /* its program's number (scan.progs), AN_PROG_NONE: past the bound */
	bool seen;                          /* an incarnation, not only named as a parent */
	bool listed, tent, match;
	bool inherit;                       /* never exec'd: prog is its comm's, its parent's image preferred */
	bool task_est;                      /* task_ns is an estimate (multiplexed) */
	bool ticks;                         /* its CPU times are in clock ticks (/proc/PID/stat) */
};

/* A program that did not fit the bound on distinct programs (AN_PROGRAMS). */
#define AN_PROG_NONE (-2)

/* The resource totals the process-tree section sums (or takes the max of). */
static const struct {
	const char *res, *name, *unit;
	bool max;
} tree_sums[] = {
	{ "cpu_user_ns", "cpu_user", "ns", false },   { "cpu_system_ns", "cpu_system", "ns", false },
	{ "max_rss_bytes", "max_rss", "bytes", true }, { "minor_faults", "minor_faults", "count", false },
	{ "major_faults", "major_faults", "count", false }, { "read_bytes", "read_bytes", "bytes", false },
	{ "write_bytes", "write_bytes", "bytes", false },
};
#define AN_NSUMS PMU_ARRAY_SIZE(tree_sums)

/* One pass over a repetition's cohort: every incarnation indexed, summed,
 * and the root found.  Embedded: scan_init()/scan_release(). */
struct scan {
	struct an_ids ids;
	struct an_inc *v;       /* by id number */
	size_t vcap;
	size_t count;           /* incarnations given, an id used twice counted twice */
	long root;              /* the first incarnation without a parent, or -1 */
	size_t root_seq;
	json_int_t root_start, root_end;
	bool root_has_end, root_pre;
	double acc[AN_NSUMS];
	char *why[AN_NSUMS];    /* why a total is not known (the first reason), or NULL */
	const char *match_comm; /* incarnations of this comm are marked (match) */
	long best;              /* the incarnation with the most counted task-clock, or -1 */
	int64_t best_ns;
	bool best_est;
	bool best_cpu;          /* no task-clock counted: best is by CPU time at exit */
	bool want_progs;        /* index programs (the first repetition's report) */
	struct an_ids progs;    /* program keys (prog_key()), at most AN_PROGRAMS */
	size_t seen_n;          /* distinct incarnations indexed */
	size_t task_n;          /* of them, with a counted task-clock */
	size_t ticks_n;         /* of them, with both CPU times measured in clock ticks */
};

static void scan_init(struct scan *s, const char *match_comm)
{
	memset(s, 0, sizeof(*s));
	an_ids_init(&s->ids);
	an_ids_init(&s->progs);
	s->root = s->best = -1;
	s->best_ns = -1;
	s->match_comm = match_comm;
}

static void scan_release(struct scan *s)
{
	an_ids_release(&s->ids);
	an_ids_release(&s->progs);
	free(s->v);
	for (size_t i = 0; i < AN_NSUMS; i++)
		free(s->why[i]);
	memset(s, 0, sizeof(*s));
}

/* v[] as long as the ids, new entries blank */
static int scan_fit(struct scan *s)
{
	size_t old = s->vcap;

	if (s->ids.n <= s->vcap)
		return 0;
	size_t nc = s->vcap ? s->vcap : 256;
	struct an_inc *v;

	while (nc < s->ids.n)
		nc *= 2;
	if (!(v = realloc(s->v, nc * sizeof(*v))))
		return -1;
	for (size_t i = old; i < nc; i++)
		v[i] = (struct an_inc){ .cpu_user_ns = -1, .cpu_system_ns = -1, .task_ns = -1, .parent = -1, .pos = -1,
					.prog = AN_PROG_NONE };
	s->v = v;
	s->vcap = nc;
	return 0;
}

static int64_t res_value(json_t *r, const char *key)
{
	json_t *v = json_object_get(r, key);

	return json_is_integer(v) && json_integer_value(v) >= 0 ? (int64_t)json_integer_value(v) : -1;
}

/* The most distinct programs a report indexes; the processes of any more are
 * counted and summed as omitted (a cohort of thousands of different scripts
 * must not grow the analyzer's memory without bound). */
#define AN_PROGRAMS 4096

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');

	return b && b[1] ? b + 1 : p;
}

/*
 * An incarnation's program: the image of its last exec, and the basename of
 * that exec's argv[0] where it differs from the image's (a bundle of spec
 * 1.4 has argv; an older one has not), as one key "IMAGE\x1fARGV0".  One that
 * never exec'd runs its parent's image: it is keyed by its comm ("\x1eCOMM")
 * and marked to take its nearest exec'ing ancestor's program (programs()).
 */
static int scan_program(struct scan *s, struct an_inc *x, json_t *in, const char *comm)
{
	json_t *ex = json_object_get(in, "exec"), *last = json_array_get(ex, json_array_size(ex) - 1);
	const char *path = json_string_value(json_object_get(last, "path"));
	const char *a0 = json_string_value(json_array_get(json_object_get(last, "argv"), 0));
	char *key = NULL;
	long f;
	int n;

	x->inherit = !path;
	if (path)
		n = asprintf(&key, "%s\x1f%s", path, a0 && *a0 && strcmp(base_name(a0), base_name(path)) ? base_name(a0) : "");
	else
		n = asprintf(&key, "\x1e%s", comm && *comm ? comm : "?");
	if (n < 0)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	f = an_ids_find(&s->progs, key);
	if (f < 0 && s->progs.n < AN_PROGRAMS && (f = an_ids_put(&s->progs, key, NULL)) < 0) {
		free(key);
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	}
	x->prog = f < 0 ? AN_PROG_NONE : (int32_t)f;
	free(key);
	return 0;
}

static int scan_inc(void *ctx, json_t *in, size_t seq)
{
	struct scan *s = ctx;
	const char *id = json_string_value(json_object_get(in, "id")), *p = json_string_value(json_object_get(in, "parent"));
	const char *comm = json_string_value(json_object_get(in, "comm"));
	json_t *r = json_object_get(in, "resources");
	long i = an_ids_put(&s->ids, id ? id : "?", NULL), pi = -1;
	struct an_inc *x;

	if (i >= 0 && p)
		pi = an_ids_put(&s->ids, p, NULL);
	if (i < 0 || (p && pi < 0) || scan_fit(s))
		return pmu_error(PMU_ERR_NOMEM, "out of memory indexing the cohort");
	s->count++;
	for (size_t k = 0; k < AN_NSUMS; k++) {
		json_t *v = json_object_get(r, tree_sums[k].res);
		const char *why;

		if (s->why[k])
			continue;
		if (!r || !v) {
			why = r ? json_string_value(json_object_get(json_object_get(json_object_get(r, "fields"),
										   tree_sums[k].res), "reason"))
				: "an incarnation has no resource totals";
			if (!(s->why[k] = strdup(why ? why : "an incarnation's total is unavailable")))
				return pmu_error(PMU_ERR_NOMEM, "out of memory");
		} else if (tree_sums[k].max) {
			s->acc[k] = fmax(s->acc[k], (double)json_integer_value(v));
		} else {
			s->acc[k] += (double)json_integer_value(v);
		}
	}
	x = &s->v[i];
	if (x->seen)
		return 0; /* an id used twice (a bundle analyzed on request): the first is the one indexed */
	/* the root: the first incarnation without a parent, in cohort order */
	if (!p && (s->root < 0 || seq < s->root_seq)) {
		s->root_seq = seq;
		s->root = i;
		s->root_start = json_integer_value(json_object_get(in, "start_ns"));
		s->root_has_end = json_object_get(in, "end_ns") != NULL;
		s->root_end = json_integer_value(json_object_get(in, "end_ns"));
		s->root_pre = json_is_true(json_object_get(in, "preexisting"));
	}
	x->seen = true;
	x->seq = (uint32_t)seq;
	x->parent = (int32_t)pi;
	x->cpu_user_ns = res_value(r, "cpu_user_ns");
	x->cpu_system_ns = res_value(r, "cpu_system_ns");
	x->match = s->match_comm && comm && !strcmp(comm, s->match_comm);
	s->seen_n++;
	{
		/* /proc/PID/stat gives CPU times in clock ticks: the source says so */
		const char *src = json_string_value(
			json_object_get(json_object_get(json_object_get(r, "fields"), "cpu_user_ns"), "source"));

		if (src && strstr(src, "clock ticks") && x->cpu_user_ns >= 0 && x->cpu_system_ns >= 0) {
			x->ticks = true;
			s->ticks_n++;
		}
	}
	if (s->want_progs)
		return scan_program(s, x, in, comm);
	return 0;
}

/* Index and sum the cohort of repetition rep; 0 or a negative pmu_err. */
static int scan_cohort(const struct pmu_bundle *b, int rep, struct scan *s)
{
	return an_cohort_each(b, rep, scan_inc, s);
}

/* ---- counts ------------------------------------------------------------------ */

static bool is_count(const char *line)
{
	return !strncmp(line, "{\"type\":\"count\",", 16); /* per-thread counts: not in this report */
}

struct counts_ctx {
	struct scan *s;
	json_t *k;
};

/* Records about the cohort as a whole kept per list (counters, fallbacks,
 * cohort, cgroup_stats): a recorder writes a few dozen; more (a hostile
 * stream) are counted in counting.omitted, not held. */
#define AN_COUNT_RECORDS 4096

static void keep_record(json_t *k, const char *list, json_t *r)
{
	json_t *a = json_object_get(k, list), *om;

	if (json_array_size(a) < AN_COUNT_RECORDS) {
		json_array_append(a, r);
		return;
	}
	if (!(om = json_object_get(k, "omitted"))) {
		om = json_object();
		json_object_set_new(k, "omitted", om);
	}
	json_object_set_new(om, list, json_integer(json_integer_value(json_object_get(om, list)) + 1));
}

/* Pass 1: the records about the cohort as a whole (counters, fallbacks,
 * scope, cohort totals, cgroup statistics) and each incarnation's counted
 * task-clock into the scan; no per-incarnation record is kept. */
static int counts_first(json_t *r, void *ctx)
{
	struct counts_ctx *c = ctx;
	const char *t = sget(r, "type");

	if (!strcmp(t, "counter"))
		keep_record(c->k, "counters", r);
	else if (!strcmp(t, "fallback"))
		keep_record(c->k, "fallbacks", r);
	else if (!strcmp(t, "scope"))
		json_object_set(c->k, "scope", r);
	else if (!strcmp(t, "cohort"))
		keep_record(c->k, "cohort", r);
	else if (!strcmp(t, "cgstat"))
		keep_record(c->k, "cgroup_stats", r);
	else if (!strcmp(t, "total") && !strcmp(sget(r, "counter"), "task-clock") && !strcmp(sget(r, "status"), "ok") &&
		 json_is_integer(json_object_get(r, "value_ns"))) {
		long i = an_ids_find(&c->s->ids, sget(r, "inc"));
		int64_t v = json_integer_value(json_object_get(r, "value_ns"));

		if (i >= 0 && c->s->v[i].seen && c->s->v[i].task_ns < 0) {
			c->s->v[i].task_ns = v;
			c->s->v[i].task_est = json_is_true(json_object_get(r, "estimate"));
			c->s->task_n++;
			/* strictly more: the first of equals in the stream wins */
			if (v > c->s->best_ns) {
				c->s->best = i;
				c->s->best_ns = v;
				c->s->best_est = json_is_true(json_object_get(r, "estimate"));
			}
		}
	}
	return 0;
}

/*
 * The counting collector's records of one repetition about the cohort as a
 * whole, with empty totals (counts_totals() fills them for the listed
 * incarnations).  Read line by line: the stream grows with the cohort.
 * NULL when the repetition has no counts stream.
 */
static json_t *counts_load(const struct pmu_bundle *b, int rep, struct scan *s)
{
	struct counts_ctx c = { s, json_pack("{s:[],s:[],s:n,s:{},s:[],s:[]}", "counters", "fallbacks", "scope",
					    "totals", "cohort", "cgroup_stats") };

	if (each_record(b, rep, "collectors/counting/counts.jsonl", is_count, counts_first, &c) == 1) {
		json_decref(c.k);
		return NULL;
	}
	return c.k;
}

/* Pass 2: the totals of the listed incarnations, by inc, then counter. */
static int counts_listed(json_t *r, void *ctx)
{
	struct counts_ctx *c = ctx;
	long i;
	json_t *tot, *m;

	if (strcmp(sget(r, "type"), "total"))
		return 0;
	i = an_ids_find(&c->s->ids, sget(r, "inc"));
	if (i < 0 || !c->s->v[i].listed)
		return 0;
	tot = json_object_get(c->k, "totals");
	if (!(m = json_object_get(tot, sget(r, "inc")))) {
		m = json_object();
		json_object_set_new(tot, sget(r, "inc"), m);
	}
	json_object_set(m, sget(r, "counter"), r);
	return 0;
}

static void counts_totals(const struct pmu_bundle *b, int rep, struct scan *s, json_t *k)
{
	struct counts_ctx c = { s, k };

	if (k)
		each_record(b, rep, "collectors/counting/counts.jsonl", is_count, counts_listed, &c);
}


/* A counted value: true with *v and *est when the record has one. */
static bool count_value(json_t *r, double *v, bool *est)
{
	json_t *x = json_object_get(r, "value");

	if (!x)
		x = json_object_get(r, "value_ns");
	if (!r || strcmp(sget(r, "status"), "ok") || !x)
		return false;
	*v = (double)json_integer_value(x);
	*est = json_is_true(json_object_get(r, "estimate"));
	return true;
}

/* Ratios of two counts, only where both were counted (exact or labelled
 * estimates): IPC and miss ratios. */
static const struct {
	const char *name, *num, *den;
} ratios[] = {
	{ "ipc", "instructions", "cycles" },
	{ "branch-miss-ratio", "branch-misses", "branches" },
	{ "cache-miss-ratio", "cache-misses", "cache-references" },
};

static void add_derived(json_t *m, json_t *incs_totals)
{
	for (size_t i = 0; i < PMU_ARRAY_SIZE(ratios); i++) {
		double a, b;
		bool ea, eb;

		if (!count_value(json_object_get(incs_totals, ratios[i].num), &a, &ea) ||
		    !count_value(json_object_get(incs_totals, ratios[i].den), &b, &eb) || b == 0)
			continue;
		json_object_set_new(m, ratios[i].name, json_pack("{s:s,s:f,s:b}", "status", "ok", "value", a / b,
								  "estimate", ea || eb));
	}
}

/* ---- metrics: each section adds its own ------------------------------------ */

static void metric_ok(json_t *m, const char *name, const char *unit, double v, bool est, const char *source)
{
	json_object_set_new(m, name, json_pack("{s:s,s:f,s:s,s:b,s:s}", "status", "ok", "value", v, "unit", unit,
					       "estimate", est, "source", source));
}

static void metric_na(json_t *m, const char *name, const char *unit, const char *reason)
{
	json_object_set_new(m, name, json_pack("{s:s,s:s,s:s}", "status", "unavailable", "unit", unit, "reason",
					       reason));
}

/* Process tree: the root's wall time and the cohort's resource totals. */

/* Process tree: the root's wall time and the cohort's resource totals,
 * over every incarnation (the scan), however many the report lists. */
static void section_tree(json_t *m, json_t *run, const struct scan *s)
{
	bool none = !strcmp(sget(run, "mode"), "none");

	if (s->root >= 0 && s->root_has_end && !s->root_pre)
		metric_ok(m, "wall", "ns", (double)(s->root_end - s->root_start), false,
			  "the root incarnation's lifetime (fork to reap)");
	else
		metric_na(m, "wall", "ns", s->root >= 0 ? "the root was attached to, or still running at the end"
						      : "the cohort has no root");
	for (size_t k = 0; k < AN_NSUMS; k++) {
		if (s->why[k])
			metric_na(m, tree_sums[k].name, tree_sums[k].unit, s->why[k]);
		else
			metric_ok(m, tree_sums[k].name, tree_sums[k].unit, s->acc[k], false,
				  none ? "wait4 rusage of the command (with the descendants it waited for)"
				       : "per-incarnation totals, summed");
	}
	{
		json_t *u = json_object_get(m, "cpu_user"), *sy = json_object_get(m, "cpu_system");

		if (!strcmp(sget(u, "status"), "ok") && !strcmp(sget(sy, "status"), "ok")) {
			char src[300];

			/* the sum keeps its parts' source: two modes' cpu differ as theirs do */
			snprintf(src, sizeof(src), "%s (user + system)", sget(u, "source"));
			metric_ok(m, "cpu", "ns",
				  json_real_value(json_object_get(u, "value")) + json_real_value(json_object_get(sy, "value")),
				  false, src);
		}
		else
			metric_na(m, "cpu", "ns", "cpu_user or cpu_system is unavailable");
	}
}

/* The command's wait4 totals (run.json command_rusage): one source in every
 * mode, so the observer overhead on CPU can be stated. */
static void section_command(json_t *m, json_t *run)
{
	static const struct {
		const char *key, *name, *unit;
	} f[] = {
		{ "cpu_user_ns", "command.cpu_user", "ns" },   { "cpu_system_ns", "command.cpu_system", "ns" },
		{ "max_rss_bytes", "command.max_rss", "bytes" }, { "minor_faults", "command.minor_faults", "count" },
	};
	json_t *ru = json_object_get(run, "command_rusage");

	if (!ru)
		return;
	for (size_t i = 0; i < PMU_ARRAY_SIZE(f); i++)
		metric_ok(m, f[i].name, f[i].unit, (double)json_integer_value(json_object_get(ru, f[i].key)), false,
			  sget(ru, "source"));
	metric_ok(m, "command.cpu", "ns",
		  (double)(json_integer_value(json_object_get(ru, "cpu_user_ns")) +
			   json_integer_value(json_object_get(ru, "cpu_system_ns"))),
		  false, sget(ru, "source"));
}

/* Counters: the cohort's value of every counter (sum of the incarnations). */
static void section_counters(json_t *m, json_t *k)
{
	json_t *c, *tot;
	size_t i;

	if (!k)
		return;
	tot = json_object();
	json_array_foreach(json_object_get(k, "cohort"), i, c) {
		double v;
		bool est;
		const char *unit = "count";
		json_t *d;
		size_t j;

		json_array_foreach(json_object_get(k, "counters"), j, d)
			if (!strcmp(sget(d, "name"), sget(c, "counter")) && !strcmp(sget(d, "unit"), "ns"))
				unit = "ns";

		if (strcmp(sget(c, "scope"), "incarnations"))
			continue;
		if (count_value(c, &v, &est)) {
			json_object_set(tot, sget(c, "counter"), c);
			metric_ok(m, sget(c, "counter"), unit, v, est, "counting collector, sum of the incarnations");
			continue;
		}
		/* no sum of the incarnations (the eBPF follower counts none per
		 * process): the cohort's own cgroup counted the same events */
		json_t *g = NULL;

		json_array_foreach(json_object_get(k, "cohort"), j, d)
			if (!g && !strcmp(sget(d, "scope"), "cgroup") && !strcmp(sget(d, "counter"), sget(c, "counter")))
				g = d;
		if (g && count_value(g, &v, &est)) {
			json_object_set(tot, sget(c, "counter"), g);
			metric_ok(m, sget(c, "counter"), unit, v, est, "counting collector, the cohort's own cgroup");
		} else {
			metric_na(m, sget(c, "counter"), unit, sget(c, "reason"));
		}
	}
	/* every counter that was declared but never counted is a metric too */
	json_array_foreach(json_object_get(k, "counters"), i, c)
		if (!json_object_get(m, sget(c, "name")))
			metric_na(m, sget(c, "name"), sget(c, "unit"), sget(c, "reason"));
	{
		json_t *d = json_object();
		const char *key;
		json_t *v;

		add_derived(d, tot);
		json_object_foreach(d, key, v) {
			json_object_set_new(v, "unit", json_string("ratio"));
			json_object_set_new(v, "source", json_string("ratio of two counted cohort totals"));
			json_object_set(m, key, v);
		}
		json_decref(d);
	}
	json_decref(tot);
}


/* Spans: the time of each span name, summed over its spans.  At most
 * AN_SPAN_NAMES names become metrics (names come from the workload's own
 * markers); the spans of further names are summed into one metric,
 * span.(other names), so that none is lost and the report stays bounded. */
#define AN_SPAN_NAMES 256

static bool not_span(const char *line)
{
	return strncmp(line, "{\"type\":\"span\",", 15) != 0;
}

static int span_record(json_t *r, void *ctx)
{
	json_t *acc = ctx;
	char key[300];
	json_int_t d = json_integer_value(json_object_get(r, "end_ns")) - json_integer_value(json_object_get(r, "begin_ns"));

	snprintf(key, sizeof(key), "span.%s", sget(r, "name"));
	if (!json_object_get(acc, key) && json_object_size(acc) >= AN_SPAN_NAMES)
		snprintf(key, sizeof(key), "span.(other names)");
	json_object_set_new(acc, key, json_real(json_real_value(json_object_get(acc, key)) + (double)d));
	return 0;
}

static void section_spans(json_t *m, const struct pmu_bundle *b, int rep)
{
	json_t *acc = json_object(), *v;
	const char *name;

	each_record(b, rep, "spans.jsonl", not_span, span_record, acc);
	json_object_foreach(acc, name, v)
		metric_ok(m, name, "ns", json_real_value(v), false,
			  strcmp(name, "span.(other names)") ? "spans.jsonl: the span name's time, summed"
							      : "spans.jsonl: the time of the spans of every name "
								"past the first 256, summed");
	json_decref(acc);
}

/* ---- the dominant cost ------------------------------------------------------ */

/* The counted task-clock of the whole cohort (scope incarnations), or NULL. */
static json_t *cohort_task_clock(json_t *k)
{
	json_t *c, *tot = NULL;
	size_t i;

	json_array_foreach(json_object_get(k, "cohort"), i, c)
		if (!strcmp(sget(c, "counter"), "task-clock") && !strcmp(sget(c, "scope"), "incarnations"))
			tot = c;
	if (!tot || strcmp(sget(tot, "status"), "ok") || !json_integer_value(json_object_get(tot, "value_ns")))
		return NULL;
	return tot;
}

/*
 * Where the evidence names one: the incarnation with the largest share of
 * the cohort's task-clock (exact, or labelled estimate), over every
 * incarnation (the scan).  With repetitions the share's spread across them
 * is its uncertainty.  comm and pid are the dominant incarnation's.
 */
/* "; across N repetitions its share ranges ..." when there are 3 or more, else "" */
static void shares_spread(json_t *shares, char *out, size_t n)
{
	double v[4096];
	size_t k = 0, i;
	struct pmu_summary sm;
	json_t *x;

	out[0] = '\0';
	if (json_array_size(shares) < 3)
		return;
	json_array_foreach(shares, i, x)
		if (k < 4096)
			v[k++] = json_real_value(x);
	if (pmu_summarize(v, k, &sm) == 0)
		snprintf(out, n, "; across %zu repetitions its share ranges %.0f%%-%.0f%% (median %.0f%%)", k, sm.min,
			 sm.max, sm.median);
}

static json_t *dominant_cost(const struct scan *s, json_t *k, const char *comm, json_int_t pid, json_t *shares)
{
	json_t *tot = cohort_task_clock(k);
	json_int_t sum;
	const char *inc;

	if (!tot && s->best_cpu && s->acc[0] + s->acc[1] > 0) {
		double all = s->acc[0] + s->acc[1], share = 100.0 * (double)s->best_ns / all;
		char st[600];

		char spread[160] = "";

		inc = an_ids_name(&s->ids, (size_t)s->best);
		shares_spread(shares, spread, sizeof(spread));
		snprintf(st, sizeof(st), "process '%s' (pid %lld, incarnation %s) spent %.0f%% of the cohort's CPU "
			 "time (user + system %.3f of %.3f ms, from each process's totals at exit: no task-clock was "
			 "counted per process)%s", comm ? comm : "?", comm ? (long long)pid : -1LL, inc, share,
			 (double)s->best_ns / 1e6, all / 1e6, spread);
		return json_pack("{s:s,s:s,s:s,s:s,s:f,s:b,s:I}", "statement", st, "inc", inc, "comm", comm ? comm : "?",
				 "metric", "cpu_time", "share_percent", share, "estimate", s->ticks_n > 0, "value_ns",
				 (json_int_t)s->best_ns);
	}
	if (!tot)
		return json_pack("{s:s}", "statement", "not determined (no counted task-clock in this bundle)");
	if (s->best < 0)
		return json_pack("{s:s}", "statement", "not determined (no incarnation has a counted task-clock)");
	sum = json_integer_value(json_object_get(tot, "value_ns"));
	inc = an_ids_name(&s->ids, (size_t)s->best);
	double share = 100.0 * (double)s->best_ns / (double)sum;
	bool est = s->best_est || json_is_true(json_object_get(tot, "estimate"));
	char st[600], spread[160] = "";

	shares_spread(shares, spread, sizeof(spread));
	snprintf(st, sizeof(st), "process '%s' (pid %lld, incarnation %s) spent %.0f%% of the cohort's CPU "
		 "(task-clock %.3f of %.3f ms, %s)%s", comm ? comm : "?", comm ? (long long)pid : -1LL, inc, share,
		 (double)s->best_ns / 1e6, (double)sum / 1e6, est ? "estimated from multiplexed counts" : "exact counts",
		 spread);
	return json_pack("{s:s,s:s,s:s,s:s,s:f,s:b,s:I}", "statement", st, "inc", inc, "comm", comm ? comm : "?", "metric",
			 "task-clock", "share_percent", share, "estimate", est, "value_ns", (json_int_t)s->best_ns);
}

/* The largest share of the cohort's task-clock among the incarnations the
 * scan marked (the dominant process's comm: pids differ between runs), or
 * -1 when there is none. */
static double share_of(const struct scan *s, json_t *k)
{
	json_t *tot = cohort_task_clock(k);
	double best = -1, sum;

	if (!tot && !s->why[0] && !s->why[1] && s->acc[0] + s->acc[1] > 0) {
		/* no counted task-clock: the share of the CPU time at exit */
		sum = s->acc[0] + s->acc[1];
		for (size_t i = 0; i < s->ids.n; i++) {
			const struct an_inc *x = &s->v[i];

			if (x->seen && x->match && x->cpu_user_ns >= 0 && x->cpu_system_ns >= 0 &&
			    100.0 * (double)(x->cpu_user_ns + x->cpu_system_ns) / sum > best)
				best = 100.0 * (double)(x->cpu_user_ns + x->cpu_system_ns) / sum;
		}
		return best;
	}
	if (!tot)
		return -1;
	sum = (double)json_integer_value(json_object_get(tot, "value_ns"));
	for (size_t i = 0; i < s->ids.n; i++)
		if (s->v[i].seen && s->v[i].match && s->v[i].task_ns >= 0 && 100.0 * (double)s->v[i].task_ns / sum > best)
			best = 100.0 * (double)s->v[i].task_ns / sum;
	return best;
}

/* ---- programs ------------------------------------------------------------------ */

/* The rows of programs[] the report keeps, the largest first; the rest are
 * summed into omitted. */
#define AN_PROGRAM_ROWS 100

/* A value in ms below a second, else in s: "53.280 ms", "1.387 s". */
static void fmt_dur(double ns, char *out, size_t n)
{
	if (ns >= 1e9)
		snprintf(out, n, "%.3f s", ns / 1e9);
	else
		snprintf(out, n, "%.3f ms", ns / 1e6);
}

struct prog_acc {
	double val;
	size_t procs, valued;
	bool est;
};

static const struct prog_acc *sort_pa;

static int by_value(const void *a, const void *b)
{
	const struct prog_acc *x = &sort_pa[*(const uint32_t *)a], *y = &sort_pa[*(const uint32_t *)b];

	if (x->val != y->val)
		return x->val > y->val ? -1 : 1;
	if (x->procs != y->procs)
		return x->procs > y->procs ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/*
 * The cohort by program (scan_program()): the processes of each and the
 * sum of their counted task-clock where every incarnation has one, else of
 * their CPU time at exit (user + system), over every incarnation of the
 * first repetition.  An incarnation that never exec'd counts for the
 * program of its nearest ancestor that did (it ran that image), else for
 * its comm.  Memory: one accumulator per program (at most AN_PROGRAMS).
 */
static json_t *programs(const struct scan *s)
{
	size_t np = s->progs.n, nrow = 0, om_procs = 0, om_progs = 0, unindexed = 0;
	struct prog_acc *pa = calloc(np + 1, sizeof(*pa));
	uint32_t *order = malloc((np + 1) * sizeof(*order));
	/* the process-level share uses the counted task-clock wherever any was
	 * counted: the programs' shares are of the same metric */
	bool task = s->task_n > 0, cpu = !task && !s->why[0] && !s->why[1];
	double total = 0, om_val = 0;
	json_t *rows = json_array(), *o = NULL;

	if (!pa || !order || !rows)
		goto done;
	for (size_t i = 0; i < s->vcap; i++) {
		const struct an_inc *x = &s->v[i];
		int32_t p = x->prog;
		double v = -1;

		if (!x->seen)
			continue;
		if (x->inherit) {
			/* the nearest ancestor that exec'd; a bounded walk (cycles in a
			 * corrupt bundle analyzed on request) */
			long j = x->parent;

			for (int k = 0; j >= 0 && k < 64 && s->v[j].seen && s->v[j].inherit; k++)
				j = s->v[j].parent;
			if (j >= 0 && s->v[j].seen && !s->v[j].inherit)
				p = s->v[j].prog;
		}
		if (task && x->task_ns >= 0)
			v = (double)x->task_ns;
		else if (cpu && x->cpu_user_ns >= 0 && x->cpu_system_ns >= 0)
			v = (double)(x->cpu_user_ns + x->cpu_system_ns);
		if (v >= 0)
			total += v;
		if (p < 0 || (size_t)p >= np) {
			unindexed++;
			om_procs++;
			om_val += v > 0 ? v : 0;
			continue;
		}
		pa[p].procs++;
		if (v >= 0) {
			pa[p].val += v;
			pa[p].valued++;
			pa[p].est |= task ? x->task_est : x->ticks;
		}
	}
	for (size_t p = 0; p < np; p++)
		if (pa[p].procs)
			order[nrow++] = (uint32_t)p;
	sort_pa = pa;
	qsort(order, nrow, sizeof(*order), by_value);
	for (size_t r = 0; r < nrow; r++) {
		const struct prog_acc *a = &pa[order[r]];
		const char *key = an_ids_name(&s->progs, order[r]);
		char *sep;
		json_t *row;

		if (r >= AN_PROGRAM_ROWS) {
			om_progs++;
			om_procs += a->procs;
			om_val += a->val;
			continue;
		}
		if (key[0] == '\x1e') {
			row = json_pack("{s:o,s:n,s:n}", "program", pmu_json_text(key + 1), "image", "argv0");
		} else {
			char *img = strdup(key);

			if (!img)
				goto done;
			sep = strchr(img, '\x1f');
			if (sep)
				*sep++ = '\0';
			row = json_pack("{s:o,s:o,s:o}", "program",
					pmu_json_text(sep && *sep ? sep : base_name(img)), "image", pmu_json_text(img),
					"argv0", sep && *sep ? pmu_json_text(sep) : json_null());
			free(img);
		}
		json_object_set_new(row, "processes", json_integer((json_int_t)a->procs));
		if ((task || cpu) && a->valued) {
			json_object_set_new(row, "value_ns", json_integer((json_int_t)a->val));
			if (total > 0)
				json_object_set_new(row, "share_percent", json_real(100.0 * a->val / total));
			json_object_set_new(row, "estimate", json_boolean(a->est));
		}
		json_array_append_new(rows, row);
	}
	o = json_pack("{s:I,s:s,s:O,s:I,s:I,s:I}", "count", (json_int_t)nrow, "metric", task ? "task-clock" : "cpu_time",
		      "rows", rows, "omitted", (json_int_t)om_progs, "omitted_processes", (json_int_t)om_procs,
		      "unindexed_processes", (json_int_t)unindexed);
	if (o && (task || cpu)) {
		json_object_set_new(o, "status", json_string("ok"));
		json_object_set_new(o, "total_ns", json_integer((json_int_t)total));
		json_object_set_new(o, "omitted_value_ns", json_integer((json_int_t)om_val));
		json_object_set_new(o, "source", json_string(
			task ? (s->task_n < s->seen_n ? "counted task-clock of the incarnations that have one (not all do)"
						      : "counted task-clock of every incarnation")
			     : s->ticks_n ? "CPU time at exit (user + system), in clock ticks"
					  : "CPU time at exit (user + system)"));
	} else if (o) {
		json_object_set_new(o, "status", json_string("unavailable"));
		json_object_set_new(o, "reason", json_string("no task-clock was counted per process and not every "
							     "process's CPU time is known"));
	}
done:
	free(pa);
	free(order);
	json_decref(rows);
	return o ? o : json_pack("{s:i,s:s,s:[],s:i,s:s,s:s}", "count", 0, "metric", "cpu_time", "rows", "omitted", 0,
				 "status", "unavailable", "reason", "out of memory");
}

/* ---- wall time ---------------------------------------------------------------- */

/*
 * Linux exports CPU times in /proc in USER_HZ units, 100 a second on every
 * architecture (the kernel's own tick rate is hidden behind it): one clock
 * tick is 10 ms, and each value is truncated to whole ticks.
 */
#define AN_TICK_NS 10000000LL

/* The collectors that would put the off-CPU time somewhere (blocked in a
 * system call, runnable but waiting, sleeping).  This version of pmu lists
 * them and builds neither (record/collectors.c: "not built"); a bundle of a
 * later version says in its own fates whether they ran. */
static const char *const offcpu_collectors[] = { "syscalls", "sched" };

static json_t *fate_of(json_t *fates, const char *name)
{
	json_t *x;
	size_t i;

	json_array_foreach(fates, i, x)
		if (!strcmp(sget(x, "name"), name))
			return x;
	return NULL;
}

/* What would attribute the off-CPU time, from the bundle's own collector
 * fates; *attributing true when one of them recorded evidence. */
static void would_attribute(json_t *fates, const char *mode, bool os_streams, char *out, size_t n, bool *attributing)
{
	json_t *f[2];
	int ok = 0, nreq = 0, unav = 0, listed = 0;

	for (size_t i = 0; i < 2; i++) {
		const char *st;

		f[i] = fate_of(fates, offcpu_collectors[i]);
		if (!f[i])
			continue;
		listed++;
		st = sget(f[i], "status");
		ok += !strcmp(st, "ok") || !strcmp(st, "no-events");
		nreq += !strcmp(st, "not-requested");
		unav += strcmp(st, "ok") && strcmp(st, "no-events") && strcmp(st, "not-requested");
	}
	*attributing = ok > 0;
	if (ok && os_streams)
		snprintf(out, n, "the %s recorded where the threads waited: see the off-CPU section and the "
			 "wall-time decomposition per thread (oscall)", ok == 2
				      ? "syscalls and sched collectors"
				      : !strcmp(sget(f[0], "status"), "ok") || !strcmp(sget(f[0], "status"), "no-events")
						? "syscalls collector" : "sched collector");
	else if (ok)
		snprintf(out, n, "the %s recorded evidence, but this pmuanalyze does not attribute off-CPU time "
			 "from it yet", ok == 2 ? "syscalls and sched collectors"
				      : !strcmp(sget(f[0], "status"), "ok") || !strcmp(sget(f[0], "status"), "no-events")
						? "syscalls collector" : "sched collector");
	else if (!listed)
		snprintf(out, n, "no collector of this recording could attribute it (a syscalls or sched collector "
			 "would)");
	else if (unav)
		snprintf(out, n, "the syscalls and sched collectors would attribute it, but in this recording they "
			 "were unavailable: %s", sget(f[0] && strcmp(sget(f[0], "status"), "not-requested") ? f[0] : f[1],
						       "reason"));
	else
		snprintf(out, n, "the syscalls and sched collectors (--mode full) would attribute it; this recording "
			 "(mode %s) did not request them, and pmu " PMU_VERSION " does not build them yet", mode);
	(void)nreq;
}

/*
 * The parts of the off-CPU time the cohort's own cgroup's pressure stall
 * information (PSI, Documentation/accounting/psi.rst) puts somewhere.  Its
 * "full" states are the ones inside the off-CPU time, and they are
 * disjoint (kernel/sched/psi.c, test_state()): cpu full is "a task
 * runnable and none on a CPU", io full "a task in I/O wait and none
 * runnable".  The kernel aggregates them over the CPUs weighted by each
 * CPU's busy time, exact for one task at a time and an approximation for
 * parallel ones: labelled estimates.  The host's pressure (scope system)
 * is never the cohort's and is not used.  *sum gets their total.
 */
static json_t *psi_parts(json_t *k, double wall, double *sum)
{
	static const struct {
		const char *file, *what, *source;
	} psi[] = {
		{ "cpu.pressure", "runnable, waiting for a CPU",
		  "the cohort cgroup's cpu.pressure full_total_ns (PSI: a cohort task runnable and none on a CPU)" },
		{ "io.pressure", "waiting for I/O",
		  "the cohort cgroup's io.pressure full_total_ns (PSI: a cohort task in I/O wait and none runnable)" },
	};
	json_t *out = json_array(), *c;
	size_t i;

	*sum = 0;
	for (size_t p = 0; p < PMU_ARRAY_SIZE(psi); p++)
		json_array_foreach(json_object_get(k, "cgroup_stats"), i, c) {
			json_int_t v = json_integer_value(json_object_get(c, "value_ns"));

			if (strcmp(sget(c, "scope"), "cgroup") || strcmp(sget(c, "file"), psi[p].file) ||
			    strcmp(sget(c, "key"), "full_total_ns") || strcmp(sget(c, "status"), "ok") ||
			    !json_is_integer(json_object_get(c, "value_ns")) || v < 0)
				continue;
			json_array_append_new(out, json_pack("{s:s,s:I,s:f,s:s,s:b}", "what", psi[p].what, "value_ns", v,
							     "percent", 100.0 * (double)v / wall, "source", psi[p].source,
							     "estimate", 1));
			*sum += (double)v;
			break;
		}
	return out;
}

/*
 * The run's wall time decomposed: the cohort's time on a CPU and the rest,
 * which is a lower bound of the wall time during which no cohort task was
 * on a CPU (blocked, sleeping, or runnable but waiting): on-CPU time of
 * parallel tasks overlaps, so wall - on-CPU can only under-state it.
 * On-CPU time, the best the bundle has: the counted task-clock of every
 * incarnation (exact), else the task-clock of the cohort's own cgroup
 * (exact), else the CPU time at exit of every incarnation (user + system;
 * from /proc in clock ticks: each value truncated, so the off-CPU bound is
 * taken against the most the ticks can hide).
 */
static json_t *wall_time(const struct scan *s, json_t *k, json_t *run, json_t *fates, json_t *os, bool *attributing)
{
	json_t *tot = cohort_task_clock(k), *c, *o;
	double wall, on = -1, on_max;
	const char *src = NULL;
	bool est = false;
	json_int_t res = 0;
	char would[600], st[1600], d1[32], d2[32], d3[32];
	size_t i;

	would_attribute(fates, sget(run, "mode"), !strcmp(sget(os, "status"), "ok"), would, sizeof(would), attributing);
	if (s->root < 0 || !s->root_has_end || s->root_pre)
		return json_pack("{s:s,s:s,s:[],s:s}", "status", "unavailable", "reason",
				 s->root < 0 ? "the cohort has no root" : "the root was attached to, or still running at the end",
				 "attributed", "would_attribute", would);
	wall = (double)(s->root_end - s->root_start);
	if (tot && s->task_n >= s->seen_n) {
		on = (double)json_integer_value(json_object_get(tot, "value_ns"));
		est = json_is_true(json_object_get(tot, "estimate"));
		src = "counted task-clock, summed over every incarnation";
	}
	if (on < 0)
		json_array_foreach(json_object_get(k, "cohort"), i, c)
			if (on < 0 && !strcmp(sget(c, "counter"), "task-clock") && !strcmp(sget(c, "scope"), "cgroup") &&
			    !strcmp(sget(c, "status"), "ok") && json_is_integer(json_object_get(c, "value_ns"))) {
				on = (double)json_integer_value(json_object_get(c, "value_ns"));
				est = json_is_true(json_object_get(c, "estimate"));
				src = "counted task-clock of the cohort's own cgroup";
			}
	if (on < 0 && !s->why[0] && !s->why[1] && s->seen_n) {
		on = s->acc[0] + s->acc[1];
		if (s->ticks_n) {
			est = true;
			res = AN_TICK_NS;
			src = "CPU time at exit (user + system) of every incarnation, in 10 ms clock ticks";
		} else {
			src = !strcmp(sget(run, "mode"), "none")
				      ? "CPU time of the command and the descendants it waited for (wait4 rusage)"
				      : "CPU time at exit (user + system) of every incarnation";
		}
	}
	if (on < 0 || wall <= 0)
		return json_pack("{s:s,s:s,s:[],s:s}", "status", "unavailable", "reason",
				 wall <= 0 ? "the root's lifetime is zero"
					   : "neither a counted task-clock nor every incarnation's CPU time is in the bundle",
				 "attributed", "would_attribute", would);
	/* each tick-resolution value hides up to one tick: user and system */
	on_max = on + (double)(2 * (json_int_t)s->ticks_n * res);
	double off = wall - on_max > 0 ? wall - on_max : 0, offp = 100.0 * off / wall, att = 0, un;
	json_t *parts = psi_parts(k, wall, &att);
	char atts[600] = "";

	un = off - att > 0 ? off - att : 0;
	fmt_dur(wall, d1, sizeof(d1));
	fmt_dur(on, d2, sizeof(d2));
	fmt_dur(off, d3, sizeof(d3));
	/* a part below 0.5% of the wall time is left to --json */
	json_array_foreach(parts, i, c)
		if (json_real_value(json_object_get(c, "percent")) >= 0.5) {
			char v[32];
			size_t l = strlen(atts);

			fmt_dur((double)json_integer_value(json_object_get(c, "value_ns")), v, sizeof(v));
			snprintf(atts + l, sizeof(atts) - l, "%s~%s %s", l ? ", " : "", v, sget(c, "what"));
		}
	if (atts[0]) {
		char u[32];
		size_t l = strlen(atts);

		fmt_dur(un, u, sizeof(u));
		snprintf(atts + l, sizeof(atts) - l, " (the cohort cgroup's pressure stall times); %s not attributed", u);
	} else {
		snprintf(atts, sizeof(atts), "none of it attributed");
	}
	snprintf(st, sizeof(st), "wall %s; cohort on-CPU %s%s (%s%s), parallelism %.2f; off-CPU at least %s (%.0f%% of "
		 "wall: no cohort task on a CPU: blocked, sleeping or runnable but waiting): %s: %s",
		 d1, est ? "~" : "", d2, src, res ? ", each value truncated to a tick" : est ? ", estimated" : "",
		 on / wall, d3, offp, atts, would);
	o = json_pack("{s:s,s:I,s:I,s:s,s:b,s:f,s:f,s:I,s:f,s:b,s:o,s:I,s:f,s:s,s:s}", "status", "ok", "wall_ns",
		      (json_int_t)wall, "on_cpu_ns", (json_int_t)on, "on_cpu_source", src, "on_cpu_estimate", est,
		      "parallelism", on / wall, "on_cpu_percent", 100.0 * on / wall, "off_cpu_ns", (json_int_t)off,
		      "off_cpu_percent", offp, "off_cpu_is_lower_bound", 1, "attributed", parts, "unattributed_ns",
		      (json_int_t)un, "unattributed_percent", 100.0 * un / wall, "would_attribute", would, "statement", st);
	if (o && res)
		json_object_set_new(o, "on_cpu_resolution_ns", json_integer(res));
	return o;
}

/*
 * The dominant cost, of the wall time: the off-CPU time when it is the
 * larger part (at least half the wall time, or more than the largest CPU
 * consumer named), else the program or the process with the largest share
 * of the cohort's CPU, whichever names more: a program of two or more
 * processes whose share beats the largest single process.  proc is the
 * process-level statement (dominant_cost()), consumed.
 */
static json_t *dominant(json_t *proc, json_t *wall, json_t *progs)
{
	json_t *best = NULL, *r, *o = proc;
	double pshare = json_real_value(json_object_get(proc, "share_percent")), named_ns = -1;
	bool wall_ok = !strcmp(sget(wall, "status"), "ok");
	double wall_ns = (double)json_integer_value(json_object_get(wall, "wall_ns"));
	char st[2400];
	size_t i;

	json_array_foreach(json_object_get(progs, "rows"), i, r)
		if (!best && json_integer_value(json_object_get(r, "processes")) >= 2 &&
		    json_object_get(r, "share_percent"))
			best = r;
	if (best && json_real_value(json_object_get(best, "share_percent")) > pshare + 1e-9 &&
	    json_object_get(proc, "share_percent")) {
		double sh = json_real_value(json_object_get(best, "share_percent"));
		bool est = json_is_true(json_object_get(best, "estimate"));
		char v[32], t[32];

		fmt_dur((double)json_integer_value(json_object_get(best, "value_ns")), v, sizeof(v));
		fmt_dur((double)json_integer_value(json_object_get(progs, "total_ns")), t, sizeof(t));
		snprintf(st, sizeof(st), "program '%s' (%lld processes) spent %.0f%% of the cohort's CPU (%s %s%s of %s%s); "
			 "the largest single process, %.0f%%", sget(best, "program"),
			 (long long)json_integer_value(json_object_get(best, "processes")), sh,
			 !strcmp(sget(progs, "metric"), "task-clock") ? "task-clock" : "CPU time at exit", est ? "~" : "", v, t,
			 est ? ", estimated" : "", pshare);
		o = json_pack("{s:s,s:s,s:s,s:I,s:s,s:f,s:b,s:I}", "statement", st, "level", "program", "program",
			      sget(best, "program"), "processes", json_integer_value(json_object_get(best, "processes")),
			      "metric", sget(progs, "metric"), "share_percent", sh, "estimate", est, "value_ns",
			      json_integer_value(json_object_get(best, "value_ns")));
		named_ns = (double)json_integer_value(json_object_get(best, "value_ns"));
		json_decref(proc);
	} else if (json_object_get(proc, "share_percent")) {
		json_object_set_new(o, "level", json_string("process"));
		named_ns = (double)json_integer_value(json_object_get(proc, "value_ns"));
	}
	if (wall_ok && wall_ns > 0 && (json_real_value(json_object_get(wall, "off_cpu_percent")) >= 50 ||
				       (double)json_integer_value(json_object_get(wall, "off_cpu_ns")) > named_ns)) {
		double off = (double)json_integer_value(json_object_get(wall, "off_cpu_ns"));
		char a[32], b[32], cpu[1400];

		fmt_dur(off, a, sizeof(a));
		fmt_dur(wall_ns, b, sizeof(b));
		snprintf(cpu, sizeof(cpu), "%s", sget(o, "statement"));
		char parts[600] = "";
		json_t *c;

		/* the attributed parts, largest first as the cgroup gave them */
		json_array_foreach(json_object_get(wall, "attributed"), i, c)
			if (json_real_value(json_object_get(c, "percent")) >= 0.5) {
				char v[32];
				size_t l = strlen(parts);

				fmt_dur((double)json_integer_value(json_object_get(c, "value_ns")), v, sizeof(v));
				snprintf(parts + l, sizeof(parts) - l, "%s~%s (%.0f%% of wall) %s", l ? ", " : "", v,
					 json_real_value(json_object_get(c, "percent")), sget(c, "what"));
			}
		if (parts[0]) {
			char u[32];
			size_t l = strlen(parts);

			fmt_dur((double)json_integer_value(json_object_get(wall, "unattributed_ns")), u, sizeof(u));
			snprintf(parts + l, sizeof(parts) - l, ", by the cohort cgroup's pressure stall times; %s not "
				 "attributed", u);
		} else if (strstr(sget(wall, "would_attribute"), "(oscall)")) {
			snprintf(parts, sizeof(parts), "split per thread by state, syscall and file below");
		} else {
			snprintf(parts, sizeof(parts), "not attributed");
		}
		snprintf(st, sizeof(st), "%.0f%% of wall time (at least %s of %s) no cohort process was on a CPU "
			 "(off-CPU: blocked, sleeping or waiting): %s: %s; on CPU (%.0f%% of wall): %s",
			 100.0 * off / wall_ns, a, b, parts, sget(wall, "would_attribute"),
			 json_real_value(json_object_get(wall, "on_cpu_percent")), cpu);
		json_object_set_new(o, "statement", json_string(st));
		json_object_set_new(o, "level", json_string("off-cpu"));
		json_object_set_new(o, "wall_share_percent", json_real(100.0 * off / wall_ns));
	} else if (wall_ok && wall_ns > 0 && named_ns >= 0) {
		json_object_set_new(o, "wall_share_percent", json_real(100.0 * named_ns / wall_ns));
	}
	return o;
}

/*
 * The dominant cost names the system call, file and program when blocking
 * dominates (an_oscall_statement()): the largest wait of the off-CPU
 * intervals is at least half the wall time, or the off-CPU time is the
 * dominant cost already.  The statement leads, the rest follows it.
 */
static void dominant_blocked(json_t *dom, json_t *wall, json_t *os)
{
	char st[1200], all[4000];
	bool off = !strcmp(sget(dom, "level"), "off-cpu");

	if (!dom || strcmp(sget(wall, "status"), "ok") ||
	    !an_oscall_statement(os, (double)json_integer_value(json_object_get(wall, "wall_ns")), off, st, sizeof(st)))
		return;
	snprintf(all, sizeof(all), "%s. %s", st, sget(dom, "statement"));
	json_object_set_new(dom, "statement", json_string(all));
	json_object_set_new(dom, "level", json_string("blocked"));
	json_object_set(dom, "blocked", json_object_get(os, "blocked"));
}

/* ---- the profile --------------------------------------------------------------- */

/* Fewer samples than this in the scope the dominant cost names: its share
 * is said to be rough. */
#define AN_PROF_FEW 50

/*
 * The profile section of a bundle without a samples stream: why, from the
 * sampling collector's fate (its lifecycle): not requested, unavailable
 * (with the reason and remedy), failed, or a recording without the
 * collector at all.
 */
static json_t *profile_absent(json_t *fates)
{
	json_t *f = fate_of(fates, "sampling");
	const char *st = f ? sget(f, "status") : NULL;

	if (!f)
		return json_pack("{s:s,s:s,s:s}", "status", "not-recorded", "reason",
				 "this recording has no sampling collector (a bundle of spec 1.5 or older, or a pmurec "
				 "without sampling)",
				 "remedy", "record again with pmurec --mode light or --mode full");
	if (!strcmp(st, "not-requested") || !json_is_true(json_object_get(f, "requested")))
		return json_pack("{s:s,s:s,s:s}", "status", "not-requested", "reason",
				 "sampling was not requested (mode none)", "remedy",
				 "record with pmurec --mode light (99 Hz, no call chains) or --mode full (999 Hz, call "
				 "chains)");
	if (!strcmp(st, "ok") || !strcmp(st, "no-events"))
		return json_pack("{s:s,s:s,s:s}", "status", "missing", "reason",
				 "the sampling collector ran, but the bundle has no samples stream", "remedy",
				 "record again; pmuvalidate says what else the bundle lacks");
	return json_pack("{s:s,s:o,s:o}", "status", !strcmp(st, "unavailable") ? "unavailable" : st, "reason",
			 pmu_json_text(*sget(f, "reason") && strcmp(sget(f, "reason"), "?") ? sget(f, "reason")
											 : "the sampling collector did not run"),
			 "remedy", pmu_json_text(strcmp(sget(f, "remedy"), "?") ? sget(f, "remedy") : ""));
}

/*
 * Repetitions 2 and later: each one's samples aggregated in turn (one in
 * memory at a time), and of each program the top self function with its
 * share, so that the spread across repetitions shows beside repetition 1's
 * section.
 */
static json_t *profile_repetitions(const struct pmu_bundle *b, int nrep, json_t *first)
{
	json_t *out = json_array(), *pr;
	size_t i;

	for (int r = 1; r <= nrep; r++) {
		struct an_prof *p = NULL;
		json_t *pj = r == 1 ? json_incref(first) : NULL, *row;
		int err = r == 1 ? 0 : an_prof_load(&p, b, r);

		if (!pj && !err && p)
			pj = an_prof_json(p);
		an_prof_free(p);
		row = json_pack("{s:i}", "repetition", r);
		if (err || !pj || strcmp(sget(pj, "status"), "ok")) {
			json_object_set_new(row, "status", json_string(err ? "failed" : pj ? sget(pj, "status") : "missing"));
			json_object_set_new(row, "reason", pmu_json_text(err ? pmu_error_detail() : pj ? sget(pj, "reason")
												: "no samples stream"));
		} else {
			json_t *progs = json_array();

			json_object_set_new(row, "status", json_string("ok"));
			json_object_set(row, "samples", json_object_get(json_object_get(pj, "accounting"), "samples"));
			json_array_foreach(json_object_get(pj, "programs"), i, pr) {
				json_t *top = json_array_get(json_object_get(pr, "self"), 0);

				if (!top)
					continue;
				json_array_append_new(progs, json_pack("{s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O}", "program",
					json_object_get(pr, "program"), "samples", json_object_get(pr, "samples"), "function",
					json_object_get(top, "function"), "status", json_object_get(top, "status"), "top_samples",
					json_object_get(top, "samples"), "share_percent", json_object_get(top, "share_percent"),
					"ci_low_percent", json_object_get(top, "ci_low_percent"), "ci_high_percent",
					json_object_get(top, "ci_high_percent")));
			}
			json_object_set_new(row, "programs", progs);
		}
		json_decref(pj);
		json_array_append_new(out, row);
	}
	return out;
}

/*
 * The samples join the wall-time decomposition: the on-CPU time split by
 * the functions the cohort's samples name (issue 16).  A function's share
 * of the cohort's samples, with its 95% Wilson interval, times the on-CPU
 * time: an estimate, labelled so, and a share of time only when the event
 * counts time (cpu-clock, task-clock); on cycles it is a share of cycles.
 */
static int by_samples_desc(const void *a, const void *b)
{
	json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "samples"));
	json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "samples"));

	return x < y ? 1 : x > y ? -1 : 0;
}

static void wall_by_code(json_t *wt, json_t *prof)
{
	json_t *acct = json_object_get(prof, "accounting"), *cfg = json_object_get(prof, "config"), *pr, *f;
	json_t *rows[512], *list;
	size_t i, j, nr = 0;
	json_int_t n = json_integer_value(json_object_get(acct, "samples"));
	double on = (double)json_integer_value(json_object_get(wt, "on_cpu_ns"));
	const char *ev = sget(cfg, "event");
	bool timed = !strcmp(ev, "cpu-clock") || !strcmp(ev, "task-clock");
	json_int_t lost = json_integer_value(json_object_get(acct, "lost_records")) +
			  json_integer_value(json_object_get(acct, "lost_samples")) +
			  json_integer_value(json_object_get(acct, "throttles"));
	char basis[400];

	if (!wt || !prof || strcmp(sget(wt, "status"), "ok") || strcmp(sget(prof, "status"), "ok") || n <= 0 ||
	    !json_object_get(wt, "on_cpu_ns"))
		return;
	json_array_foreach(json_object_get(prof, "programs"), i, pr)
		json_array_foreach(json_object_get(pr, "self"), j, f)
			if (nr < PMU_ARRAY_SIZE(rows) && !strcmp(sget(f, "status"), "ok")) {
				rows[nr] = json_deep_copy(f);
				json_object_set_new(rows[nr], "program", json_string(sget(pr, "program")));
				nr++;
			}
	qsort(rows, nr, sizeof(*rows), by_samples_desc);
	list = json_array();
	for (i = 0; i < nr; i++) {
		json_int_t k = json_integer_value(json_object_get(rows[i], "samples"));
		double lo, hi;

		if (i < 5) {
			pmu_wilson95((uint64_t)k, (uint64_t)n, &lo, &hi);
			json_array_append_new(list, json_pack("{s:s,s:s,s:O*,s:O*,s:I,s:f,s:f,s:f,s:I,s:I,s:I,s:b}",
				"program", sget(rows[i], "program"), "function", sget(rows[i], "function"),
				"file", json_is_string(json_object_get(rows[i], "file")) ? json_object_get(rows[i], "file") : NULL,
				"line", json_is_integer(json_object_get(rows[i], "line")) ? json_object_get(rows[i], "line") : NULL,
				"samples", k, "share_percent", 100.0 * (double)k / (double)n, "ci_low_percent", 100.0 * lo,
				"ci_high_percent", 100.0 * hi, "est_ns", (json_int_t)(on * (double)k / (double)n),
				"est_low_ns", (json_int_t)(on * lo), "est_high_ns", (json_int_t)(on * hi), "estimate", 1));
		}
		json_decref(rows[i]);
	}
	snprintf(basis, sizeof(basis), "%s of %lld %s samples (self, 95%% Wilson intervals) times the on-CPU time%s%s",
		 timed ? "each function's share" : "each function's share of the event, not of time,",
		 (long long)n, ev, timed ? "" : " (cycles per ns differ between functions)",
		 lost ? "; samples were lost or throttled, so the shares may be biased" : "");
	json_object_set_new(wt, "on_cpu_by_code", json_pack("{s:o,s:s,s:I,s:b,s:b}", "functions", list, "basis", basis,
							     "samples", n, "share_of_time", timed, "estimate", 1));
}

/* The profile's scope that the dominant cost names: its program, or the
 * process's incarnation within its program; *name is what to call it. */
static json_t *profile_scope(json_t *dom, json_t *prof, const char **name, json_t **inc)
{
	json_t *pr, *x;
	size_t i, k;

	*inc = NULL;
	if (json_object_get(dom, "program")) {
		json_array_foreach(json_object_get(prof, "programs"), i, pr)
			if (!strcmp(sget(pr, "program"), sget(dom, "program"))) {
				*name = sget(pr, "program");
				return pr;
			}
		return NULL;
	}
	if (json_object_get(dom, "inc"))
		json_array_foreach(json_object_get(prof, "programs"), i, pr)
			json_array_foreach(json_object_get(pr, "incarnations"), k, x)
				if (!strcmp(sget(x, "inc"), sget(dom, "inc"))) {
					*name = sget(pr, "program");
					*inc = x;
					/* a program of one process: the same samples */
					return json_integer_value(json_object_get(pr, "processes_with_samples")) == 1 ? pr : x;
				}
	return NULL;
}

/*
 * The dominant cost's statement gains where in the code: "within PROGRAM,
 * N% ± M% of its K samples in `func` (file.c:LINE)", hedged when the
 * samples are few or some were lost or throttled.
 */
static void dominant_profile(json_t *dom, json_t *prof)
{
	const char *name = NULL;
	json_t *inc, *sc, *top, *acct = json_object_get(prof, "accounting");
	char st[3200], fl[600] = "", hedge[300] = "";
	double lo, hi, sh;
	json_int_t k, lost, lsamp, thr;
	char pm[32];
	bool named;

	if (!dom || strcmp(sget(prof, "status"), "ok") || !(sc = profile_scope(dom, prof, &name, &inc)) ||
	    !(top = json_array_get(json_object_get(sc, "self"), 0)))
		return;
	k = json_integer_value(json_object_get(sc, "samples"));
	sh = json_real_value(json_object_get(top, "share_percent"));
	lo = json_real_value(json_object_get(top, "ci_low_percent"));
	hi = json_real_value(json_object_get(top, "ci_high_percent"));
	lost = json_integer_value(json_object_get(acct, "lost_records"));
	lsamp = json_integer_value(json_object_get(acct, "lost_samples"));
	thr = json_integer_value(json_object_get(acct, "throttles"));
	if (json_object_get(top, "file"))
		snprintf(fl, sizeof(fl), " (%s:%lld)", strrchr(sget(top, "file"), '/') ? strrchr(sget(top, "file"), '/') + 1
										       : sget(top, "file"),
			 (long long)json_integer_value(json_object_get(top, "line")));
	else if (json_object_get(top, "reason"))
		snprintf(fl, sizeof(fl), " (%s)", sget(top, "reason"));
	if (k < AN_PROF_FEW)
		snprintf(hedge, sizeof(hedge), "only %lld samples: a rough share", (long long)k);
	if (lost || lsamp || thr) {
		size_t l = strlen(hedge);

		snprintf(hedge + l, sizeof(hedge) - l, "%s%lld records lost, %lld samples lost and %lld throttles in the "
			 "recording: the shares may be skewed", l ? "; " : "", (long long)lost, (long long)lsamp,
			 (long long)thr);
	}
	/* a half-width under 1 point keeps its first decimal: never "± 0%" */
	if ((hi - lo) / 2 < 1)
		snprintf(pm, sizeof(pm), "%.1f", (hi - lo) / 2);
	else
		snprintf(pm, sizeof(pm), "%.0f", (hi - lo) / 2);
	named = !strcmp(sget(top, "status"), "ok") || (!strcmp(sget(top, "status"), "kernel") &&
						       json_is_string(json_object_get(top, "symbol")));
	snprintf(st, sizeof(st), "%s; within %s%s, %.0f%% ± %s%% of its %lld samples %s `%s`%s%s%s%s",
		 sget(dom, "statement"), name, inc && sc == inc ? " (that process)" : "", sh, pm, (long long)k,
		 named ? "in" : "in frames that could not be symbolized:", sget(top, "function"), fl,
		 hedge[0] ? " (" : "", hedge, hedge[0] ? ")" : "");
	json_object_set_new(dom, "statement", pmu_json_text(st));
	{
		json_t *pf = json_pack("{s:o,s:O,s:O?,s:I,s:I,s:f,s:f,s:f,s:b,s:o}", "program",
				      pmu_json_text(name), "function", json_object_get(top, "function"), "symbol",
				      json_object_get(top, "symbol"), "samples",
				      json_integer_value(json_object_get(top, "samples")), "scope_samples", k,
				      "share_percent", sh, "ci_low_percent", lo, "ci_high_percent", hi, "estimate", true,
				      "hedge", hedge[0] ? pmu_json_text(hedge) : json_null());

		/* file and line only where the function's hottest line is known */
		if (pf && json_object_get(top, "file")) {
			json_object_set(pf, "file", json_object_get(top, "file"));
			json_object_set(pf, "line", json_object_get(top, "line"));
		}
		json_object_set_new(dom, "profile", pf);
	}
}

/* ---- phases ------------------------------------------------------------------ */

/* Marks listed in the report; the rest are counted (marks_omitted). */
#define AN_MARKS 1000

static bool not_mark(const char *line)
{
	return strncmp(line, "{\"type\":\"mark\",", 15) != 0;
}

struct marks {
	json_t *list;
	json_int_t start, split, omitted;
};

static int mark_record(json_t *r, void *ctx)
{
	struct marks *mk = ctx;

	if (json_array_size(mk->list) < AN_MARKS)
		json_array_append_new(mk->list, json_pack("{s:s,s:I}", "name", sget(r, "name"), "t_ns",
							  json_integer_value(json_object_get(r, "t_ns")) - mk->start));
	else
		mk->omitted++;
	if (!strcmp(sget(r, "name"), "pmurec:delay-end"))
		mk->split = json_integer_value(json_object_get(r, "t_ns"));
	return 0;
}

/* Start-up and steady state, split at the --delay mark; kept apart, and
 * said plainly that the counters cover the whole run. */
static json_t *phases(const struct pmu_bundle *b, json_t *run, const struct scan *s)
{
	json_t *out = json_array(), *o;
	struct marks mk = { json_array(), 0, -1, 0 };
	json_int_t end;

	mk.start = s->root >= 0 ? s->root_start : json_integer_value(json_object_get(run, "start_ns"));
	end = s->root >= 0 && s->root_has_end ? s->root_end : json_integer_value(json_object_get(run, "end_ns"));
	each_record(b, 1, "spans.jsonl", not_mark, mark_record, &mk);
	if (mk.split >= mk.start && mk.split <= end) {
		json_array_append_new(out, json_pack("{s:s,s:I,s:I}", "name", "startup", "from_ns", (json_int_t)0,
						     "to_ns", mk.split - mk.start));
		json_array_append_new(out, json_pack("{s:s,s:I,s:I}", "name", "steady", "from_ns", mk.split - mk.start,
						     "to_ns", end - mk.start));
	}
	o = json_pack("{s:o,s:o,s:s}", "phases", out, "marks", mk.list, "note",
		      json_array_size(out) ? "the counters and totals cover the whole run: this bundle has no "
					     "time-resolved evidence to split them by phase"
					   : "no pmurec:delay-end mark (pmurec --delay): the counters' run is one phase; "
					     "the program's own marks (startup-end, warmup-end) cut the runtime evidence "
					     "(runtime.phases)");
	if (o && mk.omitted)
		json_object_set_new(o, "marks_omitted", json_integer(mk.omitted));
	return o;
}

/* ---- the listed processes --------------------------------------------------- */

/* Per listed incarnation, at most this many tids and execs are copied into
 * the report (the first tids; the last execs, whose last is the image it
 * ended in); "threads" keeps the count, *_omitted what was left out. */
#define AN_LIST_TIDS 64
#define AN_LIST_EXECS 16

/* How significant an incarnation is, for the listing: its CPU time
 * (user + system, as far as measured), else its counted task-clock, else
 * -1 (nothing measured: listed last, in cohort order). */
static int64_t significance(const struct an_inc *x)
{
	if (x->cpu_user_ns >= 0 || x->cpu_system_ns >= 0)
		return (x->cpu_user_ns > 0 ? x->cpu_user_ns : 0) + (x->cpu_system_ns > 0 ? x->cpu_system_ns : 0);
	return x->task_ns;
}

static const struct an_inc *sort_v;

static int by_significance(const void *a, const void *b)
{
	const struct an_inc *x = &sort_v[*(const uint32_t *)a], *y = &sort_v[*(const uint32_t *)b];
	int64_t sx = significance(x), sy = significance(y);

	if (sx != sy)
		return sx > sy ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * List incarnation i and those of its ancestors that are not listed yet,
 * if all of them fit in max: a listed process always shows where it hangs
 * in the tree.  The walk stops at a listed ancestor, at a parent that is
 * not in the cohort, and at a cycle (tent: on this walk already).
 */
static void list_with_ancestors(struct scan *s, long i, size_t *listed, size_t max, uint32_t *chain)
{
	size_t n = 0;
	bool fits = true;

	for (long j = i; j >= 0 && s->v[j].seen && !s->v[j].listed && !s->v[j].tent; j = s->v[j].parent) {
		if (*listed + n >= max) {
			fits = false;
			break;
		}
		s->v[j].tent = true;
		chain[n++] = (uint32_t)j;
	}
	for (size_t k = 0; k < n; k++) {
		s->v[chain[k]].tent = false;
		s->v[chain[k]].listed = fits;
	}
	if (fits)
		*listed += n;
}

/* Choose the listed incarnations: the root, the dominant one, then by
 * significance, each with its ancestors, up to max.  Returns how many. */
static long select_listed(struct scan *s, size_t max)
{
	uint32_t *order = malloc((s->ids.n + 1) * sizeof(*order)), *chain = malloc((max + 1) * sizeof(*chain));
	size_t n = 0, listed = 0;

	if (!order || !chain) {
		free(order);
		free(chain);
		return -1;
	}
	if (s->root >= 0)
		list_with_ancestors(s, s->root, &listed, max, chain);
	if (s->best >= 0)
		list_with_ancestors(s, s->best, &listed, max, chain);
	for (size_t i = 0; i < s->ids.n; i++)
		if (s->v[i].seen && !s->v[i].listed)
			order[n++] = (uint32_t)i;
	sort_v = s->v;
	qsort(order, n, sizeof(*order), by_significance);
	for (size_t i = 0; i < n && listed < max; i++)
		list_with_ancestors(s, order[i], &listed, max, chain);
	free(order);
	free(chain);
	return (long)listed;
}

/* The copy of a listed incarnation that the report keeps. */
static json_t *listed_copy(json_t *in)
{
	json_t *c = json_copy(in), *t = json_object_get(in, "tids"), *e = json_object_get(in, "exec");
	size_t nt = json_array_size(t), ne = json_array_size(e);

	if (!c)
		return NULL;
	json_object_set_new(c, "threads", json_integer((json_int_t)nt));
	if (nt > AN_LIST_TIDS) {
		json_t *a = json_array();

		for (size_t i = 0; i < AN_LIST_TIDS; i++)
			json_array_append(a, json_array_get(t, i));
		json_object_set_new(c, "tids", a);
		json_object_set_new(c, "tids_omitted", json_integer((json_int_t)(nt - AN_LIST_TIDS)));
	}
	if (ne > AN_LIST_EXECS) {
		json_t *a = json_array();

		for (size_t i = ne - AN_LIST_EXECS; i < ne; i++)
			json_array_append(a, json_array_get(e, i));
		json_object_set_new(c, "exec", a);
		json_object_set_new(c, "exec_omitted", json_integer((json_int_t)(ne - AN_LIST_EXECS)));
	}
	if (ne) {
		/* the images it ran, in order, by basename: a shim (env, bash)
		 * that exec'd the program shows as such, not as the program */
		json_t *kept = json_object_get(c, "exec"), *x;
		char chain[1024];
		size_t i, o = 0;

		chain[0] = '\0';
		if (ne > AN_LIST_EXECS)
			o = (size_t)snprintf(chain, sizeof(chain), "\u2026");
		json_array_foreach(kept, i, x) {
			const char *p = json_string_value(json_object_get(x, "path"));

			if (o < sizeof(chain))
				o += (size_t)snprintf(chain + o, sizeof(chain) - o, "%s%s", o ? " \u2192 " : "",
						      p ? base_name(p) : "?");
		}
		json_object_set_new(c, "exec_chain", pmu_json_text(chain));
	}
	return c;
}

/* Pass 2 over the cohort: the listed incarnations copied, in cohort order,
 * and the dominant one's comm and pid. */
struct kept {
	json_t *in;
	uint32_t num, seq;
};

struct keep {
	struct scan *s;
	struct kept *list;   /* the listed incarnations, as the walk gives them */
	size_t n, max;
	char *dcomm;
	json_int_t dpid;
};

static int keep_inc(void *ctx, json_t *in, size_t seq)
{
	struct keep *k = ctx;
	long i = an_ids_find(&k->s->ids, sget(in, "id"));
	json_t *c;

	if (i < 0 || k->s->v[i].seq != seq)
		return 0; /* not the incarnation indexed under this id (an id used twice) */
	if (i == k->s->best && !k->dcomm) {
		if (!(k->dcomm = strdup(sget(in, "comm"))))
			return pmu_error(PMU_ERR_NOMEM, "out of memory");
		k->dpid = json_integer_value(json_object_get(in, "pid"));
	}
	if (!k->s->v[i].listed || k->s->v[i].pos >= 0 || k->n >= k->max)
		return 0;
	if (!(c = listed_copy(in)))
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	k->s->v[i].pos = 0; /* kept; its place is set in cohort order below */
	k->list[k->n++] = (struct kept){ c, (uint32_t)i, (uint32_t)seq };
	return 0;
}

static int by_seq(const void *a, const void *b)
{
	const struct kept *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A count with its thousands grouped: 99,800. */
static void grouped(size_t v, char *out, size_t n)
{
	char d[32];
	size_t len, o = 0;

	snprintf(d, sizeof(d), "%zu", v);
	len = strlen(d);
	for (size_t i = 0; i < len && o + 2 < n; i++) {
		if (i && (len - i) % 3 == 0)
			out[o++] = ',';
		out[o++] = d[i];
	}
	out[o] = '\0';
}

/*
 * What the listing leaves out, said exactly: how many incarnations, and
 * their CPU time (user + system where both were measured, and for how many
 * that was).  The statement is the line the text and HTML reports print.
 */
static json_t *listing(const struct scan *s, size_t listed, size_t max)
{
	size_t omitted = s->count - listed, measured = 0, unmeasured = 0, counted = 0;
	double cpu = 0, task = 0;
	char n1[32], n2[32], what[300], st[400];
	json_t *o;

	for (size_t i = 0; i < s->ids.n; i++) {
		const struct an_inc *x = &s->v[i];

		if (!x->seen || x->listed)
			continue;
		if (x->cpu_user_ns >= 0 && x->cpu_system_ns >= 0) {
			cpu += (double)(x->cpu_user_ns + x->cpu_system_ns);
			measured++;
		} else {
			unmeasured++;
		}
		if (x->task_ns >= 0) {
			task += (double)x->task_ns;
			counted++;
		}
	}
	o = json_pack("{s:I,s:I,s:I,s:I,s:s}", "incarnations", (json_int_t)s->count, "listed", (json_int_t)listed,
		      "omitted", (json_int_t)omitted, "max_processes", (json_int_t)max, "order",
		      "the root, the dominant process, then by CPU time (cpu_user_ns + cpu_system_ns, else counted "
		      "task-clock), each with its ancestors");
	if (!o || !omitted)
		return o;
	grouped(omitted, n1, sizeof(n1));
	/* /proc's CPU times come in 10 ms clock ticks, so thousands of short
	 * processes add up to 0 there while their counted task-clock says
	 * seconds: where task-clock was counted, the statement leads with it */
	if (counted) {
		json_object_set_new(o, "omitted_task_clock",
				    json_pack("{s:s,s:I,s:I,s:s}", "status", "ok", "value_ns", (json_int_t)task,
					      "counted", (json_int_t)counted, "source",
					      "the counting collector's task-clock totals of the omitted incarnations"));
		grouped(counted, n2, sizeof(n2));
		if (task >= 1e9)
			snprintf(what, sizeof(what), "%.1f s counted task-clock", task / 1e9);
		else
			snprintf(what, sizeof(what), "%.3f ms counted task-clock", task / 1e6);
		if (counted < omitted)
			snprintf(what + strlen(what), sizeof(what) - strlen(what), " in the %s counted", n2);
	}
	if (measured) {
		json_object_set_new(o, "omitted_cpu",
				    json_pack("{s:s,s:I,s:I}", "status", "ok", "value_ns", (json_int_t)cpu, "measured",
					      (json_int_t)measured));
		char c[120];

		if (cpu >= 1e9)
			snprintf(c, sizeof(c), "%.1f s CPU", cpu / 1e9);
		else
			snprintf(c, sizeof(c), "%.3f ms CPU", cpu / 1e6);
		if (unmeasured) {
			grouped(measured, n2, sizeof(n2));
			snprintf(c + strlen(c), sizeof(c) - strlen(c), " in the %s with a measured CPU time", n2);
		}
		if (counted)
			snprintf(what + strlen(what), sizeof(what) - strlen(what), " (/proc: %s)", c);
		else
			snprintf(what, sizeof(what), "%s", c);
	} else {
		json_object_set_new(o, "omitted_cpu", json_pack("{s:s,s:s}", "status", "unavailable", "reason",
								 "no omitted incarnation has a measured CPU time"));
		if (!counted)
			snprintf(what, sizeof(what), "CPU time not measured");
	}
	snprintf(st, sizeof(st), "%s more process%s, %s, not listed; --max-processes N lists more", n1,
		 omitted == 1 ? "" : "es", what);
	json_object_set_new(o, "statement", json_string(st));
	return o;
}

/* ---- the process tree's order ------------------------------------------------ */

/*
 * Depth-first order of the listed incarnations (cohort[], n of them, at[]
 * their id numbers), as [{index, depth}], in O(n): the renderers walk it
 * instead of searching for children.  A listed incarnation's parent is
 * listed too (select_listed), unless it is not in the cohort; such
 * incarnations, and any the walk cannot reach (parent cycles: a corrupt
 * bundle analyzed on request), come last at depth 0, each once.
 */
static json_t *tree_order(const struct scan *s, const uint32_t *at, size_t n)
{
	int32_t *kid = malloc((n + 1) * sizeof(*kid)), *next = malloc((n + 1) * sizeof(*next));
	int32_t *stack = malloc((n + 1) * sizeof(*stack)), *parent = malloc((n + 1) * sizeof(*parent));
	bool *seen = calloc(n + 1, sizeof(*seen));
	int *depth = calloc(n + 1, sizeof(*depth));
	json_t *out = json_array();
	size_t sp = 0;

	if (!kid || !next || !stack || !parent || !seen || !depth)
		goto done;
	for (size_t i = 0; i < n; i++) {
		int32_t p = s->v[at[i]].parent;

		parent[i] = p >= 0 ? s->v[p].pos : -1;
		kid[i] = -1;
	}
	/* children in cohort order: prepended from the last */
	for (size_t i = n; i-- > 0;)
		if (parent[i] >= 0) {
			next[i] = kid[parent[i]];
			kid[parent[i]] = (int32_t)i;
		}
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++) {
			/* roots first; then whatever the walks did not reach */
			if (seen[i] || (pass == 0 && parent[i] >= 0))
				continue;
			stack[sp++] = (int32_t)i;
			depth[i] = 0;
			seen[i] = true;
			while (sp) {
				int32_t x = stack[--sp], y;
				size_t c = 0, w;

				json_array_append_new(out, json_pack("{s:I,s:i}", "index", (json_int_t)x, "depth", depth[x]));
				/* children pushed in reverse: walked in cohort order */
				for (y = kid[x]; y >= 0; y = next[y])
					c += !seen[y];
				w = sp + c;
				for (y = kid[x]; y >= 0; y = next[y])
					if (!seen[y]) {
						seen[y] = true;
						depth[y] = depth[x] < 64 ? depth[x] + 1 : 64;
						stack[--w] = y;
					}
				sp += c;
			}
		}
done:
	free(kid);
	free(next);
	free(stack);
	free(parent);
	free(seen);
	free(depth);
	return out;
}
/* ---- repetitions ----------------------------------------------------------- */

static json_t *summarize(json_t *runs)
{
	json_t *out = json_array(), *names = json_object(), *r, *m, *x;
	const char *name;
	size_t i;

	json_array_foreach(runs, i, r)
		json_object_foreach(json_object_get(r, "metrics"), name, m)
			if (!json_object_get(names, name))
				json_object_set_new(names, name, json_string(sget(m, "unit")));
	json_object_foreach(names, name, x) {
		double *v = calloc(json_array_size(runs) + 1, sizeof(double));
		size_t n = 0, idx[4096], no;
		json_t *reps = json_array(), *missing = json_array(), *o;
		bool est = false;
		struct pmu_summary s;

		json_array_foreach(runs, i, r) {
			m = json_object_get(json_object_get(r, "metrics"), name);
			if (m && !strcmp(sget(m, "status"), "ok")) {
				v[n++] = json_real_value(json_object_get(m, "value"));
				json_array_append(reps, json_object_get(r, "repetition"));
				est |= json_is_true(json_object_get(m, "estimate"));
			} else {
				json_array_append(missing, json_object_get(r, "repetition"));
			}
		}
		o = json_pack("{s:s,s:s,s:I,s:O}", "name", name, "unit", json_string_value(x), "n", (json_int_t)n,
			      "missing", missing);
		if (n && pmu_summarize(v, n, &s) == 0) {
			json_t *out_reps = json_array();

			no = pmu_outliers(v, n, &s, idx, 4096);
			if (no > 4096)
				no = 4096;
			for (size_t k = 0; k < no; k++)
				json_array_append(out_reps, json_array_get(reps, idx[k]));
			json_object_set_new(o, "status", json_string("ok"));
			json_object_set_new(o, "median", json_real(s.median));
			json_object_set_new(o, "min", json_real(s.min));
			json_object_set_new(o, "max", json_real(s.max));
			json_object_set_new(o, "q1", json_real(s.q1));
			json_object_set_new(o, "q3", json_real(s.q3));
			json_object_set_new(o, "mad", json_real(s.mad));
			json_object_set_new(o, "outliers", out_reps);
			json_object_set_new(o, "estimate", json_boolean(est));
		} else {
			json_t *m1 = json_object_get(json_object_get(json_array_get(runs, 0), "metrics"), name);

			json_object_set_new(o, "status", json_string("unavailable"));
			json_object_set_new(o, "reason", json_string(m1 && json_object_get(m1, "reason")
								    ? sget(m1, "reason") : "no repetition has a value"));
		}
		json_array_append_new(out, o);
		json_decref(reps);
		json_decref(missing);
		free(v);
	}
	json_decref(names);
	return out;
}


static json_t *repetition_metrics(const struct pmu_bundle *b, int rep, json_t *run, const struct scan *s, json_t *k)
{
	json_t *m = json_object();

	section_tree(m, run, s);
	section_command(m, run);
	section_counters(m, k);
	section_spans(m, b, rep);
	return m;
}

/* ---- the bundle report ------------------------------------------------------ */

/*
 * The first repetition's process listing: the cohort indexed in one pass
 * (s), the counts read for the cohort's totals and each incarnation's
 * task-clock, the listed incarnations chosen, then a second pass over the
 * cohort and the counts for the listed ones only.  Memory: the compact
 * index of every incarnation and the JSON of at most max of them.
 */
struct first_rep {
	struct scan s;
	json_t *k, *cohort, *tree, *listing;
	char *dcomm;
	json_int_t dpid;
};

/*
 * No incarnation has a counted task-clock (the eBPF follower counts none per
 * process): the dominant one is then the one with the most CPU time in its
 * totals at exit (user + system, each measured), when every incarnation's
 * is known, so that the share is of the whole cohort.
 */
static void cpu_fallback(struct scan *s)
{
	if (s->best >= 0 || s->why[0] || s->why[1])
		return;
	for (size_t i = 0; i < s->vcap; i++) {
		const struct an_inc *x = &s->v[i];

		if (!x->seen || x->cpu_user_ns < 0 || x->cpu_system_ns < 0)
			continue;
		if (x->cpu_user_ns + x->cpu_system_ns > s->best_ns) {
			s->best = (long)i;
			s->best_ns = x->cpu_user_ns + x->cpu_system_ns;
			s->best_cpu = true;
		}
	}
}

static int first_rep_load(const struct pmu_bundle *b, size_t max, struct first_rep *f)
{
	struct keep kp = { &f->s, NULL, 0, 0, NULL, 0 };
	uint32_t *at = NULL;
	long listed;
	int err;

	scan_init(&f->s, NULL);
	f->s.want_progs = true;
	if ((err = scan_cohort(b, 1, &f->s)))
		return err;
	f->k = counts_load(b, 1, &f->s);
	cpu_fallback(&f->s);
	if ((listed = select_listed(&f->s, max)) < 0)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	kp.max = (size_t)listed;
	kp.list = malloc((kp.max + 1) * sizeof(*kp.list));
	at = malloc((kp.max + 1) * sizeof(*at));
	f->cohort = json_array();
	if (!kp.list || !at || !f->cohort)
		err = pmu_error(PMU_ERR_NOMEM, "out of memory");
	if (!err)
		err = an_cohort_each(b, 1, keep_inc, &kp);
	/* the report's cohort[] in cohort order, whatever order the walk had */
	if (kp.list)
		qsort(kp.list, kp.n, sizeof(*kp.list), by_seq);
	for (size_t i = 0; i < kp.n; i++) {
		at[i] = kp.list[i].num;
		f->s.v[at[i]].pos = (int32_t)i;
		json_array_append_new(f->cohort, kp.list[i].in);
	}
	if (!err) {
		counts_totals(b, 1, &f->s, f->k);
		f->tree = tree_order(&f->s, at, kp.n);
		f->listing = listing(&f->s, kp.n, max);
	}
	f->dcomm = kp.dcomm;
	f->dpid = kp.dpid;
	free(kp.list);
	free(at);
	return err;
}

static void first_rep_release(struct first_rep *f)
{
	scan_release(&f->s);
	json_decref(f->k);
	json_decref(f->cohort);
	json_decref(f->tree);
	json_decref(f->listing);
	free(f->dcomm);
}

/* Capabilities that are host settings (sysctls), not measurements: their
 * absence costs the report nothing, so "not measured" leaves them out (the
 * bundle's capabilities.json keeps them). */
static bool is_setting(const char *name)
{
	static const char *const settings[] = { "kptr_restrict", "nmi_watchdog", "perf_event_max_sample_rate",
						"perf_event_mlock_kb", "perf_event_paranoid", "ptrace_scope",
						"unprivileged_bpf_disabled" };

	for (size_t i = 0; i < PMU_ARRAY_SIZE(settings); i++)
		if (!strcmp(name, settings[i]))
			return true;
	return false;
}

/* reason with every "'name'" put as "'*'": the reasons of counters a missing
 * PMU refuses differ only in the event they name.  Returns a new string
 * the caller frees, or NULL when out of memory. */
static char *reason_key(const char *reason, const char *name)
{
	char q[300];
	size_t ql, rl = strlen(reason);
	char *out = malloc(rl + 1), *o = out;

	if (!out)
		return NULL;
	ql = (size_t)snprintf(q, sizeof(q), "'%s'", name);
	if (ql >= sizeof(q) || ql <= 2) {
		memcpy(out, reason, rl + 1);
		return out;
	}
	for (const char *r = reason; *r;)
		if (!strncmp(r, q, ql)) {
			memcpy(o, "'*'", 3);
			o += 3;
			r += ql;
		} else {
			*o++ = *r++;
		}
	*o = '\0';
	return out;
}

/*
 * not_measured grouped by cause (status, reason and remedy, the event a
 * reason names aside): one line for the eight counters a missing PMU
 * refuses.  [{status, reason, remedy, what: [...], statement}], in the
 * order of each cause's first item.
 */
static json_t *not_measured_groups(json_t *missing)
{
	json_t *out = json_array(), *idx = json_object(), *x, *g;
	size_t i;

	json_array_foreach(missing, i, x) {
		const char *what = sget(x, "what"), *name = strncmp(what, "counter ", 8) ? what : what + 8;
		char *rk = reason_key(sget(x, "reason"), name), *key = NULL;

		if (!rk || asprintf(&key, "%s\n%s\n%s", sget(x, "status"), rk, sget(x, "remedy")) < 0) {
			free(rk);
			break;
		}
		if (!(g = json_object_get(idx, key))) {
			g = json_pack("{s:s,s:s,s:s,s:[]}", "status", sget(x, "status"), "reason", rk, "remedy",
				      sget(x, "remedy"), "what");
			json_object_set_new(g, "first_reason", json_string(sget(x, "reason")));
			json_array_append_new(out, g);
			json_object_set(idx, key, g);
		}
		json_array_append_new(json_object_get(g, "what"), json_string(what));
		free(rk);
		free(key);
	}
	json_array_foreach(out, i, g) {
		json_t *w = json_object_get(g, "what"), *y;
		size_t n = json_array_size(w), j, len = 0;
		bool counters = true;
		char *list, *st = NULL;

		json_array_foreach(w, j, y) {
			len += strlen(json_string_value(y)) + 2;
			counters &= !strncmp(json_string_value(y), "counter ", 8);
		}
		if (!(list = malloc(len + 16)))
			continue;
		len = 0;
		if (counters && n > 1)
			len += (size_t)sprintf(list, "counters ");
		json_array_foreach(w, j, y)
			len += (size_t)sprintf(list + len, "%s%s", j ? ", " : "",
					       counters && n > 1 ? json_string_value(y) + 8 : json_string_value(y));
		if (n == 1)
			json_object_set(g, "reason", json_object_get(g, "first_reason"));
		else {
			/* the event a reason names is each of the list's */
			const char *r0 = sget(g, "reason");
			char *r = malloc(2 * strlen(r0) + 1), *p;

			if (r)
				memcpy(r, r0, strlen(r0) + 1);
			/* "'*'" -> "them": one byte longer, at most once per 3 bytes */
			while (r && (p = strstr(r, "'*'"))) {
				memmove(p + 4, p + 3, strlen(p + 3) + 1);
				memcpy(p, "them", 4);
			}
			if (r)
				json_object_set_new(g, "reason", json_string(r));
			free(r);
		}
		json_object_del(g, "first_reason");
		if (asprintf(&st, "%s: %s: %s%s%s", list, sget(g, "status"), sget(g, "reason"),
			     *sget(g, "remedy") ? "; remedy: " : "", sget(g, "remedy")) >= 0)
			json_object_set_new(g, "statement", json_string(st));
		free(st);
		free(list);
	}
	json_decref(idx);
	return out;
}

json_t *an_load(const char *path, bool allow_invalid, int trace_rep, const char *trace_path, size_t max_processes,
		const char *offcpu_folded, struct an_prof **prof_out, int *code)
{
	struct an_prof *prof = NULL;
	json_t *pj, *dom, *osj, *rtj;
	int folded_err = 0;

	if (prof_out)
		*prof_out = NULL;
	struct pmu_validate_opts vo;
	struct pmu_validate_result res;
	struct failures fl = { json_array() };
	struct pmu_bundle b;
	struct first_rep fr;
	json_t *run = NULL, *caps = NULL, *prov = NULL, *k, *fates, *missing, *x, *runs, *shares, *wt, *progs;
	bool attributing = false;
	int err, check, nrep;
	bool printed = false;
	size_t i;

	memset(&fr, 0, sizeof(fr));
	pmu_validate_default_opts(&vo);
	vo.max_per_check = 5;
	err = pmu_validate_path(path, &vo, on_finding, &fl, &res);
	if (err) {
		fprintf(stderr, "pmuanalyze: %s\n", pmu_error_detail());
		json_decref(fl.list);
		*code = AN_EXIT_USAGE;
		return NULL;
	}
	if (res.errors && !allow_invalid) {
		fprintf(stderr, "pmuanalyze: '%s' is invalid (%u errors); refusing to analyze it "
				"(--allow-invalid to override)\n", path, res.errors);
		json_array_foreach(fl.list, i, x)
			fprintf(stderr, "  %s %s: %s\n", sget(x, "check"), sget(x, "where"), sget(x, "message"));
		json_decref(fl.list);
		*code = AN_EXIT_INVALID;
		return NULL;
	}
	err = pmu_bundle_open(&b, path, NULL, NULL, &check);
	if (!err)
		err = pmu_bundle_read_doc(&b, "run.json", &run);
	if (!err)
		err = pmu_bundle_read_doc(&b, "capabilities.json", &caps);
	if (!err)
		err = pmu_bundle_read_doc(&b, "provenance.json", &prov);
	if (!err && trace_path) {
		struct an_out to;

		if (!an_out_open(&to, trace_path)) {
			fprintf(stderr, "pmuanalyze: cannot write '%s': %s\n", trace_path, strerror(errno));
			an_out_close(&to, false);
			err = -1;
		} else {
			err = pmu_export_chrome_trace(&b, trace_rep, to.f);
			if (err)
				fprintf(stderr, "pmuanalyze: --trace: %s\n", pmu_error_detail());
			if (an_out_close(&to, !err) && !err)
				err = -1;
		}
		printed = err != 0;
	}
	if (!err)
		err = first_rep_load(&b, max_processes, &fr);
	if (err) {
		if (!printed)
			fprintf(stderr, "pmuanalyze: %s\n", pmu_error_detail());
		if (b.rootfd >= 0 || b.tmpdir)
			pmu_bundle_close(&b);
		first_rep_release(&fr);
		json_decref(run);
		json_decref(caps);
		json_decref(prov);
		json_decref(fl.list);
		*code = AN_EXIT_USAGE;
		return NULL;
	}
	fates = collector_fates(&b, 1, run);
	k = fr.k;
	missing = json_array();
	json_array_foreach(json_object_get(caps, "capabilities"), i, x)
		if (strcmp(sget(x, "status"), "ok") && !is_setting(sget(x, "name")))
			json_array_append_new(missing, json_pack("{s:s,s:s,s:s,s:s}", "what", sget(x, "name"), "status",
								 sget(x, "status"), "reason",
								 json_object_get(x, "reason") ? sget(x, "reason") : "",
								 "remedy",
								 json_object_get(x, "remedy") ? sget(x, "remedy") : ""));
	json_array_foreach(fates, i, x)
		if (strcmp(sget(x, "status"), "ok") && strcmp(sget(x, "status"), "not-requested") &&
		    strcmp(sget(x, "status"), "no-events"))
			json_array_append_new(missing, json_pack("{s:s,s:s,s:s,s:s}", "what", sget(x, "name"), "status",
								 sget(x, "status"), "reason", sget(x, "reason"), "remedy",
								 sget(x, "remedy")));
	/* every counter that was not counted, every fallback taken, a cgroup
	 * scope that was asked for and not had */
	json_array_foreach(json_object_get(k, "counters"), i, x)
		if (strcmp(sget(x, "status"), "ok")) {
			char what[300];

			snprintf(what, sizeof(what), "counter %s", sget(x, "name"));
			json_array_append_new(missing, json_pack("{s:s,s:s,s:s,s:s}", "what", what, "status",
								 sget(x, "status"), "reason", sget(x, "reason"), "remedy",
								 sget(x, "remedy")));
		}
	json_array_foreach(json_object_get(k, "fallbacks"), i, x)
		json_array_append_new(missing, json_pack("{s:s,s:s,s:s,s:s}", "what", sget(x, "what"), "status",
							 "degraded", "reason", sget(x, "reason"), "remedy", ""));
	x = json_object_get(k, "scope");
	if (x && !strcmp(sget(x, "status"), "unavailable"))
		json_array_append_new(missing, json_pack("{s:s,s:s,s:s,s:s}", "what", "cgroup cohort", "status",
							 "unavailable", "reason", sget(x, "reason"), "remedy",
							 sget(x, "remedy")));
	/* the samples of the first repetition: a profile that cannot be read
	 * is a finding of the section, never the end of the report */
	err = an_prof_load(&prof, &b, 1);
	if (err)
		pj = json_pack("{s:s,s:o,s:s}", "status", "failed", "reason", pmu_json_text(pmu_error_detail()),
			       "remedy", "pmuvalidate the bundle; analyze it with --allow-invalid to see the rest");
	else
		pj = prof ? an_prof_json(prof) : profile_absent(fates);
	if (!pj)
		pj = json_pack("{s:s,s:s,s:s}", "status", "failed", "reason", "out of memory", "remedy", "");
	if (strcmp(sget(pj, "status"), "ok") && strcmp(sget(pj, "status"), "not-requested") &&
	    strcmp(sget(pj, "status"), "empty") && strcmp(sget(pj, "status"), "not-recorded"))
		json_array_append_new(missing, json_pack("{s:s,s:s,s:O,s:O}", "what", "profile (samples)", "status",
							 sget(pj, "status"), "reason", json_object_get(pj, "reason"),
							 "remedy", json_object_get(pj, "remedy")));
	err = 0;
	/* the OS events of the first repetition (oscall.h): absent streams
	 * are a finding of the section */
	osj = an_oscall_load(&b, 1, fates, offcpu_folded, &folded_err);
	if (!osj)
		osj = json_pack("{s:s,s:s,s:s}", "status", "failed", "reason", "out of memory", "remedy", "");
	if (!strcmp(sget(osj, "status"), "failed"))
		json_array_append_new(missing, json_pack("{s:s,s:s,s:O,s:O}", "what", "system calls and off-CPU "
							 "intervals", "status", "failed", "reason",
							 json_object_get(osj, "reason"), "remedy",
							 json_object_get(osj, "remedy")));
	{
		/* loss of OS events (tolerated by --allow-loss, else the bundle is
		 * invalid): said in the not-measured list as well as the section */
		json_t *sc = json_object_get(osj, "syscalls");
		json_int_t lr = json_integer_value(json_object_get(json_object_get(sc, "raw"), "lost")),
			   ls = json_integer_value(json_object_get(json_object_get(sc, "stats"), "lost")),
			   lo = json_integer_value(json_object_get(json_object_get(osj, "offcpu"), "lost"));

		if (lr > 0 || ls > 0 || lo > 0) {
			char why[400];

			snprintf(why, sizeof(why), "%lld raw call records lost, %lld calls in no statistic, %lld scheduling "
				 "records lost (the bundle tolerates loss: pmurec --allow-loss); the counts and times "
				 "shown are lower bounds", (long long)lr, (long long)ls, (long long)lo);
			json_array_append_new(missing, json_pack("{s:s,s:s,s:s,s:s}", "what", "system calls and off-CPU "
								 "intervals (loss)", "status", "degraded", "reason", why,
								 "remedy", "record again with larger rings (pmurec "
								 "--syscall-ring-kb) or fewer calls"));
		}
	}
	/* the runtime evidence of the first repetition (runtime.h): phases at
	 * the marks, spans, GC pauses, allocations; absence is its finding */
	rtj = an_runtime_load(&b, 1, fates);
	if (!rtj)
		rtj = json_pack("{s:s,s:s,s:s}", "status", "failed", "reason", "out of memory", "remedy", "");
	if (!strcmp(sget(rtj, "status"), "failed"))
		json_array_append_new(missing, json_pack("{s:s,s:s,s:O,s:O}", "what", "runtime evidence (probes, "
							 "spans, allocations)", "status", "failed", "reason",
							 json_object_get(rtj, "reason"), "remedy",
							 json_object_get(rtj, "remedy")));
	{
		/* loss of runtime evidence (tolerated by --allow-loss): said in the
		 * not-measured list as well as the section */
		json_t *pl = json_object_get(json_object_get(rtj, "probes"), "lost"),
		       *al = json_object_get(json_object_get(rtj, "alloc"), "lost");
		json_int_t lp = json_integer_value(json_object_get(pl, "reserve")) +
				json_integer_value(json_object_get(pl, "open_map")) +
				json_integer_value(json_object_get(pl, "inc_map")),
			   la = json_integer_value(json_object_get(al, "reserve")) +
				json_integer_value(json_object_get(al, "pending_map")) +
				json_integer_value(json_object_get(al, "live_map")) +
				json_integer_value(json_object_get(al, "channel"));

		if (lp > 0 || la > 0) {
			char why[400];

			snprintf(why, sizeof(why), "%lld probe hits and %lld allocation samples lost (the bundle tolerates "
				 "loss: pmurec --allow-loss); span, GC and allocation figures are lower bounds",
				 (long long)lp, (long long)la);
			json_array_append_new(missing, json_pack("{s:s,s:s,s:s,s:s}", "what", "runtime evidence (loss)",
								 "status", "degraded", "reason", why, "remedy",
								 "record again with fewer events or a larger sampling "
								 "interval (--alloc-sample)"));
		}
	}
	wt = wall_time(&fr.s, k, run, fates, osj, &attributing);
	progs = programs(&fr.s);
	/* the off-CPU time is a measurement this recording does not have:
	 * listed, with what would have it */
	if (!attributing && json_integer_value(json_object_get(wt, "unattributed_ns")) > 0)
		json_array_append_new(missing, json_pack("{s:s,s:s,s:s,s:s}", "what", "off-CPU time", "status",
							 strstr(sget(wt, "would_attribute"), "unavailable")
								 ? "unavailable" : "not-requested", "reason",
							 "no collector of this recording says where the cohort's "
							 "off-CPU time went (blocked, sleeping or waiting)",
							 "remedy", sget(wt, "would_attribute")));
	/* per-incarnation ratios where both counts exist */
	if (k) {
		const char *inc;
		json_t *m;

		json_object_foreach(json_object_get(k, "totals"), inc, m) {
			json_t *d = json_object();

			add_derived(d, m);
			if (json_object_size(d))
				json_object_set(m, "derived", d);
			json_decref(d);
		}
	}
	/* every repetition's metrics */
	nrep = json_integer_value(json_object_get(run, "repeat")) > 1
		       ? (int)json_integer_value(json_object_get(run, "repeat")) : 1;
	/* never more than the bundle holds (a corrupt "repeat" analyzed on
	 * request): stop at the first repetition that is not there */
	for (int r = 2; r <= nrep; r++) {
		char p[64];
		struct stat st;

		snprintf(p, sizeof(p), "data/repeats/%d/run.json", r);
		if (fstatat(b.rootfd, p, &st, 0)) {
			nrep = r - 1;
			break;
		}
	}
	runs = json_array();
	shares = json_array();
	/* one pass over the repetitions: their metrics, and the share of the
	 * first repetition's dominant process in each (its spread); one
	 * repetition's cohort index in memory at a time */
	for (int r = 1; r <= nrep; r++) {
		json_t *rr = r == 1 ? json_incref(run) : NULL, *rk = r == 1 ? json_incref(k) : NULL;
		struct scan sr, *s = &fr.s;
		bool have = true;
		char p[64];

		if (r > 1) {
			snprintf(p, sizeof(p), "repeats/%d/run.json", r);
			pmu_bundle_read_doc(&b, p, &rr);
			scan_init(&sr, fr.dcomm);
			s = &sr;
			have = scan_cohort(&b, r, &sr) == 0;
			rk = have ? counts_load(&b, r, &sr) : NULL;
		}
		if (rr && have) {
			json_t *o = json_pack("{s:i,s:o}", "repetition", r, "metrics", repetition_metrics(&b, r, rr, s, rk)),
			       *camp = json_object_get(rr, "campaign");

			if (camp)
				json_object_set(o, "campaign_position", json_object_get(camp, "position"));
			/* the host's load over this repetition (spec 1.4), for the
			 * comparison's host-noise check (compare.c) */
			if (json_object_get(rr, "host_load"))
				json_object_set(o, "host_load", json_object_get(rr, "host_load"));
			json_array_append_new(runs, o);
		}
		if (fr.dcomm && have && rk) {
			/* the first repetition's dominant incarnation has the largest
			 * share of all, its comm's included */
			double sh = r == 1 ? (cohort_task_clock(rk) ? 100.0 * (double)fr.s.best_ns /
						  (double)json_integer_value(json_object_get(cohort_task_clock(rk), "value_ns"))
					      : fr.s.best_cpu ? 100.0 * (double)fr.s.best_ns / (fr.s.acc[0] + fr.s.acc[1])
							      : -1)
					   : share_of(s, rk);

			if (sh >= 0)
				json_array_append_new(shares, json_real(sh));
		}
		if (r > 1)
			scan_release(&sr);
		json_decref(rr);
		json_decref(rk);
	}
	if (nrep > 1 && !strcmp(sget(pj, "status"), "ok"))
		json_object_set_new(pj, "repetitions", profile_repetitions(&b, nrep, pj));
	dom = dominant(dominant_cost(&fr.s, k, fr.dcomm, fr.dpid, shares), wt, progs);
	dominant_profile(dom, pj);
	dominant_blocked(dom, wt, osj);
	wall_by_code(wt, pj);
	x = json_pack("{s:o,s:b,s:O,s:O,s:O?,s:O?,s:O?,s:O?,s:O,s:O,s:O,s:O,s:O,s:o,s:o,s:{s:i,s:O,s:o}}", "bundle",
		      pmu_json_text(path), "valid", res.errors == 0, "failed_checks", fl.list, "run", run, "host",
		      json_object_get(caps, "host"), "settings", json_object_get(prov, "settings"), "images",
		      json_object_get(prov, "images"), "config_hash", json_object_get(prov, "config_hash"),
		      "not_measured", missing, "collectors", fates, "cohort", fr.cohort, "tree", fr.tree,
		      "cohort_listing", fr.listing, "dominant_cost", dom,
		      "phases", phases(&b, run, &fr.s), "repetitions", "n", nrep, "runs", runs, "summary", summarize(runs));
	if (!x) {
		/* a document without what the report needs (possible only in a
		 * bundle analyzed with --allow-invalid): say so, never exit 0 */
		fprintf(stderr, "pmuanalyze: '%s' lacks what a report needs (host, images or configuration hash)\n",
			path);
	} else {
		json_object_set(x, "wall_time", wt);
		json_object_set(x, "programs", progs);
		json_object_set_new(x, "not_measured_groups", not_measured_groups(missing));
		json_object_set(x, "profile", pj);
		json_object_set(x, "oscall", osj);
		json_object_set(x, "runtime", rtj);
		if (k)
			json_object_set(x, "counting", k);
	}
	*code = x ? AN_EXIT_OK : AN_EXIT_USAGE;
	pmu_bundle_close(&b);
	first_rep_release(&fr);
	json_decref(shares);
	json_decref(runs);
	json_decref(run);
	json_decref(caps);
	json_decref(prov);
	json_decref(fates);
	json_decref(missing);
	json_decref(wt);
	json_decref(progs);
	json_decref(fl.list);
	json_decref(pj);
	json_decref(osj);
	json_decref(rtj);
	if (x && folded_err) {
		json_decref(x);
		x = NULL;
		*code = AN_EXIT_USAGE;
	}
	if (prof_out && x)
		*prof_out = prof;
	else
		an_prof_free(prof);
	return x;
}
