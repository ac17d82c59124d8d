/*
 * The rules of streams, record by record: the header, time order and the
 * run window, attribution to the cohort, spans and marks, the pairing of
 * events, collector lifecycles and loss, and the counts of spec 1.2 with
 * their sums.  pmu_v_check_stream() reads a stream through
 * validate_scan.c and hands each accepted record to the rules of its kind
 * (the cohort stream's to validate_cohort.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "error.h"
#include "jsonl.h"
#include "spec.h"
#include "util.h"
#include "validate_int.h"

#define STACK_LIMIT 4096          /* open enters per thread */

/* ---- attribution -------------------------------------------------------- */

/* Attribution of a record (its inc member, and pid when has_pid) to a live
 * incarnation; returns the inc or NULL. */
static inline struct inc *attribute_f(struct v *v, const char *file, uint64_t rec, const struct pmu_jfield *inc,
				      bool has_pid, uint64_t pid, int64_t tid, uint64_t t0, uint64_t t1, size_t *slot)
{
	int64_t *tp;
	struct inc *in;

	if (!v->cohort_ok)
		return NULL;
	eval(v, PMU_CHECK_ATTRIBUTION);
	struct inc **c = &v->inc_cache[(inc->slen * 7 + (inc->slen ? (unsigned char)inc->s[inc->slen - 1] : 0)) & 15];

	in = *c;
	if (!in || in->idlen != inc->slen || !lit_eq(in->id, inc->s, inc->slen))
		in = *c = pmu_v_find_inc(v, inc->s, inc->slen);
	if (!in) {
		report(v, PMU_CHECK_ATTRIBUTION, file, rec, "incarnation '%.*s' is not in the cohort",
		       (int)inc->slen, inc->s);
		return NULL;
	}
	if (has_pid && (int64_t)pid != in->pid) {
		report(v, PMU_CHECK_ATTRIBUTION, file, rec, "pid %llu is not incarnation '%s' (pid %lld)",
		       (unsigned long long)pid, in->id, (long long)in->pid);
		return NULL;
	}
	/* a thread seen lately: its slot, with no search */
	size_t tc = (size_t)tid & 63;

	if (v->tid_cache[tc].in == in && v->tid_cache[tc].tid == tid) {
		if (t0 < in->start || t1 > in->end) {
			report(v, PMU_CHECK_ATTRIBUTION, file, rec, "at %llu incarnation '%s' was not alive",
			       (unsigned long long)(t0 < in->start ? t0 : t1), in->id);
			return NULL;
		}
		*slot = v->tid_cache[tc].slot;
		return in;
	}
	/* bsearch(), without a call per probe; a few threads: counted,
	 * without a branch to mispredict */
	tp = NULL;
	if (in->ntids <= 16) {
		size_t lo = 0;

		for (size_t i = 0; i < in->ntids; i++)
			lo += in->tids[i] < tid;
		if (lo < in->ntids && in->tids[lo] == tid)
			tp = &in->tids[lo];
	}
	for (size_t lo = 0, hi = in->ntids > 16 ? in->ntids : 0; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (in->tids[mid] == tid) {
			tp = &in->tids[mid];
			break;
		}
		if (in->tids[mid] < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!tp) {
		report(v, PMU_CHECK_ATTRIBUTION, file, rec, "tid %lld is not a thread of incarnation '%s'",
		       (long long)tid, in->id);
		return NULL;
	}
	if (t0 < in->start || t1 > in->end) {
		report(v, PMU_CHECK_ATTRIBUTION, file, rec, "at %llu incarnation '%s' was not alive",
		       (unsigned long long)(t0 < in->start ? t0 : t1), in->id);
		return NULL;
	}
	*slot = in->slot + (size_t)(tp - in->tids);
	v->tid_cache[tc].in = in;
	v->tid_cache[tc].tid = tid;
	v->tid_cache[tc].slot = *slot;
	return in;
}

static struct inc *attribute(struct v *v, const char *file, uint64_t rec, const struct pmu_jrec *r,
			     bool has_pid, uint64_t t0, uint64_t t1, size_t *slot)
{
	return attribute_f(v, file, rec, rf(r, "inc"), has_pid, has_pid ? ri(r, "pid") : 0, (int64_t)ri(r, "tid"),
			   t0, t1, slot);
}

struct inc *pmu_v_attribute(struct v *v, const char *file, uint64_t rec, const struct pmu_jrec *r, bool has_pid,
			    uint64_t t0, uint64_t t1)
{
	size_t slot;

	return attribute(v, file, rec, r, has_pid, t0, t1, &slot);
}

struct inc *pmu_v_attribute_tid(struct v *v, const char *file, uint64_t rec, const struct pmu_jfield *inc,
				uint64_t pid, int64_t tid, uint64_t t0, uint64_t t1)
{
	size_t slot;

	if (!inc)
		return NULL;
	return attribute_f(v, file, rec, inc, true, pid, tid, t0, t1, &slot);
}

struct inc *pmu_v_attribute_proc(struct v *v, const char *file, uint64_t rec, const struct pmu_jrec *r, uint64_t t0,
				 uint64_t t1, bool timed)
{
	const struct pmu_jfield *inc = rf(r, "inc");
	uint64_t pid = ri(r, "pid");
	struct inc *in;

	if (!v->cohort_ok || !inc)
		return NULL;
	eval(v, PMU_CHECK_ATTRIBUTION);
	in = pmu_v_find_inc(v, inc->s, inc->slen);
	if (!in) {
		report(v, PMU_CHECK_ATTRIBUTION, file, rec, "incarnation '%.*s' is not in the cohort",
		       (int)inc->slen, inc->s);
		return NULL;
	}
	if ((int64_t)pid != in->pid) {
		report(v, PMU_CHECK_ATTRIBUTION, file, rec, "pid %llu is not incarnation '%s' (pid %lld)",
		       (unsigned long long)pid, in->id, (long long)in->pid);
		return NULL;
	}
	if (timed && (t0 < in->start || t1 > in->end)) {
		report(v, PMU_CHECK_ATTRIBUTION, file, rec, "at %llu incarnation '%s' was not alive",
		       (unsigned long long)(t0 < in->start ? t0 : t1), in->id);
		return NULL;
	}
	return in;
}

/* ---- header, time order, spans, events, lifecycles ---------------------- */

static void check_header(struct v *v, struct stream_state *s, const char *line, size_t len)
{
	json_error_t je;
	/* no NUL: jansson would drop one that follows a number or literal */
	json_t *j = memchr(line, '\0', len) ? NULL : json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
	const struct pmu_objdef *objs[16];
	json_t *type, *stream, *spec;

	eval(v, PMU_CHECK_STREAM_HEADER);
	if (!j || !json_is_object(j)) {
		report(v, PMU_CHECK_STREAM_HEADER, s->file, 1, "first record is not a header object");
		json_decref(j);
		return;
	}
	type = json_object_get(j, "type");
	stream = json_object_get(j, "stream");
	spec = json_object_get(j, "spec");
	if (!json_is_string(type) || strcmp(json_string_value(type), "header")) {
		report(v, PMU_CHECK_STREAM_HEADER, s->file, 1, "first record is not a header");
	} else if (!json_is_string(stream) || strcmp(json_string_value(stream), s->sd->kind)) {
		report(v, PMU_CHECK_STREAM_HEADER, s->file, 1, "header names stream '%s', this file holds '%s'",
		       json_is_string(stream) ? json_string_value(stream) : "?", s->sd->kind);
	} else if (!pmu_v_check_json_obj(v, s->file, s->sd->header, j, "header", 0)) {
		if (strcmp(json_string_value(spec), v->spec))
			report(v, PMU_CHECK_SPEC_VERSION, s->file, 1, "spec '%s' differs from the bag's '%s'",
			       json_string_value(spec), v->spec);
		size_t nobj = 0;

		for (size_t i = 0; i < s->sd->nrecs && nobj < 16; i++)
			if (s->sd->recs[i].since <= v->minor)
				objs[nobj++] = s->sd->recs[i].obj;
		pmu_v_check_units(v, s->file, 1, json_object_get(j, "units"), objs, nobj);
	}
	json_decref(j);
}

static void time_order(struct v *v, struct stream_state *s, uint64_t rec, const char *what, uint64_t t)
{
	eval(v, PMU_CHECK_TIME_ORDER);
	if (s->have_t && t < s->last_t)
		report(v, PMU_CHECK_TIME_ORDER, s->file, rec, "%s %llu is before the previous record's %llu",
		       what, (unsigned long long)t, (unsigned long long)s->last_t);
	s->last_t = t;
	s->have_t = true;
}

void pmu_v_time_order(struct v *v, struct stream_state *s, uint64_t rec, const char *what, uint64_t t)
{
	time_order(v, s, rec, what, t);
}

static void on_mark(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r)
{
	uint64_t t = ri(r, "t_ns");
	size_t slot;

	time_order(v, s, rec, "t_ns", t);
	check_window(v, s->file, rec, "t_ns", t);
	attribute(v, s->file, rec, r, false, t, t, &slot);
}

static void on_span(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r)
{
	uint64_t b = ri(r, "begin_ns"), e = ri(r, "end_ns");
	const struct pmu_jfield *id = rf(r, "id"), *parent = rf(r, "parent");
	size_t slot;

	if (e < b) {
		eval(v, PMU_CHECK_TIME_ORDER);
		report(v, PMU_CHECK_TIME_ORDER, s->file, rec, "span ends before it begins");
	}
	time_order(v, s, rec, "end_ns", e);
	check_window(v, s->file, rec, "begin_ns", b);
	check_window(v, s->file, rec, "end_ns", e);
	attribute(v, s->file, rec, r, false, b, e, &slot);
	if (!pmu_v_span_room(v))
		return;
	v->spans[v->nspans++] = (struct span){
		hash_bytes(id->s, id->slen), parent ? hash_bytes(parent->s, parent->slen) : 0, b, e, rec,
		parent != NULL, 0, 0,
	};
}

bool pmu_v_span_room(struct v *v)
{
	if (v->nspans == v->capspans) {
		size_t cap = v->capspans ? 2 * v->capspans : 256;
		struct span *sp = cap <= SIZE_MAX / sizeof(*sp) ? realloc(v->spans, cap * sizeof(*sp)) : NULL;

		if (!sp) {
			v->spans_dropped++;
			return false;
		}
		v->spans = sp;
		v->capspans = cap;
	}
	return true;
}

static int cmp_span(const void *a, const void *b)
{
	uint64_t x = ((const struct span *)a)->id_h, y = ((const struct span *)b)->id_h;

	return (x > y) - (x < y);
}

void pmu_v_check_spans(struct v *v, const char *file, size_t base)
{
	struct span *spans = v->spans ? v->spans + base : NULL;
	size_t n = v->nspans > base ? v->nspans - base : 0;

	eval(v, PMU_CHECK_SPAN_ID);
	eval(v, PMU_CHECK_SPAN_PARENT);
	eval(v, PMU_CHECK_SPAN_CYCLE);
	eval(v, PMU_CHECK_SPAN_NESTING);
	/* A span the table could not hold would make its children's parents
	 * missing: say so instead, once, and check nothing that would lie */
	if (v->spans_dropped) {
		report(v, PMU_CHECK_SPAN_PARENT, file, 0, "out of memory: %zu spans held (%zu bytes each), %zu not; "
		       "the span rules are not checked", n, sizeof(*spans), v->spans_dropped);
		v->spans_dropped = 0;
		return;
	}
	if (!n)
		return; /* no spans: spans is NULL, which qsort must not get */
	qsort(spans, n, sizeof(*spans), cmp_span);
	for (size_t i = 1; i < n; i++)
		if (spans[i].id_h == spans[i - 1].id_h)
			report(v, PMU_CHECK_SPAN_ID, file, spans[i].line, "span id is not unique");
	for (size_t i = 0; i < n; i++) {
		struct span *sp = &spans[i], key, *p;

		sp->parent_ix = SIZE_MAX;
		if (!sp->has_parent)
			continue;
		key.id_h = sp->parent_h;
		p = bsearch(&key, spans, n, sizeof(*spans), cmp_span);
		if (!p) {
			report(v, PMU_CHECK_SPAN_PARENT, file, sp->line, "parent span does not exist");
			continue;
		}
		sp->parent_ix = (size_t)(p - spans);
		if (sp->begin < p->begin || sp->end > p->end)
			report(v, PMU_CHECK_SPAN_NESTING, file, sp->line,
			       "span [%llu, %llu] is not inside its parent's [%llu, %llu]",
			       (unsigned long long)sp->begin, (unsigned long long)sp->end,
			       (unsigned long long)p->begin, (unsigned long long)p->end);
	}
	/* Cycle detection: follow parent links, colouring 1 (on the current
	 * path) and 2 (known to reach a root). */
	for (size_t i = 0; i < n; i++) {
		size_t k = i;

		while (k != SIZE_MAX && spans[k].state == 0) {
			spans[k].state = 1;
			k = spans[k].parent_ix;
		}
		if (k != SIZE_MAX && spans[k].state == 1)
			report(v, PMU_CHECK_SPAN_CYCLE, file, spans[k].line, "span is its own ancestor");
		for (k = i; k != SIZE_MAX && spans[k].state == 1; k = spans[k].parent_ix)
			spans[k].state = 2;
	}
}

/* An event's attribution and enter/exit pairing, from its members. */
static inline void event_core(struct v *v, struct stream_state *s, uint64_t rec, uint64_t t,
			      const struct pmu_jfield *inc, uint64_t pid, int64_t tid, const struct pmu_jfield *name,
			      const struct pmu_jfield *ph)
{
	size_t slot;

	if (!attribute_f(v, s->file, rec, inc, true, pid, tid, t, t, &slot))
		return;
	struct stack *st = &v->stacks[slot];
	uint64_t h;

	eval(v, PMU_CHECK_PAIRING);
	if (ph->s[0] != 'B' && ph->s[0] != 'E')
		return; /* an instant pairs with nothing */
	h = hash_bytes(name->s, name->slen);
	if (ph->s[0] == 'B') {
		if (st->n == STACK_LIMIT) {
			report(v, PMU_CHECK_PAIRING, s->file, rec, "more than %d enters open on tid %llu",
			       STACK_LIMIT, (unsigned long long)tid);
			return;
		}
		if (st->n == st->cap) {
			size_t cap = st->cap ? 2 * st->cap : 8;
			uint64_t *nv = realloc(st->v, cap * sizeof(*nv));

			if (!nv)
				return;
			st->v = nv;
			st->cap = cap;
		}
		st->v[st->n++] = h;
		st->line = rec;
	} else if (ph->s[0] == 'E') {
		if (!st->n || st->v[st->n - 1] != h)
			report(v, PMU_CHECK_PAIRING, s->file, rec, "exit of '%.*s' on tid %llu matches no open enter",
			       (int)name->slen, name->s, (unsigned long long)tid);
		else
			st->n--;
	}
}

static void on_event(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r,
		     const char *type)
{
	uint64_t t = ri(r, "t_ns");

	time_order(v, s, rec, "t_ns", t);
	check_window(v, s->file, rec, "t_ns", t);
	if (type[0] == 'l' && !strcmp(type, "loss")) {
		uint64_t lost = ri(r, "lost");

		eval(v, PMU_CHECK_LOSS);
		if (lost > 0)
			pmu_v_report_sev(v, PMU_CHECK_LOSS, v->tolerate_loss ? PMU_SEV_WARNING : PMU_SEV_ERROR,
					 s->file, rec, "%llu records lost%s", (unsigned long long)lost,
					 v->tolerate_loss ? " (tolerated: run.json tolerate_loss)" : "");
		return;
	}
	if (type[0] == 'm' && !strcmp(type, "malformed")) {
		const struct pmu_jfield *why = rf(r, "reason");

		report(v, PMU_CHECK_MALFORMED, s->file, rec, "collector saw a malformed record: %.*s",
		       (int)why->slen, why->s);
		return;
	}
	if (type[0] == 't' && !strcmp(type, "truncation")) {
		const struct pmu_jfield *why = rf(r, "reason");

		report(v, PMU_CHECK_TRUNCATED, s->file, rec, "stream truncated: %.*s", (int)why->slen, why->s);
		return;
	}
	event_core(v, s, rec, t, rf(r, "inc"), ri(r, "pid"), (int64_t)ri(r, "tid"), rf(r, "name"), rf(r, "ph"));
}

/* on_event() of an "event" record that matched a shape with every member
 * event_core() reads: straight from their places, no lookup by name. */
static void on_event_roles(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r,
			   const struct ev_roles *ro)
{
	uint64_t t = (uint64_t)r->f[ro->t].i;

	time_order(v, s, rec, "t_ns", t);
	check_window(v, s->file, rec, "t_ns", t);
	event_core(v, s, rec, t, &r->f[ro->inc], (uint64_t)r->f[ro->pid].i, r->f[ro->tid].i, &r->f[ro->name],
		   &r->f[ro->ph]);
}

static int lc_step(const char *ev)
{
	static const char *const order[] = { "requested", "probed", "opened", "attached", "stopped",
					     "detached", "final" };

	for (int i = 0; i < 7; i++)
		if (!strcmp(ev, order[i]))
			return i;
	return -1; /* drop, malformed */
}

static void on_lifecycle(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r)
{
	const struct pmu_jfield *evf = rf(r, "event"), *stf = rf(r, "status");
	char ev[16], st[16] = "";
	int step;

	snprintf(ev, sizeof(ev), "%.*s", (int)evf->slen, evf->s);
	if (stf)
		snprintf(st, sizeof(st), "%.*s", (int)stf->slen, stf->s);
	time_order(v, s, rec, "t_ns", ri(r, "t_ns"));
	check_window(v, s->file, rec, "t_ns", ri(r, "t_ns"));
	eval(v, PMU_CHECK_LIFECYCLE);
	s->lc_records++;
	if (s->final_seen) {
		report(v, PMU_CHECK_LIFECYCLE, s->file, rec, "'%s' after the final record", ev);
		return;
	}
	step = lc_step(ev);
	if (step < 0) {
		uint64_t count = ri(r, "count");

		if (!rf(r, "count"))
			report(v, PMU_CHECK_LIFECYCLE, s->file, rec, "'%s' without a count", ev);
		else if (!s->steps[2])
			report(v, PMU_CHECK_LIFECYCLE, s->file, rec, "'%s' before the collector opened", ev);
		if (!strcmp(ev, "drop") && count) {
			eval(v, PMU_CHECK_LOSS);
			pmu_v_report_sev(v, PMU_CHECK_LOSS, v->tolerate_loss ? PMU_SEV_WARNING : PMU_SEV_ERROR, s->file,
					 rec, "collector '%s' dropped %llu records%s", s->collector,
					 (unsigned long long)count,
					 v->tolerate_loss ? " (tolerated: run.json tolerate_loss)" : "");
		} else if (!strcmp(ev, "malformed") && count) {
			report(v, PMU_CHECK_MALFORMED, s->file, rec, "collector '%s' saw %llu malformed records",
			       s->collector, (unsigned long long)count);
		}
		return;
	}
	if (step <= s->last_step)
		report(v, PMU_CHECK_LIFECYCLE, s->file, rec, "'%s' is out of order", ev);
	if (step == 3 && !rf(r, "evidence"))
		report(v, PMU_CHECK_LIFECYCLE, s->file, rec, "'attached' without evidence");
	if (step == 6) {
		if (!stf)
			report(v, PMU_CHECK_LIFECYCLE, s->file, rec, "'final' without a status");
		snprintf(s->final_status, sizeof(s->final_status), "%s", st);
		s->final_seen = true;
	}
	s->steps[step] = true;
	s->last_step = step;
}

struct collector *pmu_v_find_coll(struct v *v, const char *name)
{
	for (size_t i = 0; i < v->ncolls; i++)
		if (!strcmp(v->colls[i].name, name))
			return &v->colls[i];
	return NULL;
}

static void lifecycle_end(struct v *v, struct stream_state *s)
{
	struct collector *c = v->run_ok ? pmu_v_find_coll(v, s->collector) : NULL;
	const char *st = s->final_status;

	eval(v, PMU_CHECK_LIFECYCLE);
	if (!s->final_seen) {
		report(v, PMU_CHECK_LIFECYCLE, s->file, 0, "collector '%s' has no final record", s->collector);
		return;
	}
	eval(v, PMU_CHECK_COLLECTOR_FAILED);
	if (!strcmp(st, "failed")) {
		report(v, PMU_CHECK_COLLECTOR_FAILED, s->file, 0, "collector '%s' failed", s->collector);
		return;
	}
	if (!c)
		return;
	if (!c->requested) {
		if (strcmp(st, "not-requested") || s->lc_records != 1)
			report(v, PMU_CHECK_LIFECYCLE, s->file, 0,
			       "collector '%s' was not requested: its lifecycle is one final 'not-requested'",
			       s->collector);
		return;
	}
	if (!s->steps[0] || !s->steps[1])
		report(v, PMU_CHECK_LIFECYCLE, s->file, 0, "collector '%s' lacks 'requested' or 'probed'",
		       s->collector);
	else if (!strcmp(st, "not-requested"))
		report(v, PMU_CHECK_LIFECYCLE, s->file, 0, "collector '%s' was requested but ends 'not-requested'",
		       s->collector);
	else if ((!strcmp(st, "ok") || !strcmp(st, "no-events")) &&
		 !(s->steps[2] && s->steps[3] && s->steps[4] && s->steps[5]))
		report(v, PMU_CHECK_LIFECYCLE, s->file, 0,
		       "collector '%s' ends '%s' without opened, attached, stopped and detached", s->collector, st);
	else if (!strcmp(st, "unavailable") && s->steps[3])
		report(v, PMU_CHECK_LIFECYCLE, s->file, 0, "collector '%s' attached, then ends 'unavailable'",
		       s->collector);
}

/* ---- counts streams (spec 1.2) ------------------------------------------ */

#define COUNTERS_MAX 64

struct csum {                  /* a running sum of parts */
	uint64_t sum;
	uint32_t n, min_ppm;
	bool bad, est, overflow;
};

/*
 * The sums of counts whose total has not come yet, by (incarnation,
 * counter).  Writers give an incarnation its totals once its threads are
 * counted, so few are open at once; a dense [incarnation][counter] table
 * would take 64 sums per incarnation (150 MiB at 100,000), whatever the
 * stream holds.  An open sum leaves the table at its total, and a bit per
 * (incarnation, counter) remembers that the total came.  More than
 * OPEN_SUMS_MAX open at once is refused (COUNT-SUM), so memory stays
 * bounded for any stream.
 */
#define OPEN_SUMS_MAX (1u << 18)

struct open_sum {
	uint64_t key;              /* incarnation index * COUNTERS_MAX + counter, + 1; 0: free */
	struct csum c;
};

struct counts_state {
	struct {
		char name[256];
		bool ns, ok;
	} ctr[COUNTERS_MAX];
	int nctr;
	struct open_sum *open;     /* open addressing, linear probes */
	size_t open_cap, open_n;
	bool open_full;            /* OPEN_SUMS_MAX was reached (reported) */
	uint64_t *totaled;         /* [inc]: bit c set once counter c's total came */
	struct csum tot[COUNTERS_MAX]; /* totals of all incarnations, by counter */
	size_t nincs;
	bool cohort_seen[COUNTERS_MAX];
	char method[32];           /* the stream's count method (1.5), "" until the first */
};

static void csum_init(struct csum *c)
{
	memset(c, 0, sizeof(*c));
	c->min_ppm = 1000000;
}

static void csum_add(struct csum *c, bool ok, uint64_t val, bool est, uint64_t ppm)
{
	c->n++;
	if (!ok) {
		c->bad = true;
		return;
	}
	if (c->sum > (uint64_t)INT64_MAX - val)
		c->overflow = true;
	else
		c->sum += val;
	c->est |= est;
	if (ppm < c->min_ppm)
		c->min_ppm = (uint32_t)ppm;
}

static size_t open_slot(const struct counts_state *cs, uint64_t key)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & (cs->open_cap - 1);
}

