/*
 * The bounded document parse (see jsonbound.h).
 *
 * jansson cannot be made to fail an allocation safely: its lexer asserts
 * (or worse) when its token buffer cannot grow.  So the budget is enforced
 * before jansson allocates: the text reaches jansson through a read
 * callback that first scans each block and adds up an upper bound of what
 * jansson will allocate for everything handed to it so far (every value,
 * container table, hashtable bucket array, key pair and token buffer, at
 * jansson 2.x's sizes and growth rules, each counted as if never freed);
 * once the bound passes the budget, the callback ends the text with a read
 * error and jansson stops cleanly.  What jansson really allocates is also
 * counted, per thread, by allocation functions given to jansson
 * (json_set_alloc_funcs is process-wide; outside a bounded parse they are
 * plain malloc and free), and checked by the tests and the fuzzer against
 * the budget.  Sizes come from malloc_usable_size(), so no block carries a
 * header of ours and values move freely between bounded and other code.
 */
#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "jsonbound.h"

#define CHUNK_OVERHEAD (2 * sizeof(size_t)) /* glibc's chunk header and rounding, about */
#define BLOCK (64u << 10)                   /* bytes read from the file at a time */

static __thread struct {
	bool on;
	size_t used, peak;
} tb;

static size_t cost_of(void *p)
{
	return malloc_usable_size(p) + CHUNK_OVERHEAD;
}

static void *jb_malloc(size_t n)
{
	void *p = malloc(n);

	if (p && tb.on) {
		tb.used += cost_of(p);
		if (tb.used > tb.peak)
			tb.peak = tb.used;
	}
	return p;
}

static void jb_free(void *p)
{
	if (p && tb.on) {
		size_t c = cost_of(p);

		tb.used = tb.used > c ? tb.used - c : 0;
	}
	free(p);
}

/* Before main(), so before any jansson value exists: every value then
 * comes from jb_malloc (which is malloc outside a bounded parse).  The
 * functions are malloc-compatible either way. */
__attribute__((constructor)) static void jb_init(void)
{
	json_set_alloc_funcs(jb_malloc, jb_free);
}

size_t pmu_json_budget_used(void)
{
	return tb.on ? tb.used : 0;
}

size_t pmu_json_last_peak(void)
{
	return tb.peak;
}

size_t pmu_doc_max_bytes(int minor)
{
	return minor >= PMU_DOC_MAX_BYTES_SINCE ? PMU_DOC_MAX_BYTES : PMU_DOC_MAX_BYTES_OLD;
}

struct pmu_json_limits pmu_doc_limits(int minor)
{
	return (struct pmu_json_limits){ pmu_doc_max_bytes(minor), PMU_DOC_PARSE_BUDGET, minor };
}

/* "4 MiB" for whole MiB, else "N-byte" */
static const char *amount(char *b, size_t bsz, size_t n)
{
	if (n && n % (1u << 20) == 0)
		snprintf(b, bsz, "%zu MiB", n >> 20);
	else
		snprintf(b, bsz, "%zu-byte", n);
	return b;
}

static int over_bytes(const struct pmu_json_limits *l, uint64_t size, bool at_least)
{
	char a[32], ver[32] = "";

	if (l->minor >= 0)
		snprintf(ver, sizeof(ver), " of spec 1.%d documents", l->minor);
	return pmu_error(PMU_ERR_LIMIT, "document is %s%llu bytes, over the %s limit%s (%zu bytes)",
			 at_least ? "at least " : "", (unsigned long long)size,
			 amount(a, sizeof(a), l->max_bytes), ver, l->max_bytes);
}

static int over_budget(const struct pmu_json_limits *l, uint64_t size)
{
	char a[32];

	return pmu_error(PMU_ERR_LIMIT,
			 "document of %llu bytes would take more than the %s parse budget (%zu bytes of memory)",
			 (unsigned long long)size, amount(a, sizeof(a), l->budget), l->budget);
}

/* jansson drops a NUL byte that follows a number or literal, and the spec
 * forbids NUL bytes anywhere in a document: refused, whatever else */
static int nul_at(const char *p, size_t n, uint64_t base)
{
	const char *z = memchr(p, '\0', n);

	return z ? pmu_error(PMU_ERR_CORRUPT, "NUL byte at offset %llu",
			     (unsigned long long)(base + (uint64_t)(z - p)))
		 : 0;
}

static int syntax(const json_error_t *je, uint64_t *line)
{
	if (line)
		*line = je->line > 0 ? (uint64_t)je->line : 0;
	return pmu_error(PMU_ERR_CORRUPT, "%s (column %d)", je->text, je->column);
}

/* ---- the bound ---------------------------------------------------------- */

