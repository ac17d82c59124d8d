/*
 * The rules of the runtime-evidence collectors' streams (spec 1.8,
 * bundle-spec section 24): the probes stream (PROBES-SHAPE, PROBE-ATTACH,
 * the span rules on its spans, keyed per incarnation) and the alloc stream
 * (ALLOC-SHAPE, ALLOC-ESTIMATE), with TIME-ORDER, TIME-WINDOW, ATTRIBUTION,
 * LOSS and MALFORMED of their records.
 *
 * Record by record, as every stream.  What is held: a stream's counters,
 * config's requested probes (RT_REQ_MAX bytes), and for the alloc stream
 * one small entry per cohort incarnation (its sums, the inc record's
 * place): the cohort is held already, so this grows with it, never with
 * the records; for the probes stream a counter per probe (RT_MADE_MAX
 * at most) of the records it made and its hits; and per sample, for its free, 12 bytes (RT_SEQ_MAX
 * samples at most, past which frees are not checked and that is said).
 * The probes stream's spans go to the span table the
 * validator keeps for spans.jsonl (struct span), keyed by (incarnation,
 * id): span ids are unique per incarnation (section 24.1) and a parent is
 * a span of the same incarnation, begun on any thread.  An unended span
 * is in the table too, as a span that never ends: its children may name
 * it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "jsonl.h"
#include "util.h"
#include "validate_int.h"

#define RT_REQ_MAX 4096            /* bytes of config.requested held */
/* samples whose incarnation, estimate and freed bit are held: 12 bytes
 * each (an est_bytes and a 32-bit incarnation index with the freed bit),
 * so at most 48 MiB; a stream with more is refused (ALLOC-SHAPE) and its
 * frees past the bound are not checked.  At --alloc's 512 KiB mean that is
 * 2 TiB allocated. */
#define RT_SEQ_MAX (4u << 20)
#define RT_FREED 0x80000000u       /* in seq_inc[]: the sample was freed */
#define RT_NOINC 0x7fffffffu       /* in seq_inc[]: no incarnation found */

/* probes (PROVIDER:NAME) whose records and hits are counted: the probe
 * map's 19 and the --probe names config.requested holds (at most
 * RT_REQ_MAX bytes); a stream naming more is refused (PROBES-SHAPE), its
 * later probes not counted.  128 bytes each, 64 KiB in all, allocated
 * at the first record of a probe. */
#define RT_MADE_MAX 512

enum { RT_PROBES, RT_ALLOC };
enum { PH_START, PH_BODY, PH_PROBE, PH_END };
enum { PV_PMU = 1, PV_PYTHON = 2, PV_HOTSPOT = 4 };

/* the probes stream: records made from one probe, and its hits */
struct rt_made {
	uint64_t h, made, hits, line;  /* line: its last probe record, else its first record */
	bool probe, attached;          /* a probe record of it came, one attached */
	char name[88];                 /* PROVIDER:NAME, cut */
};

/* the alloc stream: one per cohort incarnation */
struct rt_inc {
	uint64_t samples, frees, est_bytes, est_milli;
	uint64_t freed_est;            /* est_bytes of its samples freed */
	uint64_t inc_line;             /* its inc record's line, 0 before */
	bool bad_free;                 /* a free refused: its live sums are not checked again */
};

struct rt_state {
	int kind, phase;
	uint64_t configs, summaries, sum_line;
	uint64_t lost;
	/* probes */
	char requested[RT_REQ_MAX + 2];    /* " provider:name ... " */
	bool req_known;
	uint64_t probes, attached, hits, spans, marks, gcs, raw_hits, unended;
	unsigned seen_pv, attached_pv;     /* PV_*: providers whose records came, whose probes attached */
	uint64_t seen_pv_line[3];
	size_t span_base;                  /* the stream's spans begin here in v->spans */
	struct rt_made *made;              /* RT_MADE_MAX of them, open addressing on h; NULL before use */
	size_t nmade;
	bool made_full;                    /* reported */
	/* alloc */
	bool chains, chains_known;
	uint64_t sample_bytes;
	uint64_t samples, frees, est_bytes, last_seq;
	struct rt_inc *per;                /* by incarnation index, v->nincs of them; NULL: none */
	size_t nper;
	/* per sample, indexed by seq - 1 (seq is 1, 2, ... in order): grows
	 * with the stream's samples, by doubling, up to RT_SEQ_MAX */
	uint64_t *seq_est;
	uint32_t *seq_inc;
	size_t nseq, capseq;
	bool seq_full;                 /* a sample out of order, past RT_SEQ_MAX or not held: reported */
};

int pmu_v_rt_kind(const struct pmu_streamdef *sd)
{
	if (!strcmp(sd->kind, "probes"))
		return RT_PROBES;
	if (!strcmp(sd->kind, "alloc"))
		return RT_ALLOC;
	return -1;
}

int pmu_v_rt_begin(struct v *v, struct stream_state *s)
{
	int k = pmu_v_rt_kind(s->sd);

	if (k < 0)
		return 0;
	if (!(s->rt = calloc(1, sizeof(*s->rt))))
		return PMU_ERR_NOMEM;
	s->rt->kind = k;
	s->rt->span_base = v->nspans;
	if (k == RT_ALLOC && v->cohort_ok && v->nincs) {
		s->rt->per = calloc(v->nincs, sizeof(*s->rt->per));
		s->rt->nper = s->rt->per ? v->nincs : 0;
	}
	return 0;
}

/* ---- helpers -------------------------------------------------------------- */

