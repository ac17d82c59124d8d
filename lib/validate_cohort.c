/*
 * The cohort: the table of incarnations and their threads that streams
 * attribute their records to, filled from either form, the document
 * cohort.json (spec 1.0-1.2, split one incarnation at a time) or the
 * cohort stream (1.3, record by record through pmu_v_check_stream()).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "docsplit.h"
#include "error.h"
#include "jsonbound.h"
#include "spec.h"
#include "util.h"
#include "validate_int.h"

/* ---- the cohort ----------------------------------------------------------
 *
 * Both forms, the document cohort.json of 1.0-1.2 and the stream
 * cohort.jsonl of 1.3, fill the same table: v->incs, found by id through
 * v->inc_index, their threads in v->tids.  Every check is linear: ids and
 * (pid, start) pairs are hashed, the threads grouped by a counting sort,
 * and the tree of a document checked with marks, each incarnation walked
 * once (the stream's tree is sound by construction: a parent is an earlier
 * record).
 */

struct inc *pmu_v_find_inc(struct v *v, const char *id, size_t len)
{
	uint64_t h = hash_bytes(id, len);

	if (!v->inc_cap)
		return NULL;
	for (size_t j = h & (v->inc_cap - 1); v->inc_index[j]; j = (j + 1) & (v->inc_cap - 1)) {
		struct inc *in = &v->incs[v->inc_index[j] - 1];

		if (in->id_h == h && in->idlen == len && lit_eq(in->id, id, len))
			return in;
	}
	return NULL;
}

static const char *pool_dup(struct v *v, const char *s, size_t n)
{
	struct pool_blk *b = v->pool;
	char *d;

	if (!b || b->cap - b->used < n + 1) {
		size_t cap = n + 1 > 65536 - sizeof(*b) ? n + 1 : 65536 - sizeof(*b);

		if (!(b = malloc(sizeof(*b) + cap)))
			return NULL;
		b->next = v->pool;
		b->used = 0;
		b->cap = cap;
		v->pool = b;
	}
	d = b->data + b->used;
	memcpy(d, s, n);
	d[n] = '\0';
	b->used += n + 1;
	return d;
}

