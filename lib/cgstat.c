/*
 * Parsers for cgroup v2 interface files and the delta of two snapshots.
 * The formats are those of Documentation/admin-guide/cgroup-v2.rst
 * ("Format": flat keyed, nested keyed, single value) and
 * Documentation/accounting/psi.rst (pressure).  Input is untrusted and
 * bounded by its length; see cgstat.h for the reporting rules.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgstat.h"
#include "error.h"
#include "util.h"

const struct pmu_cgfile_info pmu_cgfiles[PMU_CGF_COUNT_] = {
#define PMU_CGF_ROW_(tail, name, fmt, ctrl) { name, PMU_CGFMT_##fmt, ctrl },
	PMU_CGFILES(PMU_CGF_ROW_)
#undef PMU_CGF_ROW_
};

/* The keys of io.stat that are summed over devices.  Others (iocost's
 * cost.vrate=100.00, iolatency's avg_lat=...) are per-device settings or
 * averages that do not add up; they are syntax-checked and dropped. */
static const char *const io_keys[] = { "rbytes", "wbytes", "rios", "wios", "dbytes", "dios" };

/*
 * How each key is reported, first match wins.  memory.stat: the kernel
 * documents its amounts in bytes and names its event counters with these
 * prefixes; anything else there is an amount at an instant, left out
 * (cgstat.h says why), so a key a future kernel adds is never mistaken
 * for a counter.
 */
static const struct cg_rule {
	enum pmu_cgfile file;
	const char *prefix, *suffix;
	enum pmu_cgkind kind;
	const char *unit;
} cg_rules[] = {
	{ PMU_CGF_CPU_STAT,        "",            "_usec", PMU_CGK_COUNTER, "ns" },
	{ PMU_CGF_CPU_STAT,        "",            "",      PMU_CGK_COUNTER, "count" },
	{ PMU_CGF_IO_STAT,         "",            "bytes", PMU_CGK_COUNTER, "bytes" },
	{ PMU_CGF_IO_STAT,         "",            "ios",   PMU_CGK_COUNTER, "count" },
	{ PMU_CGF_MEMORY_STAT,     "numa_",       "",      PMU_CGK_COUNTER, "count" },
	{ PMU_CGF_MEMORY_STAT,     "pg",          "",      PMU_CGK_COUNTER, "count" },
	{ PMU_CGF_MEMORY_STAT,     "swp",         "",      PMU_CGK_COUNTER, "count" },
	{ PMU_CGF_MEMORY_STAT,     "thp_",        "",      PMU_CGK_COUNTER, "count" },
	{ PMU_CGF_MEMORY_STAT,     "workingset_", "",      PMU_CGK_COUNTER, "count" },
	{ PMU_CGF_MEMORY_STAT,     "zswp",        "",      PMU_CGK_COUNTER, "count" },
	{ PMU_CGF_MEMORY_STAT,     "",            "",      PMU_CGK_SKIP,    NULL },
	{ PMU_CGF_MEMORY_PEAK,     "",            "",      PMU_CGK_GAUGE,   "bytes" },
	{ PMU_CGF_PIDS_PEAK,       "",            "",      PMU_CGK_GAUGE,   "count" },
	{ PMU_CGF_CPU_PRESSURE,    "",            "_usec", PMU_CGK_COUNTER, "ns" },
	{ PMU_CGF_IO_PRESSURE,     "",            "_usec", PMU_CGK_COUNTER, "ns" },
	{ PMU_CGF_MEMORY_PRESSURE, "",            "_usec", PMU_CGK_COUNTER, "ns" },
};

const char *pmu_cgstatus_name(enum pmu_cgstatus s)
{
	switch (s) {
	case PMU_CGS_NOT_READ:
		return "not-requested";
	case PMU_CGS_OK:
		return "ok";
	case PMU_CGS_UNAVAILABLE:
		return "unavailable";
	case PMU_CGS_FAILED:
		return "failed";
	}
	return "failed";
}