static bool fis(const struct pmu_jfield *f, const char *s)
{
	size_t n = strlen(s);

	return f && f->type == PMU_JV_STR && f->slen == n && !memcmp(f->s, s, n);
}

static bool fbool(const struct pmu_jfield *f)
{
	return f && f->type == PMU_JV_BOOL && f->b;
}

/* "0x" and 1 to 16 lowercase hex digits */
static bool hex_ok(const char *s, size_t n)
{
	if (n < 3 || n > 18 || s[0] != '0' || s[1] != 'x')
		return false;
	for (size_t i = 2; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* hex values separated by one space, at least one */
static bool hex_list_ok(const struct pmu_jfield *f)
{
	const char *p, *e;

	if (!f || f->type != PMU_JV_STR || !f->slen)
		return false;
	for (p = f->s, e = f->s + f->slen;;) {
		const char *sp = memchr(p, ' ', (size_t)(e - p)), *end = sp ? sp : e;

		if (!hex_ok(p, (size_t)(end - p)))
			return false;
		if (!sp)
			return true;
		p = sp + 1;
	}
}

static void rt_loss(struct v *v, const char *file, uint64_t rec, const char *what)
{
	eval(v, PMU_CHECK_LOSS);
	pmu_v_report_sev(v, PMU_CHECK_LOSS, v->tolerate_loss ? PMU_SEV_WARNING : PMU_SEV_ERROR, file, rec, "%s%s",
			 what, v->tolerate_loss ? " (tolerated: run.json tolerate_loss)" : "");
}

static void rt_malformed(struct v *v, const char *file, uint64_t rec, uint64_t n)
{
	eval(v, PMU_CHECK_MALFORMED);
	if (n)
		report(v, PMU_CHECK_MALFORMED, file, rec, "%llu records could not be decoded", (unsigned long long)n);
}

/* Config first and once, probe records (probes) after the others, summary
 * last and once; false for a record that is not checked further. */
static bool rt_phase(struct v *v, struct stream_state *s, enum pmu_check c, uint64_t rec, const char *type)
{
	struct rt_state *rt = s->rt;

	if (rt->phase == PH_END) {
		report(v, c, s->file, rec, "a %s record after the summary", type);
		return strcmp(type, "summary") != 0;
	}
	if (!strcmp(type, "config")) {
		if (rt->phase != PH_START || rt->configs)
			report(v, c, s->file, rec, "a second config, or config not first");
		rt->configs++;
		rt->phase = PH_BODY;
		return rt->configs == 1;
	}
	if (rt->phase == PH_START) {
		report(v, c, s->file, rec, "a %s record before the config", type);
		rt->phase = PH_BODY;
	}
	if (!strcmp(type, "summary")) {
		rt->phase = PH_END;
		rt->summaries++;
		return true;
	}
	if (!strcmp(type, "probe")) {
		rt->phase = PH_PROBE;
		return true;
	}
	if (rt->phase == PH_PROBE)
		report(v, c, s->file, rec, "a %s record after the probe records", type);
	return true;
}

/* The record's interval [begin_ns, t_ns]: in order, in the window, dur_ns
 * its length when the record has one. */
static uint64_t rt_interval(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r, uint64_t t)
{
	const struct pmu_jfield *bf = rf(r, "begin_ns"), *df = rf(r, "dur_ns");
	uint64_t b = ri_of(bf);

	if (!bf)
		return t;
	check_window(v, s->file, rec, "begin_ns", b);
	eval(v, PMU_CHECK_TIME_ORDER);
	if (b > t) {
		report(v, PMU_CHECK_TIME_ORDER, s->file, rec, "begin_ns %llu is after t_ns %llu", (unsigned long long)b,
		       (unsigned long long)t);
		return t;
	}
	if (df && ri_of(df) != t - b)
		report(v, PMU_CHECK_PROBES_SHAPE, s->file, rec, "dur_ns %llu is not t_ns - begin_ns = %llu",
		       (unsigned long long)ri_of(df), (unsigned long long)(t - b));
	return b;
}

static void span_add(struct v *v, uint64_t rec, const struct pmu_jfield *inc, const struct pmu_jfield *id,
		     const struct pmu_jfield *parent, uint64_t b, uint64_t e)
{
	uint64_t ih = inc ? hash_bytes(inc->s, inc->slen) : 1;

	/* a span the table cannot hold is counted and reported by
	 * pmu_v_check_spans(), not dropped silently */
	if (!id || !pmu_v_span_room(v))
		return;
	/* keyed by (incarnation, id): ids are unique per incarnation */
	v->spans[v->nspans++] = (struct span){
		ih * 0x9e3779b97f4a7c15ull ^ hash_bytes(id->s, id->slen),
		parent ? ih * 0x9e3779b97f4a7c15ull ^ hash_bytes(parent->s, parent->slen) : 0, b, e, rec,
		parent != NULL, 0, 0,
	};
}

/* ---- probes ------------------------------------------------------------------ */

static unsigned pv_of(const struct pmu_jfield *f)
{
	if (!f || f->type != PMU_JV_STR)
		return 0;
	/* "pmu", "pmu:...", "python", "python:...", "hotspot", "hotspot:..." */
	if (f->slen >= 3 && !memcmp(f->s, "pmu", 3) && (f->slen == 3 || f->s[3] == ':'))
		return PV_PMU;
	if (f->slen >= 6 && !memcmp(f->s, "python", 6) && (f->slen == 6 || f->s[6] == ':'))
		return PV_PYTHON;
	if (f->slen >= 7 && !memcmp(f->s, "hotspot", 7) && (f->slen == 7 || f->s[7] == ':'))
		return PV_HOTSPOT;
	return 0;
}

static void pv_seen(struct rt_state *rt, unsigned pv, uint64_t rec)
{
	for (int i = 0; i < 3; i++)
		if ((pv & (1u << i)) && !(rt->seen_pv & (1u << i)))
			rt->seen_pv_line[i] = rec;
	rt->seen_pv |= pv;
}

/* The entry of probe PROVIDER:NAME (prov, name: their bytes), NULL past
 * the bound (reported once) or when it cannot be had */
static struct rt_made *made_of(struct v *v, struct stream_state *s, uint64_t rec, const char *prov, size_t pl,
			       const char *name, size_t nl)
{
	struct rt_state *rt = s->rt;
	uint64_t h = hash_bytes(prov, pl) * 0x9e3779b97f4a7c15ull ^ hash_bytes(name, nl);
	size_t i;

	if (!rt->made && !(rt->made = calloc(RT_MADE_MAX, sizeof(*rt->made)))) {
		if (!rt->made_full)
			report(v, PMU_CHECK_PROBES_SHAPE, s->file, rec, "cannot count records per probe: %s",
			       pmu_strerror(PMU_ERR_NOMEM));
		rt->made_full = true;
		return NULL;
	}
	h |= 1;                        /* 0: a free slot */
	for (i = h % RT_MADE_MAX; rt->made[i].h; i = (i + 1) % RT_MADE_MAX)
		if (rt->made[i].h == h)
			return &rt->made[i];
	if (rt->nmade + 1 >= RT_MADE_MAX) {
		if (!rt->made_full)
			report(v, PMU_CHECK_PROBES_SHAPE, s->file, rec, "records of more than %u probes: records per "
			       "probe are not counted past that bound", RT_MADE_MAX - 1);
		rt->made_full = true;
		return NULL;
	}
	rt->nmade++;
	rt->made[i].h = h;
	rt->made[i].line = rec;
	snprintf(rt->made[i].name, sizeof(rt->made[i].name), "%.*s:%.*s", (int)(pl > 40 ? 40 : pl), prov,
		 (int)(nl > 40 ? 40 : nl), name);
	return &rt->made[i];
}

/* n more records made from probe PROVIDER:NAME (src: that text) */
static void made_by(struct v *v, struct stream_state *s, uint64_t rec, const char *src, size_t sl, uint64_t n)
{
	const char *c = memchr(src, ':', sl);
	struct rt_made *m;

	if (c && (m = made_of(v, s, rec, src, (size_t)(c - src), c + 1, sl - (size_t)(c - src) - 1)))
		m->made += n;
}

static void made_by_f(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jfield *src, uint64_t n)
{
	if (src && src->type == PMU_JV_STR)
		made_by(v, s, rec, src->s, src->slen, n);
}

/* A gc record comes from its begin probe (source) and its end probe */
static void gc_made(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jfield *src)
{
	static const char *const pair[][2] = {
		{ "pmu:gc_begin", "pmu:gc_end" },
		{ "python:gc__start", "python:gc__done" },
		{ "hotspot:gc__begin", "hotspot:gc__end" },
		{ "hotspot:mem__pool__gc__begin", "hotspot:mem__pool__gc__end" },
	};

	made_by_f(v, s, rec, src, 1);
	for (size_t i = 0; src && i < sizeof(pair) / sizeof(pair[0]); i++)
		if (fis(src, pair[i][0]))
			made_by(v, s, rec, pair[i][1], strlen(pair[i][1]), 1);
}

/* Records made from a probe are at most its hits (the kernel counts every
 * cohort hit while attached, each record needs one): compared once the
 * probe records (last) have come.  A probe that was not attached made
 * nothing: its records are PROBE-ATTACH's. */
static void made_check(struct v *v, struct stream_state *s)
{
	struct rt_state *rt = s->rt;

	for (size_t i = 0; rt->made && i < RT_MADE_MAX; i++) {
		struct rt_made *m = &rt->made[i];

		if (!m->h || m->made <= m->hits)
			continue;
		if (m->probe && !m->attached) {
			eval(v, PMU_CHECK_PROBE_ATTACH);
			report(v, PMU_CHECK_PROBE_ATTACH, s->file, m->line, "%llu records made from probe %s, which was "
			       "not attached", (unsigned long long)m->made, m->name);
		} else {
			report(v, PMU_CHECK_PROBES_SHAPE, s->file, m->line, "%llu records made from probe %s, which %s "
			       "%llu hits", (unsigned long long)m->made, m->name,
			       m->probe ? "its probe records give" : "has no probe record: it has",
			       (unsigned long long)m->hits);
		}
	}
}

static void gc_rec(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r)
{
	enum pmu_check C = PMU_CHECK_PROBES_SHAPE;
	const struct pmu_jfield *rt_ = rf(r, "runtime"), *kind = rf(r, "kind"), *pool = rf(r, "pool"),
				*coll = rf(r, "collected"), *src = rf(r, "source");
	unsigned pv = pv_of(rt_);

	s->rt->gcs++;
	pv_seen(s->rt, pv, rec);
	gc_made(v, s, rec, src);
	if (pv_of(src) != pv)
		report(v, C, s->file, rec, "a gc of runtime '%.*s' has source '%.*s'", rt_ ? (int)rt_->slen : 0,
		       rt_ ? rt_->s : "", src ? (int)src->slen : 0, src ? src->s : "");
	if (pv == PV_PYTHON && !fis(kind, "gen0") && !fis(kind, "gen1") && !fis(kind, "gen2"))
		report(v, C, s->file, rec, "a python gc's kind is gen0, gen1 or gen2");
	if (pv == PV_HOTSPOT && !fis(kind, "full") && !fis(kind, "minor") && !fis(kind, "pool"))
		report(v, C, s->file, rec, "a hotspot gc's kind is full, minor or pool");
	if ((pool != NULL) != (pv == PV_HOTSPOT && fis(kind, "pool")))
		report(v, C, s->file, rec, "pool is there exactly for a hotspot gc of kind pool");
	if (coll && pv != PV_PYTHON)
		report(v, C, s->file, rec, "collected is python's (gc__done's argument)");
}

static void probe_rec(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r)
{
	struct rt_state *rt = s->rt;
	enum pmu_check C = PMU_CHECK_PROBE_ATTACH;
	const struct pmu_jfield *prov = rf(r, "provider"), *name = rf(r, "name"), *role = rf(r, "role"),
				*reason = rf(r, "reason"), *at = rf(r, "attached_ns");
	bool attached = fbool(rf(r, "attached"));
	uint64_t hits = ri(r, "hits");

	eval(v, C);
	rt->probes++;
	rt->hits += hits;
	if (prov && name && prov->type == PMU_JV_STR && name->type == PMU_JV_STR) {
		struct rt_made *m = made_of(v, s, rec, prov->s, prov->slen, name->s, name->slen);

		if (m) {
			m->hits += hits;
			m->probe = true;
			m->attached |= attached;
			m->line = rec;
		}
	}
	if (attached) {
		rt->attached++;
		rt->attached_pv |= pv_of(prov);
		if (!at)
			report(v, C, s->file, rec, "an attached probe has attached_ns");
		else
			check_window(v, s->file, rec, "attached_ns", ri_of(at));
		if (reason)
			report(v, C, s->file, rec, "an attached probe has no reason");
	} else {
		if (!reason)
			report(v, C, s->file, rec, "probe '%.*s:%.*s' was not attached and says no reason",
			       prov ? (int)prov->slen : 0, prov ? prov->s : "", name ? (int)name->slen : 0,
			       name ? name->s : "");
		if (hits)
			report(v, C, s->file, rec, "a probe not attached has %llu hits", (unsigned long long)hits);
		if (at)
			report(v, C, s->file, rec, "a probe not attached has attached_ns");
	}
	/* raw: one named with --probe (config's requested) */
	if (fis(role, "raw") && rt->req_known && prov && name) {
		char w[300];

		snprintf(w, sizeof(w), " %.*s:%.*s ", (int)(prov->slen > 140 ? 140 : prov->slen), prov->s,
			 (int)(name->slen > 140 ? 140 : name->slen), name->s);
		if (!strstr(rt->requested, w))
			report(v, C, s->file, rec, "a raw probe is one named with --probe: '%.*s:%.*s' is not in config's "
			       "requested", (int)prov->slen, prov->s, (int)name->slen, name->s);
	}
}

static void on_probes(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r, const char *type)
{
	struct rt_state *rt = s->rt;
	enum pmu_check C = PMU_CHECK_PROBES_SHAPE;

	if (!rt_phase(v, s, C, rec, type))
		return;
	if (!strcmp(type, "config")) {
		const struct pmu_jfield *req = rf(r, "requested");

		rt->req_known = !req || req->slen <= RT_REQ_MAX;
		if (req && rt->req_known)
			snprintf(rt->requested, sizeof(rt->requested), " %.*s ", (int)req->slen, req->s);
		else
			snprintf(rt->requested, sizeof(rt->requested), " ");
		return;
	}
	if (!strcmp(type, "summary")) {
		rt->sum_line = rec;
		made_check(v, s);
#define SAYS(f, have, what) do { if (ri(r, f) != (have)) report(v, C, s->file, rec, "summary says %llu " f \
		", the stream has %llu " what, (unsigned long long)ri(r, f), (unsigned long long)(have)); } while (0)
		SAYS("probes", rt->probes, "probe records");
		SAYS("attached", rt->attached, "attached probes");
		SAYS("hits", rt->hits, "hits in its probe records");
		SAYS("spans", rt->spans, "span records");
		SAYS("marks", rt->marks, "mark records");
		SAYS("gcs", rt->gcs, "gc records");
		SAYS("raw_hits", rt->raw_hits, "hit records");
		SAYS("unended", rt->unended, "unended records");
		SAYS("lost", rt->lost, "lost in its loss records");
#undef SAYS
		rt_malformed(v, s->file, rec, ri(r, "malformed"));
		return;
	}
	uint64_t t = ri(r, "t_ns");

	pmu_v_time_order(v, s, rec, "t_ns", t);
	check_window(v, s->file, rec, "t_ns", t);
	if (!strcmp(type, "probe")) {
		probe_rec(v, s, rec, r);
		return;
	}
	if (!strcmp(type, "loss")) {
		uint64_t lost = ri(r, "lost");
		const struct pmu_jfield *w = rf(r, "what");
		char what[160];

		rt->lost += lost;
		if (!lost) {
			report(v, C, s->file, rec, "a loss record of nothing lost");
			return;
		}
		snprintf(what, sizeof(what), "%llu %s on cpu %llu (%.*s)", (unsigned long long)lost,
			 fis(w, "reserve") ? "probe hits lost: the ring was full"
			 : fis(w, "open-map") ? "begins lost: their ends pair with nothing"
			 : "pmu:alloc hits not summed", (unsigned long long)ri(r, "cpu"), w ? (int)w->slen : 0,
			 w ? w->s : "");
		rt_loss(v, s->file, rec, what);
		return;
	}
	uint64_t b = rt_interval(v, s, rec, r, t);

	if (!strcmp(type, "span")) {
		uint64_t sb = ri(r, "begin_ns"), se = ri(r, "end_ns");

		rt->spans++;
		pv_seen(rt, PV_PMU, rec);
		made_by(v, s, rec, "pmu:span_begin", 14, 1);
		made_by(v, s, rec, "pmu:span_end", 12, 1);
		if (se != t)
			report(v, C, s->file, rec, "a span's t_ns is its end_ns");
		if (!fis(rf(r, "via"), "usdt"))
			report(v, C, s->file, rec, "a span of the probes stream is via usdt");
		/* begin_ns against t_ns and the window: rt_interval() above; end_ns against begin_ns
		 * here only where t_ns is not end_ns (said above) */
		eval(v, PMU_CHECK_TIME_ORDER);
		if (se < sb && se != t)
			report(v, PMU_CHECK_TIME_ORDER, s->file, rec, "span ends before it begins");
		if (se != t)
			check_window(v, s->file, rec, "end_ns", se);
		/* begun on tid, ended on end_tid: both threads of the incarnation, alive then */
		pmu_v_attribute_tid(v, s->file, rec, rf(r, "inc"), ri(r, "pid"), (int64_t)ri(r, "tid"), sb, sb);
		pmu_v_attribute_tid(v, s->file, rec, rf(r, "inc"), ri(r, "pid"), (int64_t)ri(r, "end_tid"), se, se);
		span_add(v, rec, rf(r, "inc"), rf(r, "id"), rf(r, "parent"), sb, se);
		return;
	}
	if (!strcmp(type, "allocs")) {
		pv_seen(rt, PV_PMU, rec);
		made_by(v, s, rec, "pmu:alloc", 9, ri(r, "count"));
		pmu_v_attribute_proc(v, s->file, rec, r, t, t, true);
		return;
	}
	if (!strcmp(type, "runtime") || !strcmp(type, "mark") || !strcmp(type, "hit")) {
		if (type[0] == 'r') {
			pv_seen(rt, PV_PMU, rec);
			made_by(v, s, rec, "pmu:runtime", 11, 1);
		}
		if (type[0] == 'm') {
			const struct pmu_jfield *src = rf(r, "source");

			rt->marks++;
			pv_seen(rt, pv_of(src), rec);
			made_by_f(v, s, rec, src, 1);
			if (!fis(rf(r, "via"), "usdt"))
				report(v, C, s->file, rec, "a mark of the probes stream is via usdt");
			if (pv_of(src) == PV_HOTSPOT && !fis(rf(r, "name"), "startup-end"))
				report(v, C, s->file, rec, "hotspot's mark is startup-end (vm__init__end)");
		}
		if (type[0] == 'h') {
			const struct pmu_jfield *prov = rf(r, "provider"), *name = rf(r, "name");

			rt->raw_hits++;
			if (prov && name && prov->type == PMU_JV_STR && name->type == PMU_JV_STR) {
				struct rt_made *m = made_of(v, s, rec, prov->s, prov->slen, name->s, name->slen);

				if (m)
					m->made++;
			}
			if (rt->req_known && prov && name) {
				char w[300];

				snprintf(w, sizeof(w), " %.*s:%.*s ", (int)(prov->slen > 140 ? 140 : prov->slen),
					 prov->s, (int)(name->slen > 140 ? 140 : name->slen), name->s);
				if (!strstr(rt->requested, w))
					report(v, C, s->file, rec, "a hit of '%.*s:%.*s', which config's requested does "
					       "not name", (int)prov->slen, prov->s, (int)name->slen, name->s);
			}
		}
		pmu_v_attribute(v, s->file, rec, r, true, t, t);
		return;
	}
	if (!strcmp(type, "gc"))
		gc_rec(v, s, rec, r);
	else if (!strcmp(type, "thread")) {
		pv_seen(rt, PV_HOTSPOT, rec);
		made_by(v, s, rec, "hotspot:thread__start", 21, 1);
		if (fbool(rf(r, "ended")))
			made_by(v, s, rec, "hotspot:thread__stop", 20, 1);
	} else if (!strcmp(type, "jit")) {
		pv_seen(rt, PV_HOTSPOT, rec);
		made_by(v, s, rec, "hotspot:method__compile__begin", 30, 1);
		made_by(v, s, rec, "hotspot:method__compile__end", 28, 1);
	} else if (!strcmp(type, "unended")) {
		const struct pmu_jfield *id = rf(r, "id"), *what = rf(r, "what");
		bool span = fis(what, "span");

		rt->unended++;
		/* from its begin probe; an unended gc names no runtime: not counted */
		if (span)
			made_by(v, s, rec, "pmu:span_begin", 14, 1);
		else if (fis(what, "jit"))
			made_by(v, s, rec, "hotspot:method__compile__begin", 30, 1);
		else if (fis(what, "thread"))
			made_by(v, s, rec, "hotspot:thread__start", 21, 1);
		if (span != (id != NULL))
			report(v, C, s->file, rec, "an unended record has id exactly when it is a span's");
		if (span)
			span_add(v, rec, rf(r, "inc"), id, NULL, b, UINT64_MAX);
	}
	pmu_v_attribute(v, s->file, rec, r, true, b, t);
}