/* The open sum of key, or NULL. */
static struct csum *open_find(struct counts_state *cs, uint64_t key)
{
	for (size_t j = cs->open_cap ? open_slot(cs, key) : 0; cs->open_cap && cs->open[j].key;
	     j = (j + 1) & (cs->open_cap - 1))
		if (cs->open[j].key == key)
			return &cs->open[j].c;
	return NULL;
}

/* The open sum of key, added when new; NULL when out of memory or full. */
static struct csum *open_get(struct counts_state *cs, uint64_t key)
{
	struct csum *c = open_find(cs, key);
	size_t j;

	if (c)
		return c;
	if (cs->open_n >= OPEN_SUMS_MAX)
		return NULL;
	if (2 * (cs->open_n + 1) > cs->open_cap) {
		size_t ncap = cs->open_cap ? 2 * cs->open_cap : 1024;
		struct open_sum *old = cs->open, *nt = calloc(ncap, sizeof(*nt));
		size_t ocap = cs->open_cap;

		if (!nt)
			return NULL;
		cs->open = nt;
		cs->open_cap = ncap;
		for (size_t i = 0; i < ocap; i++)
			if (old[i].key) {
				for (j = open_slot(cs, old[i].key); nt[j].key; j = (j + 1) & (ncap - 1))
					;
				nt[j] = old[i];
			}
		free(old);
	}
	for (j = open_slot(cs, key); cs->open[j].key; j = (j + 1) & (cs->open_cap - 1))
		;
	cs->open[j].key = key;
	csum_init(&cs->open[j].c);
	cs->open_n++;
	return &cs->open[j].c;
}