/*
 * jansson 2.x, 64-bit: json_integer_t and json_real_t 24 bytes, json_string_t
 * 32 and its text (the raw token plus 1, quotes and escapes included),
 * json_array_t 40 with a table of 8 pointers doubling when full,
 * json_object_t 72 with 8 buckets of 16 bytes doubling when the pairs reach
 * the buckets, a pair 56 bytes plus its key, and the lexer's token buffer:
 * 16 bytes, doubling when the token (plus one byte of lookahead) fills it.
 * true, false and null are not allocated; counted as numbers anyway.
 *
 * What stays allocated is summed (a table that grows counts at its new
 * size); what is held only for a moment is counted at its largest: the old
 * table or token buffer while it is copied into the new one, and a key's
 * token text while its pair is made (both may be held at once: the pair's
 * insertion can grow the buckets).
 */
#define MAX_DEPTH 2100   /* jansson refuses more than 2048 */

static uint64_t acost(uint64_t n)
{
	/* an allocator chunk: n plus its header, rounded up to 16, at least
	 * 32; plus CHUNK_OVERHEAD as jb_malloc counts it */
	uint64_t c = (n + 8 + 15) & ~(uint64_t)15;

	return (c < 32 ? 32 : c) + CHUNK_OVERHEAD;
}

struct level {
	bool object, key_next;
	uint64_t n, cap;         /* elements or pairs; table entries or buckets */
};

struct bound {
	uint64_t est;            /* held + the two moments below: the bound */
	uint64_t held, copy_max, key_max;
	bool in_str, esc, in_bare;
	uint64_t tok, tokbuf;    /* the token's length; the lexer's buffer */
	size_t depth;
	struct level lv[MAX_DEPTH];
};

static void bound_add(struct bound *b, uint64_t held)
{
	b->held += held;
	b->est = b->held + b->copy_max + b->key_max;
}

/* a table (or the token buffer) grows from old to new bytes */
static void bound_grow(struct bound *b, uint64_t old, uint64_t new)
{
	if (acost(old) > b->copy_max)
		b->copy_max = acost(old);
	bound_add(b, acost(new) - acost(old));
}

static void bound_init(struct bound *b)
{
	memset(b, 0, offsetof(struct bound, lv));
	b->tokbuf = 16;
	bound_add(b, acost(16));
}

static void tok_grow(struct bound *b)
{
	b->tok++;
	while (b->tok + 2 >= b->tokbuf) {
		bound_grow(b, b->tokbuf, 2 * b->tokbuf);
		b->tokbuf *= 2;
	}
}

/* a value starts: it is an element of the array it is in */
static void value_starts(struct bound *b)
{
	struct level *l = b->depth && b->depth <= MAX_DEPTH ? &b->lv[b->depth - 1] : NULL;

	if (!l || l->object)
		return;
	if (++l->n > l->cap) {
		bound_grow(b, 8 * l->cap, 16 * l->cap);
		l->cap *= 2;
	}
}

static bool key_position(struct bound *b)
{
	struct level *l = b->depth && b->depth <= MAX_DEPTH ? &b->lv[b->depth - 1] : NULL;

	return l && l->object && l->key_next;
}

static void string_ends(struct bound *b)
{
	if (key_position(b)) {
		struct level *l = &b->lv[b->depth - 1];

		if (l->n++ >= l->cap) {
			bound_grow(b, 16 * l->cap, 32 * l->cap);
			l->cap *= 2;
		}
		if (acost(b->tok + 1) > b->key_max)
			b->key_max = acost(b->tok + 1);
		bound_add(b, acost(56 + b->tok + 1));
		l->key_next = false;
	} else {
		bound_add(b, acost(32) + acost(b->tok + 1));
	}
}

static void push(struct bound *b, bool object)
{
	value_starts(b);
	if (b->depth < MAX_DEPTH)
		b->lv[b->depth] = (struct level){ object, object, 0, 8 };
	b->depth++;
	bound_add(b, object ? acost(72) + acost(16 * 8) : acost(40) + acost(8 * 8));
}

static void bound_scan(struct bound *b, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = p[i];

		if (b->in_str) {
			tok_grow(b);
			if (b->esc)
				b->esc = false;
			else if (c == '\\')
				b->esc = true;
			else if (c == '"') {
				b->in_str = false;
				string_ends(b);
			}
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"' || c == '[' || c == ']' ||
		    c == '{' || c == '}' || c == ',' || c == ':') {
			b->in_bare = false;
		} else {
			if (!b->in_bare) {
				value_starts(b);
				bound_add(b, acost(24));
				b->in_bare = true;
				b->tok = 0;
			}
			tok_grow(b);
			continue;
		}
		switch (c) {
		case '"':
			if (!key_position(b))
				value_starts(b);
			b->in_str = true;
			b->tok = 0;
			tok_grow(b);
			break;
		case '[':
		case '{':
			push(b, c == '{');
			break;
		case ']':
		case '}':
			if (b->depth)
				b->depth--;
			break;
		case ',':
			if (b->depth && b->depth <= MAX_DEPTH && b->lv[b->depth - 1].object)
				b->lv[b->depth - 1].key_next = true;
			break;
		default:
			break;
		}
	}
}

