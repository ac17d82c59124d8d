#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bag.h"
#include "bagw.h"
#include "error.h"
#include "jsonl.h"
#include "spec.h"
#include "spec_json.h"
#include "util.h"

#define DUMP_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER)

void pmu_bagw_init(struct pmu_bagw *w, struct pmu_bag *bag, int repetition, const char *spec, int minor)
{
	w->bag = bag;
	w->spec = spec;
	w->minor = minor;
	if (repetition > 1)
		snprintf(w->scope, sizeof(w->scope), "repeats/%d/", repetition);
	else
		w->scope[0] = '\0';
}

json_t *pmu_bagw_doc(const struct pmu_bagw *w, const char *type, json_t *body)
{
	json_t *d = json_pack("{s:s,s:s,s:o}", "spec", w->spec, "type", type, "units",
			      pmu_spec_doc_units(type, w->minor));

	/* json_object_update() adds body's members in body's order */
	if (d && body && json_object_update(d, body)) {
		json_decref(d);
		d = NULL;
	}
	json_decref(body);
	return d;
}

int pmu_bagw_put_doc(const struct pmu_bagw *w, const char *rel, json_t *doc)
{
	char path[256];

	snprintf(path, sizeof(path), "%s%s", w->scope, rel);
	return pmu_bag_put_json(w->bag, path, doc);
}

/* ---- the stream's buffer ------------------------------------------------ */

/* Room for need more bytes; false (the error stuck) when there is none. */
static bool room(struct pmu_bagw_stream *s, size_t need)
{
	size_t cap;
	char *p;

	if (s->cap - s->len >= need)
		return true;
	/* a chunk and a record or two: records are short, a long one grows it */
	cap = s->cap ? s->cap : PMU_BAGW_CHUNK + (8u << 10);
	while (cap - s->len < need)
		cap *= 2;
	p = realloc(s->buf, cap);
	if (!p) {
		s->err = pmu_error(PMU_ERR_NOMEM, "out of memory");
		return false;
	}
	s->buf = p;
	s->cap = cap;
	return true;
}

/* After a whole record: a full chunk goes to the bag, which hashes and
 * writes it in one piece.  A buffer grown by one large record shrinks back
 * then, so memory stays flat. */
static void settle(struct pmu_bagw_stream *s)
{
	if (s->len < PMU_BAGW_CHUNK)
		return;
	s->err = pmu_bag_file_write(s->f, s->buf, s->len);
	s->len = 0;
	if (s->cap > 4 * PMU_BAGW_CHUNK) {
		free(s->buf);
		s->buf = NULL;
		s->cap = 0;
	}
}

static bool usable(struct pmu_bagw_stream *s)
{
	return !s->err && s->f;
}

/* The time spent writing: each call's own, or a batch's as one span (two
 * clock reads instead of two per record). */
static uint64_t clock_start(const struct pmu_bagw_stream *s)
{
	return s->batch ? 0 : pmu_now_mono_ns();
}

static void clock_stop(struct pmu_bagw_stream *s, uint64_t t0)
{
	if (!s->batch)
		s->ns += pmu_now_mono_ns() - t0;
}

void pmu_bagw_batch(struct pmu_bagw_stream *s)
{
	s->batch_t0 = pmu_now_mono_ns();
	s->batch = true;
}

void pmu_bagw_batch_end(struct pmu_bagw_stream *s)
{
	s->batch = false;
	s->ns += pmu_now_mono_ns() - s->batch_t0;
}

int pmu_bagw_open(const struct pmu_bagw *w, struct pmu_bagw_stream *s, const char *rel, const char *kind)
{
	char path[256];

	memset(s, 0, sizeof(*s));
	snprintf(path, sizeof(path), "%s%s", w->scope, rel);
	s->err = pmu_bag_file_open(w->bag, path, &s->f);
	if (s->err || !kind)
		return s->err;
	return pmu_bagw_put(s, json_pack("{s:s,s:s,s:s,s:o}", "type", "header", "spec", w->spec, "stream", kind,
					 "units", pmu_spec_stream_units(kind, w->minor)));
}

int pmu_bagw_put(struct pmu_bagw_stream *s, json_t *rec)
{
	uint64_t t0 = clock_start(s);
	size_t n, at = s->len;

	if (!rec && !s->err)
		s->err = pmu_error(PMU_ERR_NOMEM, "out of memory");
	if (!usable(s)) {
		json_decref(rec);
		return s->err;
	}
	/* dumped in place; a record longer than the room left is dumped again */
	n = json_dumpb(rec, s->buf ? s->buf + at : NULL, s->buf ? s->cap - at : 0, DUMP_FLAGS);
	if (n && n + 1 > s->cap - at && room(s, n + 1))
		n = json_dumpb(rec, s->buf + at, s->cap - at, DUMP_FLAGS);
	json_decref(rec);
	if (!s->err && (!n || !room(s, n + 1)))
		s->err = s->err ? s->err : pmu_error(PMU_ERR_NOMEM, "cannot encode a record: out of memory");
	if (!s->err) {
		s->buf[at + n] = '\n';
		s->len = at + n + 1;
		s->records++;
		s->bytes += n + 1;
		settle(s);
	}
	clock_stop(s, t0);
	return s->err;
}