/* Remove key's open sum (backward-shift deletion keeps the probes whole). */
static void open_del(struct counts_state *cs, uint64_t key)
{
	size_t m = cs->open_cap - 1, i, j;

	if (!cs->open_cap)
		return;
	for (i = open_slot(cs, key); cs->open[i].key != key; i = (i + 1) & m)
		if (!cs->open[i].key)
			return;
	for (j = (i + 1) & m; cs->open[j].key; j = (j + 1) & m) {
		size_t h = open_slot(cs, cs->open[j].key);

		/* move j into the hole at i when its home does not lie in (i, j] */
		if (((j - h) & m) >= ((j - i) & m)) {
			cs->open[i] = cs->open[j];
			i = j;
		}
	}
	cs->open[i].key = 0;
	cs->open_n--;
}

static int cmp_open(const void *a, const void *b)
{
	uint64_t x = ((const struct open_sum *)a)->key, y = ((const struct open_sum *)b)->key;

	return (x > y) - (x < y);
}

/* The totals-seen bits, made at the first count or total; false (reported)
 * when there is no memory for them. */
static bool counts_totaled(struct v *v, struct stream_state *s)
{
	struct counts_state *cs = s->cs;

	if (cs->totaled)
		return true;
	cs->nincs = v->nincs;
	cs->totaled = calloc(v->nincs + 1, sizeof(*cs->totaled));
	if (!cs->totaled)
		report(v, PMU_CHECK_COUNT_SUM, s->file, 0, "out of memory for the sums of %zu incarnations", v->nincs);
	return cs->totaled != NULL;
}

