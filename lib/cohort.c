#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle.h"
#include "cohort.h"
#include "docsplit.h"
#include "error.h"
#include "spec.h"

#define LINE_LIMIT (1u << 20) /* a stream record (and a cohort.json incarnation), as the validator reads it */
#define DOC_LIMIT (64u << 20)  /* a document */

static int add(json_t *recs, json_t *r)
{
	return r && !json_array_append_new(recs, r) ? 0 : pmu_error(PMU_ERR_NOMEM, "out of memory");
}

static void copy(json_t *to, json_t *from, const char *key)
{
	json_t *x = json_object_get(from, key);

	if (x)
		json_object_set(to, key, x);
}

static json_t *rec(const char *type, json_t *id)
{
	return json_pack("{s:s,s:O}", "type", type, "inc", id);
}

int pmu_cohort_begin_recs(json_t *inc, json_t *recs)
{
	json_t *id = json_object_get(inc, "id"), *t, *r;
	size_t i;

	r = json_pack("{s:s,s:O,s:O,s:O,s:b}", "type", "incarnation", "id", id, "pid", json_object_get(inc, "pid"),
		      "start_ns", json_object_get(inc, "start_ns"), "preexisting",
		      json_is_true(json_object_get(inc, "preexisting")));
	if (r && json_object_get(inc, "parent"))
		json_object_set(r, "parent", json_object_get(inc, "parent"));
	if (add(recs, r))
		return PMU_ERR_NOMEM;
	json_array_foreach(json_object_get(inc, "tids"), i, t) {
		r = rec("thread", id);
		if (r)
			json_object_set(r, "tid", t);
		if (add(recs, r))
			return PMU_ERR_NOMEM;
	}
	return 0;
}

int pmu_cohort_end_recs(json_t *inc, json_t *recs)
{
	json_t *id = json_object_get(inc, "id"), *e, *r, *res = json_object_get(inc, "resources");
	json_t *fields = json_object_get(res, "fields"), *exit = json_object_get(inc, "exit");
	const char *kind = json_string_value(json_object_get(exit, "kind"));
	size_t i;

	json_array_foreach(json_object_get(inc, "exec"), i, e) {
		r = json_pack("{s:s,s:O,s:O,s:O}", "type", "exec", "inc", id, "t_ns", json_object_get(e, "t_ns"), "path",
			      json_object_get(e, "path"));
		if (r) {
			copy(r, e, "argv");
			copy(r, e, "argv_truncated");
			copy(r, e, "argv_reason");
		}
		if (add(recs, r))
			return PMU_ERR_NOMEM;
	}
	for (int k = 0; fields && pmu_resource_fields[k]; k++) {
		const char *name = pmu_resource_fields[k];
		json_t *f = json_object_get(fields, name);

		if (!f)
			continue;
		r = rec("resource", id);
		if (r) {
			json_object_set_new(r, "field", json_string(name));
			json_object_set(r, "status", json_object_get(f, "status"));
			if (json_object_get(f, "source"))
				json_object_set(r, "source", json_object_get(f, "source"));
			if (json_object_get(res, name))
				json_object_set(r, name, json_object_get(res, name));
			if (json_object_get(f, "reason"))
				json_object_set(r, "reason", json_object_get(f, "reason"));
			if (json_object_get(f, "remedy"))
				json_object_set(r, "remedy", json_object_get(f, "remedy"));
		}
		if (add(recs, r))
			return PMU_ERR_NOMEM;
	}
	r = rec("end", id);
	if (r) {
		if (json_object_get(inc, "end_ns"))
			json_object_set(r, "end_ns", json_object_get(inc, "end_ns"));
		json_object_set(r, "comm", json_object_get(inc, "comm"));
		if (kind && !strcmp(kind, "exited") && json_object_get(exit, "code")) {
			json_object_set_new(r, "exit", json_string("exited"));
			json_object_set(r, "code", json_object_get(exit, "code"));
		} else if (kind && !strcmp(kind, "signaled") && json_object_get(exit, "signal")) {
			json_object_set_new(r, "exit", json_string("signaled"));
			json_object_set(r, "signal", json_object_get(exit, "signal"));
		} else {
			json_object_set_new(r, "exit", json_string("unknown"));
		}
	}
	return add(recs, r);
}