int pmu_bagw_printf(struct pmu_bagw_stream *s, const char *fmt, ...)
{
	uint64_t t0 = clock_start(s);
	va_list ap;
	int n;

	if (!usable(s) || !room(s, 256))
		return s->err;
	va_start(ap, fmt);
	n = vsnprintf(s->buf + s->len, s->cap - s->len, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n + 1 > s->cap - s->len && room(s, (size_t)n + 1)) {
		va_start(ap, fmt);
		n = vsnprintf(s->buf + s->len, s->cap - s->len, fmt, ap);
		va_end(ap);
	}
	if (n < 0 && !s->err)
		s->err = pmu_error(PMU_ERR_INVAL, "cannot format a record");
	if (!s->err) {
		s->buf[s->len + (size_t)n] = '\n';
		s->len += (size_t)n + 1;
		s->records++;
		s->bytes += (size_t)n + 1;
		settle(s);
	}
	clock_stop(s, t0);
	return s->err;
}

int pmu_bagw_write(struct pmu_bagw_stream *s, const void *p, size_t n)
{
	if (!usable(s) || !room(s, n))
		return s->err;
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	s->bytes += n;
	settle(s);
	return s->err;
}

int pmu_bagw_close(struct pmu_bagw_stream *s)
{
	if (s->f) {
		int e2;

		if (!s->err && s->len)
			s->err = pmu_bag_file_write(s->f, s->buf, s->len);
		e2 = pmu_bag_file_close(s->f);
		s->err = s->err ? s->err : e2;
	}
	s->f = NULL;
	free(s->buf);
	s->buf = NULL;
	s->len = s->cap = 0;
	return s->err;
}

int pmu_bagw_stream(const struct pmu_bagw *w, const char *rel, const char *kind, json_t *records)
{
	struct pmu_bagw_stream s;
	size_t i;
	json_t *r;

	if (!pmu_bagw_open(w, &s, rel, kind))
		json_array_foreach(records, i, r)
			if (pmu_bagw_put(&s, json_incref(r)))
				break;
	json_decref(records);
	return pmu_bagw_close(&s);
}

/* ---- records built in place --------------------------------------------- */

/* The bytes of x that a JSON string cannot hold as they are ('"', '\\', C0
 * controls) or that need a UTF-8 check (0x80 and above), flagged in their
 * top bit (SWAR).  The lowest byte flagged is a true one: a borrow only
 * spoils the bytes above it. */
static inline uint64_t special(uint64_t x)
{
	return ((x - 0x2020202020202020ull) | x | ((x ^ 0x2222222222222222ull) - 0x0101010101010101ull) |
		((x ^ 0x5c5c5c5c5c5c5c5cull) - 0x0101010101010101ull)) & 0x8080808080808080ull;
}

size_t pmu_bagw_quote(char *out, const char *str, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p = (const unsigned char *)str, *end = p + n;
	char *o = out;

	*o++ = '"';
	while (p < end) {
		unsigned c;

		/* eight bytes at a time, copied whole: out has room for 6 per
		 * byte left, so a word past the first special byte fits */
		while (end - p >= 8) {
			uint64_t m = special(pmu_load_le64((const char *)p));
			unsigned k = m ? (unsigned)__builtin_ctzll(m) / 8 : 8;

			memcpy(o, p, 8);
			o += k;
			p += k;
			if (k < 8)
				break;
		}
		while (p < end && pmu_json_plain[*p])
			*o++ = (char)*p++;
		if (p == end)
			break;
		c = *p;
		if (c >= 0x80) {
			/* as pmu_json_text(): a byte that begins no valid sequence is U+FFFD */
			size_t k = pmu_utf8_len(p, end);

			if (k) {
				memcpy(o, p, k);
				o += k;
				p += k;
			} else {
				memcpy(o, "\xef\xbf\xbd", 3);
				o += 3;
				p++;
			}
			continue;
		}
		/* '"', '\\' or a C0 control: jansson's escapes (dump.c, dump_string) */
		*o++ = '\\';
		switch (c) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '\b': *o++ = 'b'; break;
		case '\f': *o++ = 'f'; break;
		case '\n': *o++ = 'n'; break;
		case '\r': *o++ = 'r'; break;
		case '\t': *o++ = 't'; break;
		default:
			memcpy(o, "u00", 3);
			o[3] = hex[c >> 4];
			o[4] = hex[c & 15];
			o += 5;
			break;
		}
		p++;
	}
	*o++ = '"';
	return (size_t)(o - out);
}