const char *pmu_cgkind_name(enum pmu_cgkind k)
{
	switch (k) {
	case PMU_CGK_COUNTER:
		return "counter";
	case PMU_CGK_GAUGE:
		return "gauge";
	case PMU_CGK_SKIP:
		return "skip";
	}
	return "skip";
}

/* ---- one file ------------------------------------------------------------ */

void pmu_cgstat_init(struct pmu_cgstat *st)
{
	memset(st, 0, sizeof(*st));
}

void pmu_cgstat_release(struct pmu_cgstat *st)
{
	free(st->kv);
	pmu_cgstat_init(st);
}

void pmu_cgstat_set(struct pmu_cgstat *st, enum pmu_cgstatus status, const char *remedy, const char *fmt, ...)
{
	va_list ap;

	pmu_cgstat_release(st);
	st->status = status;
	st->remedy = remedy;
	va_start(ap, fmt);
	vsnprintf(st->reason, sizeof(st->reason), fmt, ap);
	va_end(ap);
}

const uint64_t *pmu_cgstat_get(const struct pmu_cgstat *st, const char *key)
{
	for (size_t i = 0; i < st->n; i++)
		if (!strcmp(st->kv[i].key, key))
			return &st->kv[i].value;
	return NULL;
}

static struct pmu_cgkv *find_kv(struct pmu_cgstat *st, const char *key, size_t klen)
{
	for (size_t i = 0; i < st->n; i++)
		if (strlen(st->kv[i].key) == klen && !memcmp(st->kv[i].key, key, klen))
			return &st->kv[i];
	return NULL;
}

/* Append key (klen < PMU_CGKEY_MAX, checked by the caller) = value. */
static int add_kv(struct pmu_cgstat *st, const char *key, size_t klen, uint64_t value)
{
	if (st->n == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 32;
		struct pmu_cgkv *kv = realloc(st->kv, cap * sizeof(*kv));

		if (!kv)
			return pmu_error(PMU_ERR_NOMEM, "cannot grow a cgroup stat table to %zu keys", cap);
		st->kv = kv;
		st->cap = cap;
	}
	memcpy(st->kv[st->n].key, key, klen);
	st->kv[st->n].key[klen] = '\0';
	st->kv[st->n].value = value;
	st->n++;
	return 0;
}

/* A decimal uint64 filling s[0..n) exactly: no sign, no space, no overflow. */
static bool parse_u64(const char *s, size_t n, uint64_t *v)
{
	uint64_t x = 0;

	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned char)s[i] - '0';

		if (d > 9 || x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*v = x;
	return true;
}

/* A key as the kernel writes them: printable, no space, no '='. */
static bool good_key(const char *s, size_t n)
{
	if (n == 0 || n >= PMU_CGKEY_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f || s[i] == '=')
			return false;
	return true;
}

/*
 * Walk text[0..len) line by line.  Every line but a final empty one (after
 * the last '\n') is passed on; a NUL byte anywhere is corrupt.
 */
struct lines {
	const char *p, *end;
	unsigned lineno;
};

static int lines_start(struct lines *l, const char *text, size_t len)
{
	if (!text && len)
		return pmu_error(PMU_ERR_INVAL, "no text");
	if (len && memchr(text, '\0', len))
		return pmu_error(PMU_ERR_CORRUPT, "NUL byte in cgroup file");
	l->p = text;
	l->end = text + len;
	l->lineno = 0;
	return 0;
}

static bool lines_next(struct lines *l, const char **s, size_t *n)
{
	const char *nl;

	if (!l->p || l->p >= l->end)
		return false;
	nl = memchr(l->p, '\n', (size_t)(l->end - l->p));
	*s = l->p;
	*n = nl ? (size_t)(nl - l->p) : (size_t)(l->end - l->p);
	l->p = nl ? nl + 1 : l->end;
	l->lineno++;
	return true;
}

/* Split the next space-separated token off s[0..n): runs of spaces allowed. */
static bool next_token(const char **s, size_t *n, const char **tok, size_t *tlen)
{
	while (*n && **s == ' ')
		(*s)++, (*n)--;
	if (!*n)
		return false;
	*tok = *s;
	while (*n && **s != ' ')
		(*s)++, (*n)--;
	*tlen = (size_t)(*s - *tok);
	return true;
}