static bool fstr_is(const struct pmu_jfield *f, const char *s)
{
	return f && f->type == PMU_JV_STR && f->slen == strlen(s) && !memcmp(f->s, s, f->slen);
}

/* The counter a record names, or -1 with a finding. */
static int count_counter(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r)
{
	const struct pmu_jfield *c = rf(r, "counter");

	for (int i = 0; i < s->cs->nctr; i++)
		if (strlen(s->cs->ctr[i].name) == c->slen && !memcmp(s->cs->ctr[i].name, c->s, c->slen)) {
			if (!s->cs->ctr[i].ok) {
				report(v, PMU_CHECK_COUNT_VALUE, s->file, rec,
				       "counter '%.*s' was not counted (its counter record is not ok)", (int)c->slen, c->s);
				return -1;
			}
			return i;
		}
	report(v, PMU_CHECK_COUNT_VALUE, s->file, rec, "counter '%.*s' is not declared before it", (int)c->slen, c->s);
	return -1;
}

/*
 * The value rules shared by count, total and cohort records: the value is
 * in the field of the counter's unit exactly when the status is ok, with
 * its labels.  Returns false when the record is unusable for sums.
 */
static bool count_value(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r, int ci,
			bool *ok, uint64_t *val, bool *est, uint64_t *ppm)
{
	bool ns = s->cs->ctr[ci].ns;
	const struct pmu_jfield *st = rf(r, "status"), *fv = rf(r, ns ? "value_ns" : "value"),
				*fo = rf(r, ns ? "value" : "value_ns"), *fe = rf(r, "estimate"),
				*fp = rf(r, "running_ppm"), *fz = rf(r, "suspect_zero");
	bool good = true;

	*ok = fstr_is(st, "ok");
	eval(v, PMU_CHECK_FIELD_STATUS);
	if (fo) {
		report(v, PMU_CHECK_COUNT_VALUE, s->file, rec, "'%s' is not the field of a counter in %s",
		       ns ? "value" : "value_ns", ns ? "ns" : "count");
		good = false;
	}
	if (*ok != (fv != NULL)) {
		report(v, PMU_CHECK_FIELD_STATUS, s->file, rec, "status '%.*s' %s a value", (int)st->slen, st->s,
		       *ok ? "without" : "with");
		return false;
	}
	if (!*ok) {
		if (fe || fp || fz) {
			report(v, PMU_CHECK_COUNT_VALUE, s->file, rec, "a record without a value carries its labels");
			good = false;
		}
		*val = 0;
		*est = false;
		*ppm = 0;
		return good;
	}
	*val = (uint64_t)fv->i;
	if (!fe || !fp) {
		report(v, PMU_CHECK_COUNT_VALUE, s->file, rec, "a value without 'estimate' and 'running_ppm'");
		return false;
	}
	*est = fe->type == PMU_JV_BOOL && fe->b;
	*ppm = (uint64_t)fp->i;
	if (*ppm > 1000000 || *est != (*ppm < 1000000)) {
		report(v, PMU_CHECK_COUNT_VALUE, s->file, rec,
		       "running_ppm %llu and estimate %s disagree: an estimate ran under 1000000 ppm, an exact "
		       "value all of it", (unsigned long long)*ppm, *est ? "true" : "false");
		good = false;
	}
	if (fz && fz->type == PMU_JV_BOOL && fz->b && *val != 0) {
		report(v, PMU_CHECK_COUNT_VALUE, s->file, rec, "suspect_zero on a value of %llu",
		       (unsigned long long)*val);
		good = false;
	}
	return good;
}