static void probes_end(struct v *v, struct stream_state *s)
{
	struct rt_state *rt = s->rt;
	static const char *const pvname[] = { "pmu", "python", "hotspot" };

	if (!rt->configs)
		report(v, PMU_CHECK_PROBES_SHAPE, s->file, 0, "the probes stream has no config record");
	if (!rt->summaries)
		report(v, PMU_CHECK_PROBES_SHAPE, s->file, 0, "the probes stream has no summary record at its end");
	/* records of a provider come from its probes, attached */
	eval(v, PMU_CHECK_PROBE_ATTACH);
	for (int i = 0; i < 3; i++)
		if ((rt->seen_pv & (1u << i)) && !(rt->attached_pv & (1u << i)))
			report(v, PMU_CHECK_PROBE_ATTACH, s->file, rt->seen_pv_line[i],
			       "a record of provider %s, whose probes have no attached probe record", pvname[i]);
	pmu_v_check_spans(v, s->file, rt->span_base);
	v->nspans = rt->span_base;
}

/* ---- alloc --------------------------------------------------------------------- */

/* The incarnation record r names, for the stream's sums: the one attribution
 * found (in), else the one the record names (its thread or time refused:
 * reported as ATTRIBUTION, not again as a sum that does not add up). */
static struct rt_inc *per_inc(struct v *v, struct rt_state *rt, const struct inc *in, const struct pmu_jrec *r)
{
	const struct pmu_jfield *f;
	size_t ix;