/* Fail st with a CORRUPT reason that quotes the file's line. */
__attribute__((format(printf, 3, 4)))
static int corrupt(struct pmu_cgstat *st, unsigned lineno, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pmu_cgstat_set(st, PMU_CGS_FAILED, NULL, "malformed at line %u: %s", lineno ? lineno : 1, msg);
	return pmu_error(PMU_ERR_CORRUPT, "%s", st->reason);
}

static int parse_begin(struct pmu_cgstat *st, struct lines *l, const char *text, size_t len)
{
	int err;

	pmu_cgstat_release(st);
	err = lines_start(l, text, len);
	if (err == PMU_ERR_CORRUPT)
		pmu_cgstat_set(st, PMU_CGS_FAILED, NULL, "malformed: NUL byte in the file");
	return err;
}

/* An error that is not corruption leaves st empty, not OK. */
static int fail_empty(struct pmu_cgstat *st, int err)
{
	char keep[sizeof(st->reason)];

	snprintf(keep, sizeof(keep), "%s", pmu_error_detail());
	pmu_cgstat_set(st, PMU_CGS_FAILED, NULL, "%s", keep);
	return err;
}

int pmu_cgstat_parse_flat(const char *text, size_t len, struct pmu_cgstat *st)
{
	struct lines l;
	const char *s, *sp;
	size_t n;
	int err = parse_begin(st, &l, text, len);

	if (err)
		return err;
	while (lines_next(&l, &s, &n)) {
		uint64_t v;
		size_t klen;

		if (n == 0)
			return corrupt(st, l.lineno, "empty line");
		sp = memchr(s, ' ', n);
		klen = sp ? (size_t)(sp - s) : n;
		if (!sp)
			return corrupt(st, l.lineno, "no value after '%.*s'", (int)(n > 60 ? 60 : n), s);
		if (!good_key(s, klen))
			return corrupt(st, l.lineno, "bad key '%.*s'", (int)(klen > 60 ? 60 : klen), s);
		if (!parse_u64(sp + 1, n - klen - 1, &v))
			return corrupt(st, l.lineno, "value of '%.*s' is not a decimal number below 2^64", (int)klen, s);
		if (find_kv(st, s, klen))
			return corrupt(st, l.lineno, "key '%.*s' occurs twice", (int)klen, s);
		if ((err = add_kv(st, s, klen, v)))
			return fail_empty(st, err);
	}
	st->status = PMU_CGS_OK;
	return 0;
}

static bool good_device(const char *s, size_t n)
{
	const char *colon = memchr(s, ':', n);
	uint64_t v;

	return colon && parse_u64(s, (size_t)(colon - s), &v) &&
	       parse_u64(colon + 1, n - (size_t)(colon - s) - 1, &v);
}