/* ---- reading: records back into incarnations ------------------------------ */

struct pmu_cohort_asm {
	json_t *open;   /* id -> the incarnation so far: its members, and "seq" */
	size_t next_seq;
	char *root;
};

int pmu_cohort_asm_new(struct pmu_cohort_asm **out)
{
	struct pmu_cohort_asm *a = calloc(1, sizeof(*a));

	if (!a || !(a->open = json_object())) {
		free(a);
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	}
	*out = a;
	return 0;
}

void pmu_cohort_asm_free(struct pmu_cohort_asm *a)
{
	if (!a)
		return;
	json_decref(a->open);
	free(a->root);
	free(a);
}

const char *pmu_cohort_asm_root(const struct pmu_cohort_asm *a)
{
	return a->root;
}

/* The document shape of an incarnation from what its records said; end is
 * its end record, or NULL for one still open at the end of the stream. */
static json_t *assemble(json_t *p, json_t *end)
{
	json_t *o = json_object(), *ex = json_object(), *fields = json_object_get(p, "fields");
	const char *kind = end ? json_string_value(json_object_get(end, "exit")) : NULL;

	if (!o || !ex) {
		json_decref(o);
		json_decref(ex);
		return NULL;
	}
	copy(o, p, "id");
	copy(o, p, "pid");
	copy(o, p, "start_ns");
	if (end)
		copy(o, end, "end_ns");
	copy(o, p, "parent");
	copy(o, p, "preexisting");
	if (end && json_is_string(json_object_get(end, "comm")))
		copy(o, end, "comm");
	else
		json_object_set_new(o, "comm", json_string("?"));
	copy(o, p, "tids");
	copy(o, p, "exec");
	if (kind && (!strcmp(kind, "exited") || !strcmp(kind, "signaled"))) {
		json_object_set_new(ex, "kind", json_string(kind));
		copy(ex, end, kind[0] == 'e' ? "code" : "signal");
	} else {
		json_object_set_new(ex, "kind", json_string("unknown"));
	}
	json_object_set_new(o, "exit", ex);
	if (json_object_size(fields)) {
		json_t *r = json_object(), *vals = json_object_get(p, "values");

		for (int k = 0; r && pmu_resource_fields[k]; k++)
			copy(r, vals, pmu_resource_fields[k]);
		if (r)
			json_object_set(r, "fields", fields);
		json_object_set_new(o, "resources", r);
	}
	return o;
}

static json_t *take(struct pmu_cohort_asm *a, const char *id, size_t *seq)
{
	json_t *p = json_incref(json_object_get(a->open, id));

	*seq = (size_t)json_integer_value(json_object_get(p, "seq"));
	json_object_del(a->open, id);
	return p;
}