/*
 * COUNT-METHOD (1.5): one stream's per-incarnation counts are made by one
 * method (the follower's), so every count, total and incarnations' cohort
 * total names the same; a cgroup's cohort total is the cgroup's own
 * counters and names none.  (A value outside the vocabulary is
 * SCHEMA-FIELD's.)
 */
static void count_method(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r,
			 const char *type)
{
	const struct pmu_jfield *m = rf(r, "method");
	bool cgroup = !strcmp(type, "cohort") && !fstr_is(rf(r, "scope"), "incarnations");

	if (v->minor < 5)
		return;
	eval(v, PMU_CHECK_COUNT_METHOD);
	if (cgroup) {
		if (m)
			report(v, PMU_CHECK_COUNT_METHOD, s->file, rec, "a cgroup's cohort total names a method");
		return;
	}
	if (!m || m->type != PMU_JV_STR)
		return; /* SCHEMA-FIELD */
	if (!s->cs->method[0]) {
		snprintf(s->cs->method, sizeof(s->cs->method), "%.*s", (int)m->slen, m->s);
		return;
	}
	if (!fstr_is(m, s->cs->method))
		report(v, PMU_CHECK_COUNT_METHOD, s->file, rec, "method '%.*s', but the stream's counts were made by '%s'",
		       (int)m->slen, m->s, s->cs->method);
}