	if (!in && v->cohort_ok && (f = rf(r, "inc")) && f->type == PMU_JV_STR)
		in = pmu_v_find_inc(v, f->s, f->slen);
	if (!in || !rt->per)
		return NULL;
	ix = (size_t)(in - v->incs);
	return ix < rt->nper ? &rt->per[ix] : NULL;
}

/* section 24.3: a sample of size bytes, taken with mean interval sb, stands
 * for size / p bytes and 1 / p allocations, p = 1 - exp(-size / sb) */
static void estimate(uint64_t size, uint64_t sb, double *bytes, double *milli)
{
	double p = -expm1(-(double)size / (double)sb);

	*bytes = p > 0 ? (double)size / p : 0;
	*milli = p > 0 ? 1000.0 / p : 0;
}

/* Hold sample seq's incarnation index and est_bytes, for its free.  Only
 * samples in order (seq = the samples so far) are held: after one out of
 * order (refused by the caller) no more are, and later frees and live
 * sums are not checked against them. */
static void seq_hold(struct v *v, struct stream_state *s, uint64_t rec, uint64_t seq, uint32_t ix, uint64_t eb)
{
	struct rt_state *rt = s->rt;

	if (seq != rt->nseq + 1)        /* out of order: reported by the caller; stop holding */
		rt->seq_full = true;
	if (rt->seq_full)
		return;
	if (rt->nseq == rt->capseq) {
		size_t cap = rt->capseq ? 2 * rt->capseq : 1024;
		uint64_t *e;
		uint32_t *i;

		if (rt->capseq >= RT_SEQ_MAX) {
			rt->seq_full = true;
			report(v, PMU_CHECK_ALLOC_SHAPE, s->file, rec, "more than %u samples: the validator holds "
			       "12 bytes per sample up to that bound; frees of later samples are not checked",
			       RT_SEQ_MAX);
			return;
		}
		if (cap > RT_SEQ_MAX)
			cap = RT_SEQ_MAX;
		e = realloc(rt->seq_est, cap * sizeof(*e));
		if (e)
			rt->seq_est = e;
		i = e ? realloc(rt->seq_inc, cap * sizeof(*i)) : NULL;
		if (!i) {
			rt->seq_full = true;
			report(v, PMU_CHECK_ALLOC_SHAPE, s->file, rec, "cannot hold sample %llu for its free: %s",
			       (unsigned long long)seq, pmu_strerror(PMU_ERR_NOMEM));
			return;
		}
		rt->seq_inc = i;
		rt->capseq = cap;
	}
	rt->seq_est[rt->nseq] = eb;
	rt->seq_inc[rt->nseq++] = ix;
}