void pmu_bagw_rec(struct pmu_bagw_stream *s)
{
	s->rec_t0 = clock_start(s);
	s->rec_at = s->len;
	s->first = true;
	if (usable(s) && room(s, 1))
		s->buf[s->len++] = '{';
}

/* The key of the next member, with room for vmax more bytes after it.
 * Keys are the program's own member names, plain ASCII: copied as they
 * are, which is how jansson writes them. */
static bool member(struct pmu_bagw_stream *s, const char *key, size_t vmax)
{
	size_t k = strlen(key);
	char *o;

	if (!usable(s) || !room(s, k + 4 + vmax))
		return false;
	o = s->buf + s->len;
	if (!s->first)
		*o++ = ',';
	s->first = false;
	*o++ = '"';
	memcpy(o, key, k);
	o += k;
	*o++ = '"';
	*o++ = ':';
	s->len = (size_t)(o - s->buf);
	return true;
}

void pmu_bagw_str(struct pmu_bagw_stream *s, const char *key, const char *v)
{
	size_t n;

	if (!v)
		v = "?";
	n = strlen(v);
	if (member(s, key, PMU_BAGW_QUOTE_MAX(n)))
		s->len += pmu_bagw_quote(s->buf + s->len, v, n);
}

void pmu_bagw_int(struct pmu_bagw_stream *s, const char *key, int64_t v)
{
	char t[24];
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
	size_t n = 0;

	if (!member(s, key, 21))
		return;
	do {
		t[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		s->buf[s->len++] = '-';
	while (n)
		s->buf[s->len++] = t[--n];
}

void pmu_bagw_bool(struct pmu_bagw_stream *s, const char *key, bool v)
{
	if (!member(s, key, 5))
		return;
	memcpy(s->buf + s->len, v ? "true" : "false", v ? 4 : 5);
	s->len += v ? 4 : 5;
}

/* The UTF-8 bytes that p[0..n) is written as (each byte that does not begin
 * a valid sequence becomes U+FFFD, 3 bytes), and in *fit the raw bytes of
 * its longest prefix of whole characters written in at most room bytes. */
static size_t text_len(const char *str, size_t n, size_t room, size_t *fit)
{
	const unsigned char *p = (const unsigned char *)str, *end = p + n;
	size_t out = 0;

	*fit = n;
	while (p < end) {
		size_t u = *p < 0x80 ? 1 : pmu_utf8_len(p, end), w = u ? u : 3;

		if (out + w > room && *fit == n)
			*fit = (size_t)(p - (const unsigned char *)str);
		out += w;
		p += u ? u : 1;
	}
	return out;
}

void pmu_bagw_argv(struct pmu_bagw_stream *s, const char *blob, size_t len, bool truncated)
{
	struct { size_t off, n; } part[PMU_ARGV_MAX_ARGS];
	size_t np = 0, bytes = 0, off = 0, vmax = 2;
	bool cut = false;

	/* which strings, and how much of the last, fit the bounds */
	while (off < len) {
		const char *z = memchr(blob + off, '\0', len - off);
		size_t n = z ? (size_t)(z - (blob + off)) : len - off, fit;
		size_t room = bytes < PMU_ARGV_MAX_BYTES ? PMU_ARGV_MAX_BYTES - bytes - 1 : 0;
		size_t tl = text_len(blob + off, n, room, &fit);

		if (np == PMU_ARGV_MAX_ARGS || bytes + 1 > PMU_ARGV_MAX_BYTES) {
			cut = true;
			break;
		}
		if (bytes + tl + 1 > PMU_ARGV_MAX_BYTES) {
			/* the beginning of the string at the bound, if any fits */
			if (fit) {
				part[np].off = off;
				part[np++].n = fit;
			}
			cut = true;
			break;
		}
		part[np].off = off;
		part[np++].n = n;
		bytes += tl + 1;
		if (!z)
			break;
		off += n + 1;
	}
	for (size_t i = 0; i < np; i++)
		vmax += PMU_BAGW_QUOTE_MAX(part[i].n) + 1;
	if (member(s, "argv", vmax)) {
		s->buf[s->len++] = '[';
		for (size_t i = 0; i < np; i++) {
			if (i)
				s->buf[s->len++] = ',';
			s->len += pmu_bagw_quote(s->buf + s->len, blob + part[i].off, part[i].n);
		}
		s->buf[s->len++] = ']';
	}
	if (cut || truncated)
		pmu_bagw_bool(s, "argv_truncated", true);
}

int pmu_bagw_rec_end(struct pmu_bagw_stream *s)
{
	if (usable(s) && room(s, 2)) {
		s->buf[s->len++] = '}';
		s->buf[s->len++] = '\n';
		s->records++;
		s->bytes += s->len - s->rec_at;
		settle(s);
	}
	clock_stop(s, s->rec_t0);
	return s->err;
}