static void on_counts(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r, const char *type)
{
	struct counts_state *cs = s->cs;
	bool ok, est;
	uint64_t val, ppm, t;
	int ci;

	eval(v, PMU_CHECK_COUNT_VALUE);
	eval(v, PMU_CHECK_COUNT_SUM);
	if (!strcmp(type, "counter")) {
		const struct pmu_jfield *n = rf(r, "name"), *u = rf(r, "unit");
		bool cok = fstr_is(rf(r, "status"), "ok");

		for (int i = 0; i < cs->nctr; i++)
			if (strlen(cs->ctr[i].name) == n->slen && !memcmp(cs->ctr[i].name, n->s, n->slen)) {
				report(v, PMU_CHECK_COUNT_VALUE, s->file, rec, "counter '%.*s' is declared twice",
				       (int)n->slen, n->s);
				return;
			}
		if (cs->nctr == COUNTERS_MAX) {
			report(v, PMU_CHECK_COUNT_VALUE, s->file, rec, "more than %d counters", COUNTERS_MAX);
			return;
		}
		if (cok != (rf(r, "group") != NULL))
			report(v, PMU_CHECK_COUNT_VALUE, s->file, rec, "a counter has a group exactly when it is ok");
		snprintf(cs->ctr[cs->nctr].name, sizeof(cs->ctr[cs->nctr].name), "%.*s", (int)n->slen, n->s);
		cs->ctr[cs->nctr].ns = fstr_is(u, "ns");
		cs->ctr[cs->nctr].ok = cok;
		cs->nctr++;
		return;
	}
	if (!strcmp(type, "scope") || !strcmp(type, "fallback") || !strcmp(type, "cgstat")) {
		if (type[0] == 'f' || type[1] == 'g') {
			t = ri(r, "t_ns");
			time_order(v, s, rec, "t_ns", t);
			check_window(v, s->file, rec, "t_ns", t);
		}
		if (type[1] == 'g') {
			int nv = !!rf(r, "value") + !!rf(r, "value_ns") + !!rf(r, "value_bytes");

			eval(v, PMU_CHECK_FIELD_STATUS);
			if (nv > 1)
				report(v, PMU_CHECK_COUNT_VALUE, s->file, rec, "a cgstat record has one value field");
			else if (fstr_is(rf(r, "status"), "ok") != (nv == 1))
				report(v, PMU_CHECK_FIELD_STATUS, s->file, rec, "a cgstat value is present exactly when "
				       "its status is ok");
			else if (nv == 0 && rf(r, "gauge"))
				report(v, PMU_CHECK_COUNT_VALUE, s->file, rec, "'gauge' labels a value that is absent");
		}
		return;
	}
	t = ri(r, "t_ns");
	time_order(v, s, rec, "t_ns", t);
	check_window(v, s->file, rec, "t_ns", t);
	count_method(v, s, rec, r, type);
	if ((ci = count_counter(v, s, rec, r)) < 0)
		return;
	if (!count_value(v, s, rec, r, ci, &ok, &val, &est, &ppm))
		return;
	/* sums are checked against the cohort: without one, COHORT says why */
	if (!strcmp(type, "count")) {
		size_t slot;
		struct inc *in = attribute(v, s->file, rec, r, false, t, t, &slot);
		bool ns = cs->ctr[ci].ns;
		const struct pmu_jfield *fr = rf(r, ns ? "raw_ns" : "raw"), *fo = rf(r, ns ? "raw" : "raw_ns"),
					*fe = rf(r, "enabled_ns"), *fu = rf(r, "running_ns");

		if (fo)
			report(v, PMU_CHECK_COUNT_VALUE, s->file, rec, "'%s' is not the raw field of this counter",
			       ns ? "raw" : "raw_ns");
		if (ok && (!fr || !fe || !fu)) {
			report(v, PMU_CHECK_COUNT_VALUE, s->file, rec, "a counted value without raw, enabled_ns and "
			       "running_ns");
		} else if (ok) {
			uint64_t raw = (uint64_t)fr->i, en = (uint64_t)fe->i, run = (uint64_t)fu->i;

			if (!est && (run != en || val != raw))
				report(v, PMU_CHECK_COUNT_VALUE, s->file, rec,
				       "an exact value must be the raw count of a counter that ran all the time "
				       "(value %llu, raw %llu, running %llu of %llu ns)", (unsigned long long)val,
				       (unsigned long long)raw, (unsigned long long)run, (unsigned long long)en);
			if (est) {
				unsigned __int128 want = run ? ((unsigned __int128)raw * en + run / 2) / run : 0;
				uint64_t want_ppm = en ? (uint64_t)((unsigned __int128)run * 1000000u / en) : 0;

				if (!run || run >= en || want != val || want_ppm != ppm)
					report(v, PMU_CHECK_COUNT_VALUE, s->file, rec,
					       "an estimate must be raw * enabled / running, rounded (%llu * %llu / %llu), "
					       "with running_ppm %llu; it is %llu with %llu",
					       (unsigned long long)raw, (unsigned long long)en, (unsigned long long)run,
					       (unsigned long long)want_ppm, (unsigned long long)val,
					       (unsigned long long)ppm);
			}
		}
		if (!in)
			return;
		if (!counts_totaled(v, s))
			return;
		size_t ix = (size_t)(in - v->incs);

		if (cs->totaled[ix] >> ci & 1) {
			report(v, PMU_CHECK_COUNT_SUM, s->file, rec, "a count of '%s' in '%s' after its total",
			       cs->ctr[ci].name, in->id);
			return;
		}
		struct csum *a = open_get(cs, (uint64_t)ix * COUNTERS_MAX + (uint64_t)ci + 1);

		if (!a) {
			if (!cs->open_full)
				report(v, PMU_CHECK_COUNT_SUM, s->file, rec, "more than %u sums of counts are open at "
				       "once (counts whose incarnation's total has not come): a writer gives each "
				       "incarnation its totals after its counts", OPEN_SUMS_MAX);
			cs->open_full = true;
			return;
		}
		csum_add(a, ok, val, est, ppm);
		return;
	}
	if (!strcmp(type, "total")) {
		const struct pmu_jfield *inc = rf(r, "inc");
		struct inc *in = v->cohort_ok ? pmu_v_find_inc(v, inc->s, inc->slen) : NULL;
		struct csum empty, *a;
		uint64_t threads = ri(r, "threads");

		if (!v->cohort_ok)
			return;
		if (!in) {
			eval(v, PMU_CHECK_ATTRIBUTION);
			report(v, PMU_CHECK_ATTRIBUTION, s->file, rec, "incarnation '%.*s' is not in the cohort",
			       (int)inc->slen, inc->s);
			return;
		}
		if (!counts_totaled(v, s))
			return;
		size_t ix = (size_t)(in - v->incs);
		uint64_t key = (uint64_t)ix * COUNTERS_MAX + (uint64_t)ci + 1;

		if (cs->totaled[ix] >> ci & 1) {
			report(v, PMU_CHECK_COUNT_SUM, s->file, rec, "a second total of '%s' for '%s'", cs->ctr[ci].name,
			       in->id);
			return;
		}
		cs->totaled[ix] |= 1ull << ci;
		csum_init(&empty);
		a = open_find(cs, key);
		if (a)
			empty = *a;
		open_del(cs, key);
		a = &empty;
		if (threads != a->n)
			report(v, PMU_CHECK_COUNT_SUM, s->file, rec, "total of '%s' for '%s' sums %llu threads, the "
			       "stream has %u counts", cs->ctr[ci].name, in->id, (unsigned long long)threads, a->n);
		else if (ok != (a->n && !a->bad && !a->overflow))
			report(v, PMU_CHECK_COUNT_SUM, s->file, rec, "total of '%s' for '%s' is %s, but %s",
			       cs->ctr[ci].name, in->id, ok ? "ok" : "not ok",
			       ok ? "a part has no value" : "every part has one");
		else if (ok && (val != a->sum || est != a->est || ppm != a->min_ppm))
			report(v, PMU_CHECK_COUNT_SUM, s->file, rec,
			       "total of '%s' for '%s' is %llu (estimate %d, %llu ppm); its counts sum to %llu "
			       "(estimate %d, %u ppm)", cs->ctr[ci].name, in->id, (unsigned long long)val, est,
			       (unsigned long long)ppm, (unsigned long long)a->sum, a->est, a->min_ppm);
		csum_add(&cs->tot[ci], ok, val, est, ppm);
		return;
	}
	/* cohort */
	if (v->cohort_ok && fstr_is(rf(r, "scope"), "incarnations")) {
		struct csum *a = &cs->tot[ci];
		const struct pmu_jfield *fp = rf(r, "parts");

		if (cs->cohort_seen[ci]) {
			report(v, PMU_CHECK_COUNT_SUM, s->file, rec, "a second cohort total of '%s'", cs->ctr[ci].name);
			return;
		}
		cs->cohort_seen[ci] = true;
		if (!fp || (uint64_t)fp->i != a->n)
			report(v, PMU_CHECK_COUNT_SUM, s->file, rec, "cohort total of '%s' must sum the %u totals",
			       cs->ctr[ci].name, a->n);
		else if (ok != (a->n && !a->bad && !a->overflow))
			report(v, PMU_CHECK_COUNT_SUM, s->file, rec, "cohort total of '%s' is %s, but %s", cs->ctr[ci].name,
			       ok ? "ok" : "not ok", ok ? "a total has no value" : "every total has one");
		else if (ok && (val != a->sum || est != a->est || ppm != a->min_ppm))
			report(v, PMU_CHECK_COUNT_SUM, s->file, rec,
			       "cohort total of '%s' is %llu; the incarnations' totals sum to %llu", cs->ctr[ci].name,
			       (unsigned long long)val, (unsigned long long)a->sum);
	}
}