static uint64_t ps_hash(int64_t pid, uint64_t start)
{
	uint64_t h = ((uint64_t)pid * 0x9e3779b97f4a7c15ull) ^ (start * 0xc4ceb9fe1a85ec53ull);

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

/* Room for one more incarnation: the table grows by doubling, the hash
 * indexes stay at most half full. */
static int incs_reserve(struct v *v)
{
	if (pmu_grow(&v->incs, &v->capincs, v->nincs, sizeof(*v->incs), 64))
		return PMU_ERR_NOMEM;
	if (2 * (v->nincs + 1) > v->inc_cap) {
		size_t cap = v->inc_cap ? 2 * v->inc_cap : 128;
		uint32_t *ix = calloc(cap, sizeof(*ix));
		uint32_t *ps = calloc(cap, sizeof(*ps));

		if (!ix || !ps) {
			free(ix);
			free(ps);
			return PMU_ERR_NOMEM;
		}
		for (size_t i = 0; i < v->nincs; i++) {
			size_t h = v->incs[i].id_h & (cap - 1);

			while (ix[h])
				h = (h + 1) & (cap - 1);
			ix[h] = (uint32_t)i + 1;
			h = ps_hash(v->incs[i].pid, v->incs[i].start) & (cap - 1);
			while (ps[h])
				h = (h + 1) & (cap - 1);
			ps[h] = (uint32_t)i + 1;
		}
		free(v->inc_index);
		free(v->ps_index);
		v->inc_index = ix;
		v->ps_index = ps;
		v->inc_cap = cap;
	}
	return 0;
}

/* Add an incarnation whose id is new; returns it, or NULL out of memory
 * (reported).  *same: an earlier incarnation with the same pid and start. */
static struct inc *inc_add(struct v *v, const char *file, const char *id, size_t idlen, int64_t pid,
			   uint64_t start, struct inc **same)
{
	struct inc *in;
	size_t h;

	*same = NULL;
	if (incs_reserve(v) || !(id = pool_dup(v, id, idlen))) {
		report(v, PMU_CHECK_COHORT, file, 0, "out of memory after %zu incarnations", v->nincs);
		return NULL;
	}
	in = &v->incs[v->nincs];
	memset(in, 0, sizeof(*in));
	in->id = id;
	in->idlen = (uint32_t)idlen;
	in->id_h = hash_bytes(id, idlen);
	in->pid = pid;
	in->start = start;
	in->end = UINT64_MAX;
	in->parent_ix = NO_PARENT;
	for (h = ps_hash(pid, start) & (v->inc_cap - 1); v->ps_index[h]; h = (h + 1) & (v->inc_cap - 1)) {
		struct inc *o = &v->incs[v->ps_index[h] - 1];

		if (o->pid == pid && o->start == start && !*same)
			*same = o;
	}
	v->ps_index[h] = (uint32_t)v->nincs + 1;
	for (h = in->id_h & (v->inc_cap - 1); v->inc_index[h]; h = (h + 1) & (v->inc_cap - 1))
		;
	v->inc_index[h] = (uint32_t)++v->nincs;
	return in;
}

static int tid_add(struct v *v, struct inc *in, int64_t tid, uint64_t line)
{
	if (pmu_grow(&v->tp, &v->captp, v->ntp, sizeof(*v->tp), 256))
		return PMU_ERR_NOMEM;
	v->tp[v->ntp++] = (struct tpair){ tid, (uint32_t)(in - v->incs), line > UINT32_MAX ? 0 : (uint32_t)line };
	if (tid == in->pid)
		in->flags |= INC_MAIN;
	return 0;
}

static int cmp_tpair(const void *a, const void *b)
{
	const struct tpair *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* Group the threads by incarnation (a counting sort, in place: linear, and
 * no second copy of them), each incarnation's sorted, and give them their
 * pairing slots.  Returns false when a thread is listed twice (reported)
 * or memory ran out. */
static bool threads_index(struct v *v, const char *file)
{
	uint32_t *at = calloc(v->nincs + 1, sizeof(*at)), *next = malloc((v->nincs + 1) * sizeof(*next));
	bool ok = true;

	if (!at || !next) {
		free(at);
		free(next);
		report(v, PMU_CHECK_COHORT, file, 0, "out of memory grouping %zu threads", v->ntp);
		return false;
	}
	/* at[i]: the first place of incarnation i's threads */
	for (size_t i = 0; i < v->ntp; i++)
		at[v->tp[i].inc + 1]++;
	for (size_t i = 0; i < v->nincs; i++) {
		v->incs[i].ntids = at[i + 1];
		at[i + 1] += at[i];
	}
	memcpy(next, at, (v->nincs + 1) * sizeof(*next));
	/* each thread swapped into its incarnation's run: every swap places one */
	for (size_t b = 0; b < v->nincs; b++)
		while (next[b] < at[b + 1]) {
			struct tpair t = v->tp[next[b]];

			while (t.inc != b) {
				struct tpair u = v->tp[next[t.inc]];

				v->tp[next[t.inc]++] = t;
				t = u;
			}
			v->tp[next[b]++] = t;
		}
	free(next);
	free(at);
	v->tids = malloc((v->ntp + 1) * sizeof(*v->tids));
	if (!v->tids) {
		report(v, PMU_CHECK_COHORT, file, 0, "out of memory grouping %zu threads", v->ntp);
		return false;
	}
	v->nslots = 0;
	for (size_t i = 0; i < v->nincs; i++) {
		struct inc *in = &v->incs[i];
		struct tpair *t = v->tp + v->nslots;

		qsort(t, in->ntids, sizeof(*t), cmp_tpair);
		in->tids = v->tids + v->nslots;
		in->slot = v->nslots;
		for (size_t k = 0; k < in->ntids; k++) {
			in->tids[k] = t[k].tid;
			if (k && t[k].tid == t[k - 1].tid) {
				report(v, PMU_CHECK_COHORT, file, t[k].line, "incarnation '%s': thread %lld is listed twice",
				       in->id, (long long)t[k].tid);
				ok = false;
			}
		}
		v->nslots += in->ntids;
	}
	free(v->tp);
	v->tp = NULL;
	v->ntp = v->captp = 0;
	return ok;
}

/* The end of a cohort of either form: the threads indexed, the pairing
 * stacks ready; attribution runs against it when ok. */
static void cohort_done(struct v *v, const char *file, bool ok)
{
	/* (pid, start) pairs are checked: their index is not needed now */
	free(v->ps_index);
	v->ps_index = NULL;
	ok &= threads_index(v, file);
	v->stacks = calloc(v->nslots + 1, sizeof(*v->stacks));
	v->cohort_ok = ok && v->stacks;
}

/* -- cohort.json (1.0-1.2): one incarnation object, schema-checked -- */

static bool legacy_inc(struct v *v, const char *f, json_t *o)
{
	json_t *tids = json_object_get(o, "tids"), *exec = json_object_get(o, "exec");
	const char *id = json_string_value(json_object_get(o, "id"));
	const char *parent = json_string_value(json_object_get(o, "parent"));
	struct inc *in, *same;
	bool ok = true;
	char where[300];

	snprintf(where, sizeof(where), "incarnation '%s'", id);
	if (pmu_v_find_inc(v, id, strlen(id))) {
		report(v, PMU_CHECK_COHORT, f, 0, "%s: id is not unique", where);
		return false;
	}
	in = inc_add(v, f, id, strlen(id), json_integer_value(json_object_get(o, "pid")), ju(o, "start_ns"), &same);
	if (!in)
		return false;
	if (same) {
		report(v, PMU_CHECK_COHORT, f, 0, "incarnations '%s' and '%s' share pid %lld and start", same->id,
		       in->id, (long long)in->pid);
		ok = false;
	}
	in->end = json_object_get(o, "end_ns") ? ju(o, "end_ns") : UINT64_MAX;
	if (parent && !(in->parent = pool_dup(v, parent, strlen(parent)))) {
		report(v, PMU_CHECK_COHORT, f, 0, "out of memory after %zu incarnations", v->nincs);
		return false;
	}
	for (size_t t = 0; t < json_array_size(tids); t++)
		if (tid_add(v, in, json_integer_value(json_array_get(tids, t)), 0)) {
			report(v, PMU_CHECK_COHORT, f, 0, "out of memory after %zu threads", v->ntp);
			return false;
		}
	if (!(in->flags & INC_MAIN)) {
		report(v, PMU_CHECK_COHORT, f, 0, "%s: its tids do not include its pid %lld", where,
		       (long long)in->pid);
		ok = false;
	}
	eval(v, PMU_CHECK_TIME_ORDER);
	if (in->end != UINT64_MAX && in->end < in->start)
		report(v, PMU_CHECK_TIME_ORDER, f, 0, "%s: end_ns is before start_ns", where);
	if (!json_is_true(json_object_get(o, "preexisting")))
		check_window(v, f, 0, "start_ns", in->start);
	if (in->end != UINT64_MAX)
		check_window(v, f, 0, "end_ns", in->end);
	for (size_t e = 0; e < json_array_size(exec); e++) {
		uint64_t t = ju(json_array_get(exec, e), "t_ns");

		check_window(v, f, 0, "exec t_ns", t);
		if (t < in->start || t > in->end)
			report(v, PMU_CHECK_TIME_ORDER, f, 0, "%s: exec at %llu outside its lifetime", where,
			       (unsigned long long)t);
	}
	return ok;
}

/*
 * The tree of a cohort.json: parents exist, one root, no cycle.  Linear:
 * from each incarnation not yet known to reach the root, walk up marking
 * the path until an incarnation that does (or the root); the path then
 * does too.  Meeting a mark of the same walk is a cycle.  Every
 * incarnation is walked over once as the path's member, once to settle it.
 */
static bool legacy_tree(struct v *v, const char *f, bool ok)
{
	struct inc *r = v->root[0] ? pmu_v_find_inc(v, v->root, strlen(v->root)) : NULL;

	for (size_t i = 0; i < v->nincs; i++) {
		struct inc *a = &v->incs[i];
		struct inc *p = a->parent ? pmu_v_find_inc(v, a->parent, strlen(a->parent)) : NULL;

		if (a->parent && !p) {
			report(v, PMU_CHECK_COHORT, f, 0, "incarnation '%s': parent '%s' does not exist", a->id,
			       a->parent);
			ok = false;
		}
		a->parent_ix = p ? (uint32_t)(p - v->incs) : NO_PARENT;
	}
	if (!r) {
		report(v, PMU_CHECK_COHORT, f, 0, "root incarnation '%s' does not exist", v->root);
		return false;
	}
	if (r->parent) {
		report(v, PMU_CHECK_COHORT, f, 0, "root incarnation '%s' has a parent", v->root);
		return false;
	}
	for (size_t i = 0; ok && i < v->nincs; i++)
		if (!v->incs[i].parent && &v->incs[i] != r) {
			report(v, PMU_CHECK_COHORT, f, 0, "incarnation '%s' has no parent and is not the root",
			       v->incs[i].id);
			return false;
		}
	if (!ok)
		return false;
	r->flags |= INC_ROOTED;
	for (size_t i = 0; i < v->nincs; i++) {
		struct inc *a = &v->incs[i];
		bool rooted;

		while (!(a->flags & (INC_ROOTED | INC_MARK))) {
			a->flags |= INC_MARK;
			a = &v->incs[a->parent_ix]; /* only the root has none, and it is rooted */
		}
		rooted = a->flags & INC_ROOTED;
		if (!rooted) {
			report(v, PMU_CHECK_COHORT, f, 0, "incarnation '%s' is its own ancestor", a->id);
			ok = false;
		}
		/* settle the path: rooted, or on a cycle (reported once) */
		for (a = &v->incs[i]; a->flags & INC_MARK; a = &v->incs[a->parent_ix])
			a->flags = (uint8_t)((a->flags & ~INC_MARK) | INC_ROOTED);
	}
	return ok;
}

/*
 * A cohort.json, in flat memory: the splitter (lib/docsplit.c) hands over
 * one incarnation at a time, each schema-checked and entered on its own,
 * and the rest of the document (its "incarnations" emptied) at the end.
 */
struct legacy_ctx {
	struct v *v;
	const char *file;
	const struct pmu_objdef *inc;
	bool ok;
};

static int legacy_elem(void *ctx, json_t *e, size_t i)
{
	struct legacy_ctx *c = ctx;
	char where[64];

	snprintf(where, sizeof(where), "cohort.incarnations[%zu]", i);
	if (!json_is_object(e)) {
		report(c->v, PMU_CHECK_SCHEMA_FIELD, c->file, 0, "cohort.incarnations must be %s",
		       pmu_v_type_names[PMU_FT_ARR_OBJ]);
		c->ok = false;
	} else if (pmu_v_check_json_obj(c->v, c->file, c->inc, e, where, 1)) {
		c->ok = false;
	} else {
		c->ok &= legacy_inc(c->v, c->file, e);
	}
	return 0;
}

void pmu_v_check_cohort_doc(struct v *v, const struct pmu_docdef *d, const char *file)
{
	struct legacy_ctx c = { v, file, pmu_objdef_field(d->obj, "incarnations", 12)->sub, true };
	const char *root;
	json_t *top = NULL;
	int fd, err;

	eval(v, PMU_CHECK_JSON_SYNTAX);
	eval(v, PMU_CHECK_COHORT);
	fd = openat(v->rootfd, file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		report(v, PMU_CHECK_JSON_SYNTAX, file, 0, "cannot open '%s': %s", file, strerror(errno));
		return;
	}
	err = pmu_docsplit_fd(fd, "incarnations", LINE_LIMIT, PMU_DOC_MAX_BYTES_OLD, legacy_elem, &c, &top);
	close(fd);
	if (err) {
		report(v, PMU_CHECK_JSON_SYNTAX, file, 0, "%s", pmu_error_detail());
		return;
	}
	if (!json_is_object(top)) {
		report(v, PMU_CHECK_JSON_SYNTAX, file, 0, "document is not a JSON object");
		json_decref(top);
		return;
	}
	if (!pmu_v_check_doc(v, d, file, top)) {
		json_decref(top);
		return;
	}
	root = json_string_value(json_object_get(top, "root"));
	snprintf(v->root, sizeof(v->root), "%s", strlen(root) < sizeof(v->root) ? root : "");
	json_decref(top);
	cohort_done(v, file, legacy_tree(v, file, c.ok));
}

/* ---- the cohort stream (spec 1.3) ---------------------------------------- */

/* The incarnation a thread, exec, resource or end record names: one whose
 * incarnation record came and whose end has not. */
static struct inc *cohort_open(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r,
			       const char *type)
{
	const struct pmu_jfield *id = rf(r, "inc");
	struct inc *in = pmu_v_find_inc(v, id->s, id->slen);

	if (!in) {
		if (!s->c_over)
			report(v, PMU_CHECK_COHORT, s->file, rec,
			       "a %s record names incarnation '%.*s', which has no earlier incarnation record", type,
			       (int)id->slen, id->s);
		return NULL;
	}
	if (in->flags & INC_ENDED) {
		report(v, PMU_CHECK_COHORT, s->file, rec, "a %s record for incarnation '%s' after its end record", type,
		       in->id);
		return NULL;
	}
	return in;
}

static void cohort_incarnation(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r)
{
	const struct pmu_jfield *id = rf(r, "id"), *par = rf(r, "parent"), *pre = rf(r, "preexisting");
	struct inc *in, *p = NULL, *same;

	if (s->c_over)
		return;
	if (v->nincs >= PMU_COHORT_MAX_INCARNATIONS) {
		report(v, PMU_CHECK_COHORT, s->file, rec, "more than %d incarnations: the limit of spec %s",
		       PMU_COHORT_MAX_INCARNATIONS, v->spec);
		s->c_over = true;
		return;
	}
	if (s->c_records == 1 && par)
		report(v, PMU_CHECK_COHORT, s->file, rec,
		       "the first incarnation record is the root's: '%.*s' has a parent", (int)id->slen, id->s);
	else if (s->c_records > 1 && !par)
		report(v, PMU_CHECK_COHORT, s->file, rec,
		       "incarnation '%.*s' has no parent: only the first incarnation record, the root's, has none",
		       (int)id->slen, id->s);
	if (pmu_v_find_inc(v, id->s, id->slen)) {
		report(v, PMU_CHECK_COHORT, s->file, rec, "incarnation '%.*s': id is not unique", (int)id->slen, id->s);
		return;
	}
	if (par && !(p = pmu_v_find_inc(v, par->s, par->slen)))
		report(v, PMU_CHECK_COHORT, s->file, rec,
		       "incarnation '%.*s': parent '%.*s' is not an earlier incarnation record", (int)id->slen, id->s,
		       (int)par->slen, par->s);
	if (!(in = inc_add(v, s->file, id->s, id->slen, (int64_t)ri(r, "pid"), ri(r, "start_ns"), &same))) {
		s->c_over = true;
		return;
	}
	if (same)
		report(v, PMU_CHECK_COHORT, s->file, rec, "incarnations '%s' and '%s' share pid %lld and start",
		       same->id, in->id, (long long)in->pid);
	in->parent_ix = p ? (uint32_t)(p - v->incs) : NO_PARENT;
	if (pre && pre->b)
		in->flags |= INC_PREEXISTING;
	else
		check_window(v, s->file, rec, "start_ns", in->start);
}

static void cohort_resource(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r,
			    struct inc *in)
{
	const struct pmu_jfield *field = rf(r, "field"), *st = rf(r, "status");
	bool ok = st->slen == 2 && !memcmp(st->s, "ok", 2);
	int k = 0;

	eval(v, PMU_CHECK_FIELD_STATUS);
	while (pmu_resource_fields[k] && !key_is(pmu_resource_fields[k], field->s, field->slen))
		k++;
	if (in->res_mask & (1u << k))
		report(v, PMU_CHECK_FIELD_STATUS, s->file, rec, "incarnation '%s': a second resource record for '%s'",
		       in->id, pmu_resource_fields[k]);
	in->res_mask |= (uint16_t)(1u << k);
	/* each record carries its own total's value only, and that exactly
	 * when the status is ok: "not measured" is never 0 */
	for (int j = 0; pmu_resource_fields[j]; j++) {
		bool has = pmu_jrec_get(r, pmu_resource_fields[j]) != NULL;

		if (j != k && has)
			report(v, PMU_CHECK_FIELD_STATUS, s->file, rec,
			       "incarnation '%s': the resource record of '%s' carries '%s'", in->id,
			       pmu_resource_fields[k], pmu_resource_fields[j]);
		else if (j == k && has != ok)
			report(v, PMU_CHECK_FIELD_STATUS, s->file, rec, "incarnation '%s': '%s' is '%.*s' but its value is %s",
			       in->id, pmu_resource_fields[k], (int)st->slen, st->s, has ? "present" : "absent");
	}
}

static void cohort_end(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r,
		       struct inc *in)
{
	const struct pmu_jfield *end = rf(r, "end_ns"), *ex = rf(r, "exit");
	bool code = pmu_jrec_get(r, "code"), sig = pmu_jrec_get(r, "signal");
	char kind = ex->s[0]; /* exited, signaled or unknown: the schema checked it */

	in->flags |= INC_ENDED;
	in->end = end ? (uint64_t)end->i : UINT64_MAX;
	eval(v, PMU_CHECK_TIME_ORDER);
	if (end) {
		if (in->end < in->start)
			report(v, PMU_CHECK_TIME_ORDER, s->file, rec, "incarnation '%s': end_ns is before start_ns", in->id);
		if (in->last_exec > in->end)
			report(v, PMU_CHECK_TIME_ORDER, s->file, rec, "incarnation '%s': exec at %llu after its end",
			       in->id, (unsigned long long)in->last_exec);
		check_window(v, s->file, rec, "end_ns", in->end);
	}
	if (!(in->flags & INC_MAIN))
		report(v, PMU_CHECK_COHORT, s->file, rec, "incarnation '%s' has no thread record for its pid %lld",
		       in->id, (long long)in->pid);
	if (in->res_mask && in->res_mask != (1u << 9) - 1) {
		int k = 0;

		while (in->res_mask & (1u << k))
			k++;
		report(v, PMU_CHECK_FIELD_STATUS, s->file, rec,
		       "incarnation '%s' has resource records, but none for '%s': every total has its status",
		       in->id, pmu_resource_fields[k]);
	}
	if ((kind == 'e' && (!code || sig)) || (kind == 's' && (!sig || code)) || (kind == 'u' && (code || sig)))
		report(v, PMU_CHECK_SCHEMA_FIELD, s->file, rec,
		       "incarnation '%s': exit '%.*s' goes with %s", in->id, (int)ex->slen, ex->s,
		       kind == 'e' ? "'code' alone" : kind == 's' ? "'signal' alone" : "neither 'code' nor 'signal'");
}

/* From 1.4 every exec says what its argv was, or why it is not known; a
 * truncation mark goes with an argv only (the schema has checked types and
 * bounds). */
static void exec_argv(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r,
		      const struct inc *in)
{
	bool argv = pmu_jrec_get(r, "argv"), reason = pmu_jrec_get(r, "argv_reason");
	const struct pmu_jfield *tr = pmu_jrec_get(r, "argv_truncated");

	if (v->minor < 4)
		return;
	eval(v, PMU_CHECK_SCHEMA_FIELD);
	if (argv == reason)
		report(v, PMU_CHECK_SCHEMA_FIELD, s->file, rec,
		       "incarnation '%s': an exec record has %s: it carries exactly one of 'argv' and 'argv_reason'",
		       in->id, argv ? "both 'argv' and 'argv_reason'" : "neither 'argv' nor 'argv_reason'");
	if (tr && (!argv || !tr->b))
		report(v, PMU_CHECK_SCHEMA_FIELD, s->file, rec,
		       "incarnation '%s': 'argv_truncated' is present only as true, with 'argv'", in->id);
}

void pmu_v_on_cohort(struct v *v, struct stream_state *s, uint64_t rec, const struct pmu_jrec *r, const char *type)
{
	struct inc *in;

	eval(v, PMU_CHECK_COHORT);
	if (++s->c_records == 1 && type[0] != 'i')
		report(v, PMU_CHECK_COHORT, s->file, rec,
		       "the first record after the header is the root's incarnation record, not a %s record", type);
	if (type[0] == 'i') {
		cohort_incarnation(v, s, rec, r);
		return;
	}
	if (!(in = cohort_open(v, s, rec, r, type)))
		return;
	if (type[0] == 't') {
		if (v->ntp >= PMU_COHORT_MAX_THREADS) {
			if (!s->c_thr_over)
				report(v, PMU_CHECK_COHORT, s->file, rec, "more than %d threads: the limit of spec %s",
				       PMU_COHORT_MAX_THREADS, v->spec);
			s->c_thr_over = true;
		} else if (tid_add(v, in, (int64_t)ri(r, "tid"), rec)) {
			report(v, PMU_CHECK_COHORT, s->file, rec, "out of memory after %zu threads", v->ntp);
			s->c_thr_over = true;
		}
	} else if (type[0] == 'e' && type[1] == 'x') {
		uint64_t t = ri(r, "t_ns");

		eval(v, PMU_CHECK_TIME_ORDER);
		check_window(v, s->file, rec, "exec t_ns", t);
		if (t < in->start)
			report(v, PMU_CHECK_TIME_ORDER, s->file, rec, "incarnation '%s': exec at %llu before its start",
			       in->id, (unsigned long long)t);
		else if (t < in->last_exec)
			report(v, PMU_CHECK_TIME_ORDER, s->file, rec,
			       "incarnation '%s': exec at %llu before its previous exec at %llu", in->id,
			       (unsigned long long)t, (unsigned long long)in->last_exec);
		if (t > in->last_exec)
			in->last_exec = t;
		exec_argv(v, s, rec, r, in);
	} else if (type[0] == 'r') {
		cohort_resource(v, s, rec, r, in);
	} else {
		cohort_end(v, s, rec, r, in);
	}
}

/* Checks that hold the cohort stream's records back from attribution. */
static const enum pmu_check cohort_gates[] = {
	PMU_CHECK_COHORT, PMU_CHECK_SCHEMA_FIELD, PMU_CHECK_SCHEMA_TYPE, PMU_CHECK_JSON_SYNTAX,
	PMU_CHECK_STREAM_HEADER,
};

/* A repetition's cohort stream, before its other streams: they attribute
 * their records to it. */
void pmu_v_check_cohort_stream(struct v *v, const struct pmu_streamdef *sd, const char *file)
{
	unsigned before[PMU_ARRAY_SIZE(cohort_gates)];
	bool ok = true;

	eval(v, PMU_CHECK_COHORT);
	for (size_t i = 0; i < PMU_ARRAY_SIZE(cohort_gates); i++)
		before[i] = v->res->count[cohort_gates[i]];
	pmu_v_check_stream(v, sd, file, NULL);
	if (!v->nincs)
		report(v, PMU_CHECK_COHORT, file, 0, "the cohort has no incarnation: the root's record is missing");
	for (size_t i = 0; i < v->nincs; i++)
		if (!(v->incs[i].flags & INC_ENDED))
			report(v, PMU_CHECK_COHORT, file, 0, "incarnation '%s' has no end record", v->incs[i].id);
	for (size_t i = 0; i < PMU_ARRAY_SIZE(cohort_gates); i++)
		ok &= v->res->count[cohort_gates[i]] == before[i];
	cohort_done(v, file, ok);
}