int pmu_cgstat_parse_nested(const char *text, size_t len, struct pmu_cgstat *st)
{
	uint64_t sum[PMU_ARRAY_SIZE(io_keys)];
	bool seen[PMU_ARRAY_SIZE(io_keys)] = { false };
	struct lines l;
	const char *s, *tok;
	size_t n, tlen;
	int err = parse_begin(st, &l, text, len);

	if (err)
		return err;
	memset(sum, 0, sizeof(sum));
	while (lines_next(&l, &s, &n)) {
		bool here[PMU_ARRAY_SIZE(io_keys)] = { false };

		if (!next_token(&s, &n, &tok, &tlen))
			return corrupt(st, l.lineno, "empty line");
		if (!good_device(tok, tlen))
			return corrupt(st, l.lineno, "'%.*s' is not a MAJ:MIN device", (int)(tlen > 60 ? 60 : tlen), tok);
		while (next_token(&s, &n, &tok, &tlen)) {
			const char *eq = memchr(tok, '=', tlen);
			size_t klen = eq ? (size_t)(eq - tok) : 0;
			uint64_t v;
			size_t k;

			if (!eq || !good_key(tok, klen) || klen + 1 == tlen)
				return corrupt(st, l.lineno, "'%.*s' is not key=value", (int)(tlen > 60 ? 60 : tlen), tok);
			for (k = 0; k < PMU_ARRAY_SIZE(io_keys); k++)
				if (strlen(io_keys[k]) == klen && !memcmp(io_keys[k], tok, klen))
					break;
			if (k == PMU_ARRAY_SIZE(io_keys))
				continue;
			if (here[k])
				return corrupt(st, l.lineno, "'%s' occurs twice for one device", io_keys[k]);
			if (!parse_u64(eq + 1, tlen - klen - 1, &v))
				return corrupt(st, l.lineno, "value of '%s' is not a decimal number below 2^64", io_keys[k]);
			if (sum[k] > UINT64_MAX - v)
				return corrupt(st, l.lineno, "the sum of '%s' over devices exceeds 2^64", io_keys[k]);
			sum[k] += v;
			here[k] = seen[k] = true;
		}
	}
	for (size_t k = 0; k < PMU_ARRAY_SIZE(io_keys); k++)
		if (seen[k] && (err = add_kv(st, io_keys[k], strlen(io_keys[k]), sum[k])))
			return fail_empty(st, err);
	st->status = PMU_CGS_OK;
	return 0;
}

int pmu_cgstat_parse_pressure(const char *text, size_t len, struct pmu_cgstat *st)
{
	struct lines l;
	const char *s, *tok;
	size_t n, tlen;
	int err = parse_begin(st, &l, text, len);

	if (err)
		return err;
	while (lines_next(&l, &s, &n)) {
		const char *which;
		bool have_total = false;
		uint64_t total = 0;

		if (!next_token(&s, &n, &tok, &tlen))
			return corrupt(st, l.lineno, "empty line");
		if (tlen == 4 && !memcmp(tok, "some", 4))
			which = "some_total_usec";
		else if (tlen == 4 && !memcmp(tok, "full", 4))
			which = "full_total_usec";
		else
			return corrupt(st, l.lineno, "'%.*s' is neither 'some' nor 'full'", (int)(tlen > 60 ? 60 : tlen), tok);
		if (pmu_cgstat_get(st, which))
			return corrupt(st, l.lineno, "a second '%.4s' line", which);
		while (next_token(&s, &n, &tok, &tlen)) {
			const char *eq = memchr(tok, '=', tlen);
			size_t klen = eq ? (size_t)(eq - tok) : 0;

			if (!eq || !good_key(tok, klen) || klen + 1 == tlen)
				return corrupt(st, l.lineno, "'%.*s' is not key=value", (int)(tlen > 60 ? 60 : tlen), tok);
			if (klen != 5 || memcmp(tok, "total", 5))
				continue;
			if (have_total)
				return corrupt(st, l.lineno, "'total' occurs twice");
			if (!parse_u64(eq + 1, tlen - 6, &total))
				return corrupt(st, l.lineno, "'total' is not a decimal number below 2^64");
			have_total = true;
		}
		if (!have_total)
			return corrupt(st, l.lineno, "no 'total' in the '%.4s' line", which);
		if ((err = add_kv(st, which, strlen(which), total)))
			return fail_empty(st, err);
	}
	if (!pmu_cgstat_get(st, "some_total_usec"))
		return corrupt(st, l.lineno, "no 'some' line");
	st->status = PMU_CGS_OK;
	return 0;
}

int pmu_cgstat_parse_single(const char *text, size_t len, struct pmu_cgstat *st)
{
	struct lines l;
	const char *s;
	size_t n;
	uint64_t v;
	int err = parse_begin(st, &l, text, len);

	if (err)
		return err;
	if (!lines_next(&l, &s, &n))
		return corrupt(st, 1, "empty file");
	if (!parse_u64(s, n, &v))
		return corrupt(st, 1, "'%.*s' is not a decimal number below 2^64", (int)(n > 60 ? 60 : n), s);
	if (l.p != l.end)
		return corrupt(st, 2, "more than one line");
	if ((err = add_kv(st, "peak", 4, v)))
		return fail_empty(st, err);
	st->status = PMU_CGS_OK;
	return 0;
}