/* ---- the parse ---------------------------------------------------------- */

struct src {
	int fd;                  /* or -1: buf */
	const char *buf;
	size_t n;
	const struct pmu_json_limits *l;
	uint64_t total;          /* bytes handed on */
	int err;                 /* why the text ended early, its detail recorded */
	bool over;               /* the bound passed the budget */
	size_t len, pos;
	struct bound b;
	char blk[BLOCK];
};

/* Take the next block, checked for the byte limit, NUL bytes and the
 * bound: >0 bytes taken, 0 at the end, <0 an error (s->err). */
static ssize_t src_fill(struct src *s)
{
	ssize_t n;

	if (s->fd < 0) {
		n = s->n - s->total < sizeof(s->blk) ? (ssize_t)(s->n - s->total) : (ssize_t)sizeof(s->blk);
		memcpy(s->blk, s->buf + s->total, (size_t)n);
	} else {
		do
			n = read(s->fd, s->blk, sizeof(s->blk));
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return s->err = pmu_error(PMU_ERR_IO, "cannot read: %s", strerror(errno));
	}
	if (n == 0)
		return 0;
	if (s->total + (uint64_t)n > s->l->max_bytes)
		return s->err = over_bytes(s->l, s->total + (uint64_t)n, true);
	if ((s->err = nul_at(s->blk, (size_t)n, s->total)))
		return s->err;
	s->total += (uint64_t)n;
	s->len = (size_t)n;
	s->pos = 0;
	if (!s->over) {
		bound_scan(&s->b, s->blk, (size_t)n);
		s->over = s->b.est > s->l->budget;
	}
	return n;
}

static size_t src_read(void *buffer, size_t buflen, void *data)
{
	struct src *s = data;
	size_t m;

	if (s->pos == s->len) {
		ssize_t n = s->over ? 0 : src_fill(s);

		if (n <= 0 || s->over)
			return n < 0 || s->over ? (size_t)-1 : 0;
	}
	m = s->len - s->pos < buflen ? s->len - s->pos : buflen;
	memcpy(buffer, s->blk + s->pos, m);
	s->pos += m;
	return m;
}

static int load(struct src *s, json_t **out, uint64_t *line)
{
	json_error_t je;
	int err;

	tb.on = true;
	tb.used = tb.peak = 0;
	bound_init(&s->b);
	*out = json_load_callback(src_read, s, JSON_REJECT_DUPLICATES, &je);
	tb.on = false;
	tb.used = 0;
	if (*out && !s->over)
		return 0;
	json_decref(*out);
	*out = NULL;
	/* A NUL byte or the byte limit anywhere outranks what the parser
	 * found first, as when the whole text was checked before parsing. */
	while (!s->err && src_fill(s) > 0)
		;
	err = s->err ? s->err : s->over ? over_budget(s->l, s->fd < 0 ? s->n : s->total) : syntax(&je, line);
	return err;
}

/* Parse from fd (buf NULL) or from buf[0..n) within l. */
static int load_from(int fd, const char *buf, size_t n, const struct pmu_json_limits *l, json_t **out,
		     uint64_t *line)
{
	struct src *s = malloc(sizeof(*s));
	int err;

	if (!s)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	s->fd = fd;
	s->buf = buf;
	s->n = n;
	s->l = l;
	s->total = s->len = s->pos = 0;
	s->err = 0;
	s->over = false;
	err = load(s, out, line);
	free(s);
	return err;
}

int pmu_json_load_buf(const char *buf, size_t n, const struct pmu_json_limits *l, json_t **out,
		      uint64_t *line)
{
	*out = NULL;
	if (line)
		*line = 0;
	if (n > l->max_bytes)
		return over_bytes(l, n, false);
	return load_from(-1, buf, n, l, out, line);
}

int pmu_json_load_fd(int fd, const struct pmu_json_limits *l, json_t **out, uint64_t *line)
{
	struct stat st;

	*out = NULL;
	if (line)
		*line = 0;
	if (fstat(fd, &st) < 0)
		return pmu_error(PMU_ERR_IO, "cannot stat: %s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return pmu_error(PMU_ERR_IO, "not a regular file");
	if ((uint64_t)st.st_size > l->max_bytes)
		return over_bytes(l, (uint64_t)st.st_size, false);
	return load_from(fd, NULL, 0, l, out, line);
}