int pmu_cohort_asm_add(struct pmu_cohort_asm *a, json_t *r, json_t **done, size_t *seq)
{
	const char *type = json_string_value(json_object_get(r, "type"));
	const char *id = json_string_value(json_object_get(r, json_object_get(r, "inc") ? "inc" : "id"));
	json_t *p;

	*done = NULL;
	if (!type || !id)
		return 0;
	if (!strcmp(type, "incarnation")) {
		if (json_object_get(a->open, id))
			return 0;
		p = json_pack("{s:I,s:[],s:[],s:{},s:{}}", "seq", (json_int_t)a->next_seq, "tids", "exec", "values",
			      "fields");
		if (!p)
			return pmu_error(PMU_ERR_NOMEM, "out of memory");
		a->next_seq++;
		copy(p, r, "id");
		copy(p, r, "pid");
		copy(p, r, "start_ns");
		copy(p, r, "parent");
		copy(p, r, "preexisting");
		if (!a->root && !json_object_get(r, "parent") && !(a->root = strdup(id))) {
			json_decref(p);
			return pmu_error(PMU_ERR_NOMEM, "out of memory");
		}
		return json_object_set_new(a->open, id, p) ? pmu_error(PMU_ERR_NOMEM, "out of memory") : 0;
	}
	if (!(p = json_object_get(a->open, id)))
		return 0;
	if (!strcmp(type, "thread")) {
		json_array_append(json_object_get(p, "tids"), json_object_get(r, "tid"));
	} else if (!strcmp(type, "exec")) {
		json_t *e = json_object();

		copy(e, r, "t_ns");
		copy(e, r, "path");
		copy(e, r, "argv");
		copy(e, r, "argv_truncated");
		copy(e, r, "argv_reason");
		json_array_append_new(json_object_get(p, "exec"), e);
	} else if (!strcmp(type, "resource")) {
		const char *field = json_string_value(json_object_get(r, "field"));
		json_t *f = json_object();

		if (!field || !f) {
			json_decref(f);
			return 0;
		}
		copy(f, r, "status");
		copy(f, r, "source");
		copy(f, r, "reason");
		copy(f, r, "remedy");
		json_object_set_new(json_object_get(p, "fields"), field, f);
		copy(json_object_get(p, "values"), r, field);
	} else if (!strcmp(type, "end")) {
		p = take(a, id, seq);
		*done = assemble(p, r);
		json_decref(p);
		if (!*done)
			return pmu_error(PMU_ERR_NOMEM, "out of memory");
	}
	return 0;
}

int pmu_cohort_asm_flush(struct pmu_cohort_asm *a, json_t **done, size_t *seq)
{
	void *it = json_object_iter(a->open);
	json_t *p;

	*done = NULL;
	if (!it)
		return 0;
	p = take(a, json_object_iter_key(it), seq);
	*done = assemble(p, NULL);
	json_decref(p);
	return *done ? 0 : pmu_error(PMU_ERR_NOMEM, "out of memory");
}

/* ---- the bundle's cohort -------------------------------------------------- */

/* A stream read line by line in a bounded buffer; a line over LINE_LIMIT
 * is skipped. */
struct rd {
	int fd;
	char *buf;
	size_t start, end;
	bool eof;
};

#define RD_CAP (2 * LINE_LIMIT)

static int rd_next(struct rd *r, char **line, size_t *len)
{
	bool skipping = false;

	for (;;) {
		char *s = r->buf + r->start, *e = memchr(s, '\n', r->end - r->start);
		ssize_t n;

		if (e) {
			r->start += (size_t)(e - s) + 1;
			if (skipping)
				continue;
			*line = s;
			*len = (size_t)(e - s);
			return 1;
		}
		if (r->eof) {
			if (r->start == r->end || skipping)
				return 0;
			*line = s;
			*len = r->end - r->start;
			r->start = r->end;
			return 1;
		}
		if (r->end - r->start >= LINE_LIMIT) {
			skipping = true;
			r->start = r->end;
		}
		memmove(r->buf, s, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
		do
			n = read(r->fd, r->buf + r->end, RD_CAP - r->end);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return pmu_error(PMU_ERR_IO, "read error: %s", strerror(errno));
		if (n == 0)
			r->eof = true;
		r->end += (size_t)n;
	}
}

static int each_stream(int fd, pmu_cohort_fn fn, void *ctx, char **root)
{
	struct rd r = { fd, malloc(RD_CAP), 0, 0, false };
	struct pmu_cohort_asm *a = NULL;
	json_t *done;
	size_t seq, len = 0;
	char *line = NULL;
	int err, got = 0;

	if (!r.buf)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	err = pmu_cohort_asm_new(&a);
	while (!err && (got = rd_next(&r, &line, &len)) > 0) {
		json_error_t je;
		json_t *j = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);

		if (json_is_object(j)) {
			err = pmu_cohort_asm_add(a, j, &done, &seq);
			if (!err && done)
				err = fn(ctx, done, seq);
			json_decref(done);
		}
		json_decref(j);
		if (got < 0)
			err = got;
	}
	if (!err && got < 0)
		err = got;
	/* incarnations the stream never ended: handed over as alive */
	while (!err && !(err = pmu_cohort_asm_flush(a, &done, &seq)) && done) {
		err = fn(ctx, done, seq);
		json_decref(done);
	}
	if (!err && root && a->root && !(*root = strdup(a->root)))
		err = pmu_error(PMU_ERR_NOMEM, "out of memory");
	pmu_cohort_asm_free(a);
	free(r.buf);
	return err;
}