/* A free names an earlier sample of its own incarnation, not freed yet */
static void free_rec(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r, uint64_t t)
{
	struct rt_state *rt = s->rt;
	enum pmu_check C = PMU_CHECK_ALLOC_SHAPE;
	uint64_t sq = ri(r, "sample_seq");
	struct inc *in = pmu_v_attribute(v, s->file, rec, r, true, t, t);
	struct rt_inc *pi = per_inc(v, rt, in, r);
	uint32_t ix = pi ? (uint32_t)(pi - rt->per) : RT_NOINC, *st;

	rt->frees++;
	if (!sq || sq > rt->last_seq) {
		report(v, C, s->file, rec, "a free of sample %llu, which is not an earlier sample",
		       (unsigned long long)sq);
		if (pi)
			pi->bad_free = true;
		return;
	}
	if (sq > rt->nseq) {           /* not held (past the bound, reported): counted unchecked */
		if (pi)
			pi->frees++;
		return;
	}
	st = &rt->seq_inc[sq - 1];
	if (*st & RT_FREED) {
		report(v, C, s->file, rec, "sample %llu is freed a second time", (unsigned long long)sq);
		if (pi)
			pi->bad_free = true;
		return;
	}
	if ((*st & ~RT_FREED) != ix && *st != RT_NOINC && ix != RT_NOINC) {
		report(v, C, s->file, rec, "a free in incarnation '%s' of sample %llu, which is of incarnation '%s'",
		       v->incs[ix].id, (unsigned long long)sq, v->incs[*st].id);
		pi->bad_free = true;
		return;
	}
	*st |= RT_FREED;
	if (pi) {
		pi->frees++;
		pi->freed_est += rt->seq_est[sq - 1];
	}
}