static void counts_end(struct v *v, struct stream_state *s)
{
	struct counts_state *cs = s->cs;

	/* what is still open had no total; reported in (incarnation, counter)
	 * order, as the stream's readers expect */
	size_t n = 0;

	for (size_t i = 0; i < cs->open_cap; i++)
		if (cs->open[i].key)
			cs->open[n++] = cs->open[i];
	if (n)
		qsort(cs->open, n, sizeof(*cs->open), cmp_open);
	for (size_t i = 0; i < n; i++) {
		size_t ix = (size_t)((cs->open[i].key - 1) / COUNTERS_MAX);
		int c = (int)((cs->open[i].key - 1) % COUNTERS_MAX);

		if (cs->open[i].c.n && ix < v->nincs)
			report(v, PMU_CHECK_COUNT_SUM, s->file, 0, "counts of '%s' in '%s' have no total",
			       cs->ctr[c].name, v->incs[ix].id);
	}
	for (int c = 0; c < cs->nctr; c++)
		if (cs->ctr[c].ok && cs->tot[c].n && !cs->cohort_seen[c])
			report(v, PMU_CHECK_COUNT_SUM, s->file, 0, "counter '%s' has totals but no cohort total",
			       cs->ctr[c].name);
	free(cs->open);
	free(cs->totaled);
	free(cs);
	s->cs = NULL;
}