int pmu_cgstat_parse(enum pmu_cgfile f, const char *text, size_t len, struct pmu_cgstat *st)
{
	if ((unsigned)f >= PMU_CGF_COUNT_)
		return pmu_error(PMU_ERR_INVAL, "no cgroup file %d", (int)f);
	switch (pmu_cgfiles[f].fmt) {
	case PMU_CGFMT_FLAT:
		return pmu_cgstat_parse_flat(text, len, st);
	case PMU_CGFMT_NESTED:
		return pmu_cgstat_parse_nested(text, len, st);
	case PMU_CGFMT_PRESSURE:
		return pmu_cgstat_parse_pressure(text, len, st);
	case PMU_CGFMT_SINGLE:
		return pmu_cgstat_parse_single(text, len, st);
	}
	return pmu_error(PMU_ERR_INVAL, "no format %d", (int)pmu_cgfiles[f].fmt);
}

/* ---- snapshots and delta ------------------------------------------------- */

void pmu_cgsnap_init(struct pmu_cgsnap *s)
{
	memset(s, 0, sizeof(*s));
}

void pmu_cgsnap_release(struct pmu_cgsnap *s)
{
	for (int i = 0; i < PMU_CGF_COUNT_; i++)
		pmu_cgstat_release(&s->f[i]);
	pmu_cgsnap_init(s);
}

static bool has_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

static bool has_suffix(const char *s, const char *x)
{
	size_t n = strlen(s), m = strlen(x);

	return n >= m && !strcmp(s + n - m, x);
}

enum pmu_cgkind pmu_cgstat_classify(enum pmu_cgfile f, const char *key, const char **unit)
{
	for (size_t i = 0; i < PMU_ARRAY_SIZE(cg_rules); i++) {
		const struct cg_rule *r = &cg_rules[i];

		if (r->file == f && has_prefix(key, r->prefix) && has_suffix(key, r->suffix)) {
			*unit = r->unit;
			return r->kind;
		}
	}
	*unit = NULL;
	return PMU_CGK_SKIP;
}

void pmu_cgdelta_init(struct pmu_cgdelta *d)
{
	memset(d, 0, sizeof(*d));
}

void pmu_cgdelta_release(struct pmu_cgdelta *d)
{
	free(d->rows);
	pmu_cgdelta_init(d);
}

static struct pmu_cgrow *new_row(struct pmu_cgdelta *d, enum pmu_cgfile f, const char *src, enum pmu_cgkind kind,
				 const char *unit)
{
	struct pmu_cgrow *r;
	size_t n = strlen(src);

	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 64;
		struct pmu_cgrow *rows = realloc(d->rows, cap * sizeof(*rows));

		if (!rows) {
			pmu_error(PMU_ERR_NOMEM, "cannot grow the cgroup delta to %zu rows", cap);
			return NULL;
		}
		d->rows = rows;
		d->cap = cap;
	}
	r = &d->rows[d->n++];
	memset(r, 0, sizeof(*r));
	r->file = f;
	r->kind = kind;
	r->unit = unit;
	snprintf(r->src, sizeof(r->src), "%s", src);
	/* the bundle's unit is ns: usage_usec -> usage_ns */
	if (unit && !strcmp(unit, "ns") && has_suffix(src, "_usec"))
		snprintf(r->key, sizeof(r->key), "%.*s_ns", (int)(n - 5), src);
	else
		snprintf(r->key, sizeof(r->key), "%s", src);
	return r;
}

/* Store v (in the kernel's unit) into r in the bundle's unit, or fail r. */
static void row_value(struct pmu_cgrow *r, uint64_t v)
{
	if (strcmp(r->key, r->src)) {
		/* _usec -> _ns */
		if (v > (uint64_t)INT64_MAX / 1000) {
			snprintf(r->reason, sizeof(r->reason), "%llu us does not fit a bundle integer in ns",
				 (unsigned long long)v);
			return;
		}
		v *= 1000;
	}
	if (v > (uint64_t)INT64_MAX) {
		snprintf(r->reason, sizeof(r->reason), "%llu does not fit a bundle integer (2^63-1)",
			 (unsigned long long)v);
		return;
	}
	r->ok = true;
	r->value = v;
}