struct legacy {
	pmu_cohort_fn fn;
	void *ctx;
};

static int legacy_elem(void *ctx, json_t *e, size_t index)
{
	struct legacy *l = ctx;

	return json_is_object(e) ? l->fn(l->ctx, e, index) : 0;
}

int pmu_bundle_cohort_each(const struct pmu_bundle *b, int rep, pmu_cohort_fn fn, void *ctx, char **root)
{
	char dir[48], path[96];
	json_t *top = NULL;
	const char *rid;
	int fd, err;

	if (root)
		*root = NULL;
	if (rep < 1)
		return pmu_error(PMU_ERR_INVAL, "repetition %d: repetitions count from 1", rep);
	if (rep == 1)
		snprintf(dir, sizeof(dir), "data/");
	else
		snprintf(dir, sizeof(dir), "data/repeats/%d/", rep);
	snprintf(path, sizeof(path), "%scohort.jsonl", dir);
	fd = openat(b->rootfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		err = each_stream(fd, fn, ctx, root);
		close(fd);
		return err;
	}
	if (errno != ENOENT)
		return pmu_error(PMU_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
	/* spec 1.0-1.2: the document, one incarnation at a time */
	snprintf(path, sizeof(path), "%scohort.json", dir);
	fd = openat(b->rootfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return pmu_error(errno == ENOENT ? PMU_ERR_NOTFOUND : PMU_ERR_IO, "cannot open '%s': %s", path,
				 strerror(errno));
	struct legacy l = { fn, ctx };

	err = pmu_docsplit_fd(fd, "incarnations", LINE_LIMIT, DOC_LIMIT, legacy_elem, &l, &top);
	close(fd);
	if (err == PMU_ERR_CORRUPT || err == PMU_ERR_LIMIT)
		err = pmu_error(err, "'%s': %s", path, pmu_error_detail());
	rid = json_string_value(json_object_get(top, "root"));
	if (!err && root && rid && !(*root = strdup(rid)))
		err = pmu_error(PMU_ERR_NOMEM, "out of memory");
	json_decref(top);
	return err;
}

struct whole {
	json_t **by_seq;
	size_t n;
};

static int keep(void *ctx, json_t *inc, size_t seq)
{
	struct whole *w = ctx;

	if (seq >= w->n) {
		size_t n = seq + 1 > 2 * w->n ? seq + 1 : 2 * w->n;
		json_t **p = realloc(w->by_seq, n * sizeof(*p));

		if (!p)
			return pmu_error(PMU_ERR_NOMEM, "out of memory");
		memset(p + w->n, 0, (n - w->n) * sizeof(*p));
		w->by_seq = p;
		w->n = n;
	}
	json_decref(w->by_seq[seq]);
	w->by_seq[seq] = json_incref(inc);
	return 0;
}

int pmu_bundle_read_cohort(const struct pmu_bundle *b, int rep, json_t **out)
{
	struct whole w = { NULL, 0 };
	char *root = NULL;
	json_t *arr = json_array();
	int err = arr ? pmu_bundle_cohort_each(b, rep, keep, &w, &root) : pmu_error(PMU_ERR_NOMEM, "out of memory");

	for (size_t i = 0; i < w.n; i++)
		if (w.by_seq[i]) {
			if (!err && json_array_append_new(arr, w.by_seq[i]))
				err = pmu_error(PMU_ERR_NOMEM, "out of memory");
			else if (err)
				json_decref(w.by_seq[i]);
		}
	free(w.by_seq);
	*out = NULL;
	if (!err) {
		*out = json_pack("{s:o}", "incarnations", arr);
		arr = NULL;
		if (*out && root)
			json_object_set_new(*out, "root", json_string(root));
		if (!*out)
			err = pmu_error(PMU_ERR_NOMEM, "out of memory");
	}
	json_decref(arr);
	free(root);
	return err;
}