void pmu_v_check_stream(struct v *v, const struct pmu_streamdef *sd, const char *file, const char *coll)
{
	struct stream_state s = { sd, file, coll, 0, false, -1, { 0 }, false, "", 0, NULL, 0, false, false,
				  NULL, NULL, NULL, NULL };
	struct shapes *shp;
	struct lines l;
	const char *line = NULL, *why;
	size_t len = 0, at;
	bool nl = true;
	int r;

	memset(v->inc_cache, 0, sizeof(v->inc_cache));
	memset(v->tid_cache, 0, sizeof(v->tid_cache));
	if (pmu_v_lines_open(&l, v, file)) {
		report(v, PMU_CHECK_JSON_SYNTAX, file, 0, "%s", pmu_error_detail());
		return;
	}
	eval(v, PMU_CHECK_JSON_SYNTAX);
	eval(v, PMU_CHECK_SCHEMA_TYPE);
	eval(v, PMU_CHECK_SCHEMA_FIELD);
	/* only the stacks used are written: the others stay pages never
	 * touched (calloc), which take no memory */
	if (v->cohort_ok)
		for (size_t i = 0; i < v->nslots; i++)
			if (v->stacks[i].n)
				v->stacks[i].n = 0;
	bool is_spans = !strcmp(sd->kind, "spans"), is_lifecycle = !strcmp(sd->kind, "lifecycle"),
	     is_counts = !strcmp(sd->kind, "counts"), is_cohort = !strcmp(sd->kind, "cohort"),
	     is_samples = !strcmp(sd->kind, "samples"), is_maps = !strcmp(sd->kind, "maps"),
	     is_os = pmu_v_os_kind(sd) >= 0, is_rt = pmu_v_rt_kind(sd) >= 0,
	     is_events = !is_spans && !is_lifecycle && !is_counts && !is_cohort && !is_samples && !is_maps && !is_os &&
			 !is_rt;

	if (pmu_v_samples_begin(&s) || pmu_v_os_begin(&s) || pmu_v_rt_begin(v, &s)) {
		report(v, PMU_CHECK_JSON_SYNTAX, file, 0, "out of memory");
		pmu_v_lines_close(&l);
		return;
	}

	if (is_counts) {
		s.cs = calloc(1, sizeof(*s.cs));
		if (!s.cs) {
			report(v, PMU_CHECK_JSON_SYNTAX, file, 0, "out of memory");
			pmu_v_lines_close(&l);
			return;
		}
		for (int i = 0; i < COUNTERS_MAX; i++)
			csum_init(&s.cs->tot[i]);
	}

	/* none: every line takes the full path */
	shp = v->opts->no_shapes ? NULL : calloc(1, sizeof(*shp));
	if (shp)
		shp->masks = pmu_v_lmask_pick(v->opts->line_masks);
	for (;;) {
		const struct pmu_recdef *rd;
		const struct pmu_jfield *type;
		struct shape *sh;

		/* the next buffered line, found by the shape it matches: no
		 * search for its end (a line not whole in the buffer yet, or
		 * of no shape, takes pmu_v_lines_next()) */
		if (shp && l.lineno > 0 &&
		    (sh = pmu_v_shapes_match(shp, l.buf + l.start, l.buf + l.end, true, &len, &v->rec))) {
			line = l.buf + l.start;
			l.start += len + 1;
			l.lineno++;
			goto matched;
		}
		if ((r = pmu_v_lines_next(&l, &line, &len, &nl)) == 0)
			break;

		if (r == -1) {
			report(v, PMU_CHECK_JSON_SYNTAX, file, l.lineno, "record longer than %u bytes", LINE_LIMIT);
			continue;
		}
		if (r < 0) {
			report(v, PMU_CHECK_JSON_SYNTAX, file, l.lineno, "%s", pmu_error_detail());
			break;
		}
		if (!nl)
			report(v, PMU_CHECK_JSON_SYNTAX, file, l.lineno, "last record does not end with a newline");
		/* Anywhere in the line: JSON members have no order, so a header
		 * may name its type after a long units object. */
		if (l.lineno == 1 && len > 9 && memmem(line, len, "\"header\"", 8)) {
			check_header(v, &s, line, len);
			continue;
		}
		if (l.lineno == 1)
			report(v, PMU_CHECK_STREAM_HEADER, file, 1, "first record is not a header");
		if (shp && (sh = pmu_v_shapes_match(shp, line, line + len, false, &len, &v->rec))) {
matched:
			rd = sh->rd;
			v->res->shape_records++;
			if (sh->ev.ok && is_events) {
				on_event_roles(v, &s, l.lineno, &v->rec, &sh->ev);
				continue;
			}
			goto accepted;
		}
		if (pmu_jrec_parse(&v->rec, line, len, &why, &at)) {
			report(v, PMU_CHECK_JSON_SYNTAX, file, l.lineno, "%s at byte %zu", why, at + 1);
			continue;
		}
		type = rf(&v->rec, "type");
		if (!type || type->type != PMU_JV_STR) {
			report(v, PMU_CHECK_SCHEMA_TYPE, file, l.lineno, "record has no type");
			continue;
		}
		rd = pmu_streamdef_rec(sd, type->s, type->slen);
		if (rd && rd->since > v->minor) {
			report(v, PMU_CHECK_SCHEMA_TYPE, file, l.lineno,
			       "record type '%s' was added after spec 1.%d", rd->type, v->minor);
			continue;
		}
		if (!rd) {
			report(v, PMU_CHECK_SCHEMA_TYPE, file, l.lineno, "record type '%.*s' is not defined for %s streams",
			       (int)type->slen, type->s, sd->kind);
			continue;
		}
		if (pmu_v_check_rec(v, file, l.lineno, rd->obj, &v->rec))
			continue;
		if (shp)
			pmu_v_shape_learn(shp, line, len, &v->rec, rd, is_events);
accepted:
		if (is_spans && rd->type[0] == 'm')
			on_mark(v, &s, l.lineno, &v->rec);
		else if (is_spans)
			on_span(v, &s, l.lineno, &v->rec);
		else if (is_lifecycle)
			on_lifecycle(v, &s, l.lineno, &v->rec);
		else if (is_counts)
			on_counts(v, &s, l.lineno, &v->rec, rd->type);
		else if (is_cohort)
			pmu_v_on_cohort(v, &s, l.lineno, &v->rec, rd->type);
		else if (is_samples)
			pmu_v_on_samples(v, &s, l.lineno, &v->rec, rd->type);
		else if (is_maps)
			pmu_v_on_maps(v, &s, l.lineno, &v->rec, rd->type);
		else if (is_os)
			pmu_v_on_os(v, &s, l.lineno, &v->rec, rd->type);
		else if (is_rt)
			pmu_v_on_rt(v, &s, l.lineno, &v->rec, rd->type);
		else
			on_event(v, &s, l.lineno, &v->rec, rd->type);
	}
	free(shp);
	if (l.lineno == 0) {
		eval(v, PMU_CHECK_STREAM_HEADER);
		report(v, PMU_CHECK_STREAM_HEADER, file, 0, "stream is empty: it has no header");
	}
	pmu_v_lines_close(&l);
	if (!strcmp(sd->kind, "lifecycle"))
		lifecycle_end(v, &s);
	if (!strcmp(sd->kind, "spans"))
		pmu_v_check_spans(v, file, 0);
	if (s.cs)
		counts_end(v, &s);
	if (s.ss)
		pmu_v_samples_end(v, &s);
	if (s.ms)
		pmu_v_maps_end(v, &s);
	if (s.os)
		pmu_v_os_end(v, &s);
	if (s.rt)
		pmu_v_rt_end(v, &s);
	if (!strcmp(sd->kind, "events") && v->cohort_ok) {
		eval(v, PMU_CHECK_PAIRING);
		for (size_t i = 0; i < v->nslots; i++)
			if (v->stacks[i].n)
				report(v, PMU_CHECK_PAIRING, file, v->stacks[i].line,
				       "%zu enter(s) never exited", v->stacks[i].n);
	}
}