static void copy_status(struct pmu_cgdelta *d, int i, const struct pmu_cgstat *st, const char *when)
{
	d->files[i].status = st->status;
	d->files[i].remedy = st->remedy;
	if (st->status == PMU_CGS_NOT_READ) {
		d->files[i].status = PMU_CGS_FAILED;
		snprintf(d->files[i].reason, sizeof(d->files[i].reason), "'%s' was not read at %s",
			 pmu_cgfiles[i].name, when);
	} else {
		snprintf(d->files[i].reason, sizeof(d->files[i].reason), "%s", st->reason);
	}
}

int pmu_cgstat_delta(const struct pmu_cgsnap *a, const struct pmu_cgsnap *b, struct pmu_cgdelta *d)
{
	pmu_cgdelta_release(d);
	for (int i = 0; i < PMU_CGF_COUNT_; i++) {
		const struct pmu_cgstat *sa = &a->f[i], *sb = &b->f[i];
		bool nested = pmu_cgfiles[i].fmt == PMU_CGFMT_NESTED;

		if (sa->status == PMU_CGS_NOT_READ && sb->status == PMU_CGS_NOT_READ)
			continue;
		if (sa->status != PMU_CGS_OK) {
			copy_status(d, i, sa, "start");
			continue;
		}
		if (sb->status != PMU_CGS_OK) {
			copy_status(d, i, sb, "end");
			continue;
		}
		d->files[i].status = PMU_CGS_OK;
		for (size_t k = 0; k < sb->n; k++) {
			const char *key = sb->kv[k].key, *unit;
			enum pmu_cgkind kind = pmu_cgstat_classify((enum pmu_cgfile)i, key, &unit);
			const uint64_t *v0 = pmu_cgstat_get(sa, key);
			uint64_t end = sb->kv[k].value, zero = 0;
			struct pmu_cgrow *r;

			if (kind == PMU_CGK_SKIP)
				continue;
			if (!(r = new_row(d, (enum pmu_cgfile)i, key, kind, unit)))
				return pmu_error(PMU_ERR_NOMEM, "cannot grow the cgroup delta");
			if (kind == PMU_CGK_GAUGE) {
				row_value(r, end);
				continue;
			}
			if (!v0 && nested)
				v0 = &zero;
			if (!v0)
				snprintf(r->reason, sizeof(r->reason), "'%s' was missing at start", key);
			else if (end < *v0)
				snprintf(r->reason, sizeof(r->reason), "counter went backwards from %llu to %llu",
					 (unsigned long long)*v0, (unsigned long long)end);
			else
				row_value(r, end - *v0);
		}
		for (size_t k = 0; k < sa->n; k++) {
			const char *key = sa->kv[k].key, *unit;
			enum pmu_cgkind kind = pmu_cgstat_classify((enum pmu_cgfile)i, key, &unit);
			struct pmu_cgrow *r;

			if (kind == PMU_CGK_SKIP || pmu_cgstat_get(sb, key))
				continue;
			if (!(r = new_row(d, (enum pmu_cgfile)i, key, kind, unit)))
				return pmu_error(PMU_ERR_NOMEM, "cannot grow the cgroup delta");
			snprintf(r->reason, sizeof(r->reason), "'%s' was missing at end", key);
		}
	}
	return 0;
}

/* ---- where the cgroup is ------------------------------------------------- */