static void sample_rec(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r, uint64_t t)
{
	struct rt_state *rt = s->rt;
	enum pmu_check C = PMU_CHECK_ALLOC_SHAPE;
	const struct pmu_jfield *addr = rf(r, "addr"), *chain = rf(r, "chain");
	uint64_t seq = ri(r, "seq"), eb = ri(r, "est_bytes"), em = ri(r, "est_objects_milli"), size = ri(r, "size");
	struct inc *in;
	struct rt_inc *pi;

	rt->samples++;
	rt->est_bytes += eb;
	if (seq != rt->last_seq + 1)
		report(v, C, s->file, rec, "sample seq %llu, the previous was %llu: samples are numbered 1, 2, ...",
		       (unsigned long long)seq, (unsigned long long)rt->last_seq);
	rt->last_seq = seq;
	if (addr && !hex_ok(addr->s, addr->slen))
		report(v, C, s->file, rec, "addr is 0x-prefixed lowercase hex");
	if (chain && !hex_list_ok(chain))
		report(v, C, s->file, rec, "a chain is 0x-prefixed lowercase hex addresses separated by one space");
	if (rt->chains_known && (chain != NULL) != rt->chains)
		report(v, C, s->file, rec, "a sample has a chain exactly when config's chains is true");
	/* the estimator (section 24.3), within one for the rounding */
	if (rt->sample_bytes && size) {
		double want_b, want_m;

		eval(v, PMU_CHECK_ALLOC_ESTIMATE);
		estimate(size, rt->sample_bytes, &want_b, &want_m);
		if (fabs((double)eb - want_b) > 1.0 + want_b * 1e-9)
			report(v, PMU_CHECK_ALLOC_ESTIMATE, s->file, rec, "est_bytes %llu, section 24.3 gives %.0f for "
			       "size %llu at sample_bytes %llu", (unsigned long long)eb, want_b, (unsigned long long)size,
			       (unsigned long long)rt->sample_bytes);
		if (fabs((double)em - want_m) > 1.0 + want_m * 1e-9)
			report(v, PMU_CHECK_ALLOC_ESTIMATE, s->file, rec, "est_objects_milli %llu, section 24.3 gives %.0f "
			       "for size %llu at sample_bytes %llu", (unsigned long long)em, want_m,
			       (unsigned long long)size, (unsigned long long)rt->sample_bytes);
	}
	in = pmu_v_attribute(v, s->file, rec, r, true, t, t);
	pi = per_inc(v, rt, in, r);
	seq_hold(v, s, rec, seq, pi ? (uint32_t)(pi - rt->per) : RT_NOINC, eb);
	if (pi) {
		if (pi->inc_line)
			report(v, C, s->file, rec, "a sample of incarnation '%s' after its inc record",
			       v->incs[pi - rt->per].id);
		pi->samples++;
		pi->est_bytes += eb;
		pi->est_milli += em;
	}
}

static void inc_rec(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r, uint64_t t)
{
	struct rt_state *rt = s->rt;
	enum pmu_check C = PMU_CHECK_ALLOC_SHAPE;
	struct inc *in = pmu_v_attribute_proc(v, s->file, rec, r, t, t, true);
	struct rt_inc *pi = per_inc(v, rt, in, r);
	uint64_t n = ri(r, "samples"), eb = ri(r, "est_bytes"), eo = ri(r, "est_objects"), live = ri(r, "live_samples"),
		 leb = ri(r, "live_est_bytes");
	bool exited = fbool(rf(r, "exited"));

	if (in && exited != (in->end != UINT64_MAX && in->end <= t))
		report(v, C, s->file, rec, "exited is %s, but incarnation '%s' %s", exited ? "true" : "false", in->id,
		       exited ? "had not ended at t_ns" : "ended before t_ns");
	if (in && exited && in->end != t)
		report(v, C, s->file, rec, "an exited incarnation's inc record is at its end_ns %llu",
		       (unsigned long long)in->end);
	if (live > n)
		report(v, C, s->file, rec, "live_samples %llu is above samples %llu", (unsigned long long)live,
		       (unsigned long long)n);
	eval(v, PMU_CHECK_ALLOC_ESTIMATE);
	if (leb > eb)
		report(v, PMU_CHECK_ALLOC_ESTIMATE, s->file, rec, "live_est_bytes %llu is above est_bytes %llu",
		       (unsigned long long)leb, (unsigned long long)eb);
	if ((live == 0) != (leb == 0))
		report(v, PMU_CHECK_ALLOC_ESTIMATE, s->file, rec, "live_est_bytes is 0 exactly when live_samples is");
	if (!pi)
		return;
	const char *id = v->incs[pi - rt->per].id;

	if (pi->inc_line) {
		report(v, C, s->file, rec, "a second inc record of incarnation '%s'", id);
		return;
	}
	pi->inc_line = rec;
	if (n != pi->samples)
		report(v, C, s->file, rec, "samples %llu, the stream has %llu of incarnation '%s'", (unsigned long long)n,
		       (unsigned long long)pi->samples, id);
	/* a free refused above leaves the live sums unknown: reported once, there */
	if (!pi->bad_free && live != pi->samples - (pi->frees < pi->samples ? pi->frees : pi->samples))
		report(v, C, s->file, rec, "live_samples %llu is not its %llu samples less its %llu frees",
		       (unsigned long long)live, (unsigned long long)pi->samples, (unsigned long long)pi->frees);
	if (!pi->bad_free && !rt->seq_full && pi->est_bytes >= pi->freed_est && leb != pi->est_bytes - pi->freed_est)
		report(v, PMU_CHECK_ALLOC_ESTIMATE, s->file, rec, "live_est_bytes %llu is not the sum of its unfreed "
		       "samples' est_bytes, %llu", (unsigned long long)leb,
		       (unsigned long long)(pi->est_bytes - pi->freed_est));
	if (eb != pi->est_bytes)
		report(v, PMU_CHECK_ALLOC_ESTIMATE, s->file, rec, "est_bytes %llu is not the sum of its samples' %llu",
		       (unsigned long long)eb, (unsigned long long)pi->est_bytes);
	if (eo != (pi->est_milli + 500) / 1000)
		report(v, PMU_CHECK_ALLOC_ESTIMATE, s->file, rec, "est_objects %llu is not its samples' "
		       "est_objects_milli / 1000, rounded: %llu", (unsigned long long)eo,
		       (unsigned long long)((pi->est_milli + 500) / 1000));
}