int pmu_cgstat_v2_path(const char *text, size_t len, char *out, size_t outlen)
{
	struct lines l;
	const char *s;
	size_t n;
	int err = lines_start(&l, text, len);

	if (err)
		return err;
	while (lines_next(&l, &s, &n)) {
		if (n < 3 || memcmp(s, "0::", 3))
			continue;
		s += 3, n -= 3;
		if (!n || s[0] != '/')
			return pmu_error(PMU_ERR_CORRUPT, "cgroup v2 path '%.*s' is not absolute", (int)n, s);
		if (n >= outlen)
			return pmu_error(PMU_ERR_LIMIT, "cgroup v2 path of %zu bytes is too long", n);
		memcpy(out, s, n);
		out[n] = '\0';
		return 0;
	}
	return pmu_error(PMU_ERR_NOTFOUND, "no cgroup v2 ('0::') line: no cgroup2 hierarchy is mounted");
}

/* Decode mountinfo's octal escapes (\040 space, \011 tab, \012 newline,
 * \134 backslash) of s[0..n) into out. */
static int unescape(const char *s, size_t n, char *out, size_t outlen)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' && s[i + 2] <= '7' &&
		    s[i + 3] >= '0' && s[i + 3] <= '7') {
			c = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
			i += 3;
		}
		if (c == '\0' || o + 1 >= outlen)
			return pmu_error(c ? PMU_ERR_LIMIT : PMU_ERR_CORRUPT, "mountinfo path too long or with NUL");
		out[o++] = c;
	}
	out[o] = '\0';
	return 0;
}

int pmu_cgstat_v2_dir(const char *mountinfo, size_t len, const char *cgpath, char *mount, size_t mountlen,
		      char *dir, size_t dirlen)
{
	struct lines l;
	const char *s;
	size_t n, best = 0;
	bool found = false;
	int err = lines_start(&l, mountinfo, len);

	if (err)
		return err;
	while (lines_next(&l, &s, &n)) {
		const char *tok[64];
		size_t tl[64], nt = 0, sep = 0, rl;
		char root[4096], mp[4096];
		const char *rest;

		if (n == 0)
			continue;
		while (nt < 64 && next_token(&s, &n, &tok[nt], &tl[nt]))
			nt++;
		for (size_t i = 6; i < nt; i++)
			if (tl[i] == 1 && tok[i][0] == '-') {
				sep = i;
				break;
			}
		if (nt < 10 || !sep || sep + 3 > nt)
			return pmu_error(PMU_ERR_CORRUPT, "malformed mountinfo line %u", l.lineno);
		if (tl[sep + 1] != 7 || memcmp(tok[sep + 1], "cgroup2", 7))
			continue;
		if ((err = unescape(tok[3], tl[3], root, sizeof(root))) ||
		    (err = unescape(tok[4], tl[4], mp, sizeof(mp))))
			return err;
		if (root[0] != '/' || mp[0] != '/')
			return pmu_error(PMU_ERR_CORRUPT, "mountinfo line %u: relative path", l.lineno);
		rl = strlen(root);
		if (!strcmp(root, "/"))
			rl = 0;
		else if (strncmp(cgpath, root, rl) || (cgpath[rl] != '/' && cgpath[rl] != '\0'))
			continue;   /* not an ancestor, e.g. "/.." of another namespace */
		if (found && rl <= best)
			continue;
		rest = cgpath + rl;
		if (!strcmp(rest, "/"))
			rest = "";
		if ((size_t)snprintf(mount, mountlen, "%s", mp) >= mountlen ||
		    (size_t)snprintf(dir, dirlen, "%s%s", strcmp(mp, "/") ? mp : (*rest ? "" : "/"), rest) >= dirlen)
			return pmu_error(PMU_ERR_LIMIT, "cgroup directory under '%s' is too long", mp);
		found = true;
		best = rl;
	}
	if (!found)
		return pmu_error(PMU_ERR_NOTFOUND, "no cgroup2 mount reaches cgroup '%s'", cgpath);
	return 0;
}

bool pmu_cgstat_has_word(const char *text, size_t len, const char *word)
{
	size_t wl = strlen(word), i = 0;

	while (i < len) {
		size_t j = i;

		while (j < len && text[j] != ' ' && text[j] != '\n')
			j++;
		if (j - i == wl && !memcmp(text + i, word, wl))
			return true;
		i = j + 1;
	}
	return false;
}