static void on_alloc(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r, const char *type)
{
	struct rt_state *rt = s->rt;
	enum pmu_check C = PMU_CHECK_ALLOC_SHAPE;

	if (!strcmp(type, "probe")) {
		report(v, C, s->file, rec, "a probe record in an alloc stream");
		return;
	}
	if (!rt_phase(v, s, C, rec, type))
		return;
	if (!strcmp(type, "config")) {
		rt->chains = fbool(rf(r, "chains"));
		rt->chains_known = rf(r, "chains") != NULL;
		rt->sample_bytes = ri(r, "sample_bytes");
		if (!rt->sample_bytes)
			report(v, C, s->file, rec, "sample_bytes is 0: no interval to sample with");
		return;
	}
	if (!strcmp(type, "summary")) {
		rt->sum_line = rec;
		if (ri(r, "samples") != rt->samples)
			report(v, C, s->file, rec, "summary says %llu samples, the stream has %llu",
			       (unsigned long long)ri(r, "samples"), (unsigned long long)rt->samples);
		if (ri(r, "frees") != rt->frees)
			report(v, C, s->file, rec, "summary says %llu frees, the stream has %llu",
			       (unsigned long long)ri(r, "frees"), (unsigned long long)rt->frees);
		if (ri(r, "lost") != rt->lost)
			report(v, C, s->file, rec, "summary says %llu lost, the loss records sum to %llu",
			       (unsigned long long)ri(r, "lost"), (unsigned long long)rt->lost);
		eval(v, PMU_CHECK_ALLOC_ESTIMATE);
		if (ri(r, "est_bytes") != rt->est_bytes)
			report(v, PMU_CHECK_ALLOC_ESTIMATE, s->file, rec, "summary says est_bytes %llu, its samples' sum "
			       "to %llu", (unsigned long long)ri(r, "est_bytes"), (unsigned long long)rt->est_bytes);
		rt_malformed(v, s->file, rec, ri(r, "malformed"));
		return;
	}
	uint64_t t = ri(r, "t_ns");

	pmu_v_time_order(v, s, rec, "t_ns", t);
	check_window(v, s->file, rec, "t_ns", t);
	if (!strcmp(type, "sample")) {
		sample_rec(v, s, rec, r, t);
	} else if (!strcmp(type, "free")) {
		free_rec(v, s, rec, r, t);
	} else if (!strcmp(type, "inc")) {
		inc_rec(v, s, rec, r, t);
	} else if (!strcmp(type, "loss")) {
		uint64_t lost = ri(r, "lost");
		const struct pmu_jfield *w = rf(r, "what");
		char what[160];

		rt->lost += lost;
		if (!lost) {
			report(v, C, s->file, rec, "a loss record of nothing lost");
			return;
		}
		snprintf(what, sizeof(what), "%llu %s (%.*s)", (unsigned long long)lost,
			 fis(w, "reserve") ? "samples lost: the ring was full"
			 : fis(w, "pending-map") ? "allocations not sampled: their entry could not be kept"
			 : fis(w, "live-map") ? "sampled addresses not kept: their frees are not seen"
			 : "samples the interposer could not send", w ? (int)w->slen : 0, w ? w->s : "");
		rt_loss(v, s->file, rec, what);
	}
}

static void alloc_end(struct v *v, struct stream_state *s)
{
	struct rt_state *rt = s->rt;

	if (!rt->configs)
		report(v, PMU_CHECK_ALLOC_SHAPE, s->file, 0, "the alloc stream has no config record");
	if (!rt->summaries)
		report(v, PMU_CHECK_ALLOC_SHAPE, s->file, 0, "the alloc stream has no summary record at its end");
	/* every incarnation sampled has its inc record */
	for (size_t i = 0; i < rt->nper; i++)
		if (rt->per[i].samples && !rt->per[i].inc_line)
			report(v, PMU_CHECK_ALLOC_SHAPE, s->file, 0, "incarnation '%s' has samples and no inc record",
			       v->incs[i].id);
}

/* ---- dispatch -------------------------------------------------------------- */

void pmu_v_on_rt(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r, const char *type)
{
	if (s->rt->kind == RT_PROBES) {
		eval(v, PMU_CHECK_PROBES_SHAPE);
		on_probes(v, s, rec, r, type);
	} else {
		eval(v, PMU_CHECK_ALLOC_SHAPE);
		on_alloc(v, s, rec, r, type);
	}
}

void pmu_v_rt_end(struct v *v, struct stream_state *s)
{
	if (s->rt->kind == RT_PROBES) {
		eval(v, PMU_CHECK_PROBES_SHAPE);
		probes_end(v, s);
	} else {
		eval(v, PMU_CHECK_ALLOC_SHAPE);
		eval(v, PMU_CHECK_ALLOC_ESTIMATE);
		alloc_end(v, s);
	}
	free(s->rt->per);
	free(s->rt->made);
	free(s->rt->seq_est);
	free(s->rt->seq_inc);
	free(s->rt);
	s->rt = NULL;
}
