/*
 * Reading stream records: the line reader (which hashes every byte it
 * reads into the file's digest), the full path's schema check of a flat
 * record, and the fast path beside it: record shapes learned from accepted
 * records, matched with word compares, SSE2 or SWAR byte scans and, on
 * x86-64, AVX2 or AVX-512BW line masks.  Both paths give the same
 * verdicts; only the speed differs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif
/* x86-64 line masks (AVX2, AVX-512BW), picked at run time; build with
 * -DPMU_NO_LINE_MASKS to check the byte scans other CPUs use */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(PMU_NO_LINE_MASKS)
#include <immintrin.h>
#define HAVE_LINE_MASKS 1
#endif

#include "error.h"
#include "jsonl.h"
#include "sha256.h"
#include "spec.h"
#include "util.h"
#include "validate.h"
#include "validate_int.h"

#define SHAPE_OVERREAD 128        /* bytes the shapes may read past the buffered ones */

/* ---- the line reader ---------------------------------------------------- */

/* read(2), and the bytes into the file's digest when this reader hashes */
static ssize_t lines_read(struct lines *l, char *buf, size_t n)
{
	ssize_t r;

	do
		r = read(l->fd, buf, n);
	while (r < 0 && errno == EINTR);
	if (r < 0 && l->hash && !l->hash_err)
		l->hash_err = pmu_error(PMU_ERR_IO, "read error: %s", strerror(errno));
	if (r > 0 && l->hash && !l->hash_err)
		l->hash_err = pmu_sha256_update(&l->sha, buf, (size_t)r);
	return r;
}

int pmu_v_lines_open(struct lines *l, struct v *v, const char *path)
{
	struct vfile *f;

	memset(l, 0, sizeof(*l));
	l->fd = openat(v->rootfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (l->fd < 0)
		return pmu_error(PMU_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
	(void)posix_fadvise(l->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	l->cap = 2 * LINE_LIMIT;
	/* SHAPE_OVERREAD bytes after the last: shape_match() reads up to 64
	 * past a line's end and the line masks MASK_WINDOW (128) from its
	 * start; zeroed, so every byte they read is defined */
	l->buf = calloc(1, l->cap + SHAPE_OVERREAD);
	if (!l->buf) {
		close(l->fd);
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	}
	f = pmu_v_find_file(v, path);
	if (f && f->listed && !atomic_exchange(&f->claimed, true)) {
		l->hash = f;
		l->hash_err = pmu_sha256_init(&l->sha);
	}
	return 0;
}

void pmu_v_lines_close(struct lines *l)
{
	if (l->hash) {
		/* a check that stopped early: the digest still takes the rest */
		while (!l->hash_err && lines_read(l, l->buf, l->cap) > 0)
			;
		if (!l->hash_err)
			l->hash_err = pmu_sha256_final_hex(&l->sha, l->hash->actual);
		else if (l->sha.ctx)
			pmu_sha256_release(&l->sha);
		l->hash->hash_err = l->hash_err;
	}
	free(l->buf);
	close(l->fd);
}

/* 1: a line (*nl false when the file ends without '\n'), 0: end, -1: line too
 * long (skipped), <-1: read error */
int pmu_v_lines_next(struct lines *l, const char **p, size_t *len, bool *nl)
{
	for (;;) {
		char *s = l->buf + l->start, *e = memchr(s, '\n', l->end - l->start);

		if (e) {
			*p = s;
			*len = (size_t)(e - s);
			*nl = true;
			l->start += *len + 1;
			l->lineno++;
			return *len >= LINE_LIMIT ? -1 : 1; /* the LF counts */
		}
		if (l->eof) {
			if (l->start == l->end)
				return 0;
			*p = s;
			*len = l->end - l->start;
			*nl = false;
			l->start = l->end;
			l->lineno++;
			return 1;
		}
		if (l->end - l->start >= LINE_LIMIT) {
			/* skip to the next newline */
			l->lineno++;
			for (;;) {
				ssize_t n = lines_read(l, l->buf, l->cap);

				if (n <= 0) {
					l->start = l->end = 0;
					l->eof = true;
					return -1;
				}
				e = memchr(l->buf, '\n', (size_t)n);
				if (e) {
					l->start = (size_t)(e - l->buf) + 1;
					l->end = (size_t)n;
					return -1;
				}
			}
		}
		memmove(l->buf, s, l->end - l->start);
		l->end -= l->start;
		l->start = 0;
		ssize_t n = lines_read(l, l->buf + l->end, l->cap - l->end);
		if (n < 0)
			return pmu_error(PMU_ERR_IO, "read error: %s", strerror(errno));
		if (n == 0)
			l->eof = true;
		l->end += (size_t)n;
	}
}

/* pmu_objdef_field() for a record's key, without a strlen() of every
 * candidate: the hot path of every stream record.  Writers put members in
 * the table's order, so field number hint is tried first (keys are unique
 * in a table: the result is the same). */
static const struct pmu_field *rec_field(const struct pmu_objdef *o, const char *key, size_t klen,
					 size_t hint)
{
	if (hint < o->nfields && key_is(o->fields[hint].key, key, klen))
		return &o->fields[hint];
	for (size_t i = 0; i < o->nfields; i++)
		if (key_is(o->fields[i].key, key, klen))
			return &o->fields[i];
	return NULL;
}

/* Schema check of a flat record; returns the number of findings. */
int pmu_v_check_rec(struct v *v, const char *file, uint64_t rec, const struct pmu_objdef *o,
		    const struct pmu_jrec *r)
{
	int bad = 0;
	const struct pmu_jfield *st = NULL;
	bool has_reason = false, has_remedy = false;
	size_t nreq = 0, req_seen = 0;

	if (r->too_many) {
		report(v, PMU_CHECK_SCHEMA_FIELD, file, rec, "record has more than %d fields", PMU_JREC_MAX);
		bad++;
	}
	for (int i = 0; i < r->n; i++) {
		const struct pmu_jfield *jf = &r->f[i];
		const struct pmu_field *f = rec_field(o, jf->key, jf->klen, (size_t)i);
		bool ok;

		if (!f) {
			report(v, PMU_CHECK_SCHEMA_FIELD, file, rec, "unknown field '%.*s' in a %s record",
			       (int)jf->klen, jf->key, o->name);
			bad++;
			continue;
		}
		if (f->since > v->minor) {
			report(v, PMU_CHECK_SCHEMA_FIELD, file, rec,
			       "unknown field '%s' in a %s record (added in a later minor version of the spec)",
			       f->key, o->name);
			bad++;
			continue;
		}
		req_seen += f->required; /* member names are unique: each counts once */
		switch (f->type) {
		case PMU_FT_STR:
			ok = jf->type == PMU_JV_STR && jf->slen > 0;
			break;
		case PMU_FT_INT:
			ok = jf->type == PMU_JV_INT && !jf->overflow && jf->i >= 0;
			break;
		case PMU_FT_BOOL:
			ok = jf->type == PMU_JV_BOOL;
			break;
		case PMU_FT_ENUM:
			ok = jf->type == PMU_JV_STR && pmu_enum_has(f->enumv, jf->s, jf->slen);
			break;
		case PMU_FT_HEX64:
			ok = jf->type == PMU_JV_STR && is_hex64(jf->s, jf->slen);
			break;
		case PMU_FT_ARGV: {
			size_t n, bytes;

			ok = jf->type == PMU_JV_NESTED && !pmu_json_strarr(jf->s, jf->slen, &n, &bytes) &&
			     n <= PMU_ARGV_MAX_ARGS && bytes <= PMU_ARGV_MAX_BYTES;
			break;
		}
		default:
			ok = false; /* stream records are flat */
			break;
		}
		if (!ok) {
			report(v, PMU_CHECK_SCHEMA_FIELD, file, rec, "'%s' must be %s", f->key, pmu_v_type_names[f->type]);
			bad++;
		}
		if (f->key[0] == 's' && !strcmp(f->key, "status") && ok)
			st = jf;
		else if (f->key[0] == 'r' && !strcmp(f->key, "reason"))
			has_reason = ok;
		else if (f->key[0] == 'r' && !strcmp(f->key, "remedy"))
			has_remedy = ok;
	}
	/* a field required since a later minor than the bundle's is not there */
	for (size_t i = 0; i < o->nfields; i++)
		nreq += o->fields[i].required && o->fields[i].since <= v->minor;
	for (size_t i = 0; req_seen < nreq && i < o->nfields; i++)
		if (o->fields[i].required && o->fields[i].since <= v->minor && !pmu_jrec_get(r, o->fields[i].key)) {
			report(v, PMU_CHECK_SCHEMA_FIELD, file, rec, "required field '%s' is missing from a %s record",
			       o->fields[i].key, o->name);
			bad++;
		}
	if (st) {
		char s[32];

		snprintf(s, sizeof(s), "%.*s", (int)st->slen, st->s);
		pmu_v_status_rule(v, file, rec, o->name, s, has_reason, has_remedy);
	}
	return bad;
}

/* ---- record shapes: the fast path of stream records ---------------------
 *
 * A writer emits every record of one type with the same members in the same
 * order, compactly.  A shape is such a record with its values cut out: the
 * literal bytes between values, the kind of each value and its schema field.
 * It is learned from a record that the full path (pmu_jrec_parse() and
 * pmu_v_check_rec()) accepted without a finding, and a later line that matches it
 * byte for byte outside its values, with values that pass the same per-value
 * rules pmu_v_check_rec() applies, gets the same verdict from both paths: the set
 * of members is the same, so unknown, missing and duplicate members cannot
 * differ.  Anything else (a different order, whitespace, an escape, a
 * non-ASCII byte, a negative or long number, a value check that fails) is
 * not a match, and the full path judges the line and reports.  Records with
 * a "status" member (the status rule reads several members) are never
 * shapes.  The "type" member's value is part of the literal: a shape is one
 * record type.
 */

static bool obj_has_status(const struct pmu_objdef *o)
{
	for (size_t i = 0; i < o->nfields; i++)
		if (!strcmp(o->fields[i].key, "status"))
			return true;
	return false;
}

static int shapes_common(const struct shape *a, const struct shape *b)
{
	int i;

	for (i = 0; i < a->n && i < b->n; i++)
		if (a->f[i].kind != b->f[i].kind || a->f[i].sf != b->f[i].sf ||
		    a->f[i].prelen != b->f[i].prelen ||
		    memcmp(a->lit + a->f[i].pre, b->lit + b->f[i].pre, a->f[i].prelen))
			break;
	return i;
}

/* lw := s[0..n); false when it is longer than LIT_WORDS words */
static bool litw_set(struct litw *lw, const char *s, size_t n)
{
	memset(lw, 0, sizeof(*lw));
	if (n > 8 * LIT_WORDS)
		return false;
	for (size_t k = 0; 8 * k < n; k++) {
		size_t b = n - 8 * k < 8 ? n - 8 * k : 8;

		memcpy(&lw->w[k], s + 8 * k, b);
		memset(&lw->m[k], 0xff, b);
		lw->nw = (uint8_t)(k + 1);
	}
	return true;
}

/* p[0..) starts with lw's literal; reads 16 bytes from p, 8 * lw->nw
 * when that is more.  Words 0 and 1 are compared whatever nw is (a word
 * past the literal has mask 0): most literals fit in two words, and a
 * branch on nw, which differs from field to field, is mispredicted. */
static inline bool litw_at(const char *p, const struct litw *lw)
{
	uint64_t x, y, d;

	memcpy(&x, p, 8);
	memcpy(&y, p + 8, 8);
	d = ((x ^ lw->w[0]) & lw->m[0]) | ((y ^ lw->w[1]) & lw->m[1]);
	if (__builtin_expect(lw->nw > 2, 0)) {
		memcpy(&x, p + 16, 8);
		memcpy(&y, p + 24, 8);
		d |= ((x ^ lw->w[2]) & lw->m[2]) | ((y ^ lw->w[3]) & lw->m[3]);
	}
	return d == 0;
}

/* The digits at p and in *v their value, reading up to 24 bytes from p
 * whatever the digits' count; more than 16 digits: 17 (too many). */
static inline size_t digits_over(const char *p, uint64_t *v)
{
	uint64_t x, acc = 0;
	size_t n = 0;

	for (int blk = 0; blk < 2; blk++) {
		unsigned k;

		x = pmu_load_le64(p + n);
		k = pmu_digits_in(x);
		if (k)
			acc = acc * pow10_u64(k) + pmu_digits_value(x, k);
		n += k;
		if (k < 8) {
			*v = acc;
			return n;
		}
	}
	*v = acc;
	return p[16] >= '0' && p[16] <= '9' ? 17 : 16;
}

/* digits_over() when the value is not wanted: the count alone */
static inline size_t digits_count(const char *p)
{
	uint64_t x;
	unsigned k;

	x = pmu_load_le64(p);
	if ((k = pmu_digits_in(x)) < 8)
		return k;
	x = pmu_load_le64(p + 8);
	if ((k = pmu_digits_in(x)) < 8)
		return 8 + k;
	return p[16] >= '0' && p[16] <= '9' ? 17 : 16;
}

/* How many bytes at p pmu_json_plain[] accepts, up to PLAIN_STEP: the
 * first '"', '\\', control or non-ASCII byte ends the run.  Reads
 * PLAIN_STEP bytes from p. */
#ifdef __SSE2__
#define PLAIN_STEP 16u
static inline unsigned plain_run(const char *p)
{
	__m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
	/* signed: below 0x20 is a control byte or, negative, a non-ASCII one */
	__m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
						 _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))),
				    _mm_cmplt_epi8(x, _mm_set1_epi8(0x20)));
	unsigned m = (unsigned)_mm_movemask_epi8(stop);

	return m ? (unsigned)__builtin_ctz(m) : PLAIN_STEP;
}
#else
#define PLAIN_STEP 8u
static inline unsigned plain_run(const char *p)
{
	const uint64_t ones = 0x0101010101010101ull;
	uint64_t x = pmu_load_le64(p), q = x ^ (ones * '"'), b = x ^ (ones * '\\'), m;

	/* Each of the four tests flags its first hit exactly (a borrow only
	 * flags bytes above a true hit), so the lowest flag of their union is
	 * the first byte refused. */
	m = (((q - ones) & ~q) | ((b - ones) & ~b) | ((x - ones * 0x20) & ~x) | x) & 0x8080808080808080ull;
	return m ? (unsigned)__builtin_ctzll(m) / 8 : PLAIN_STEP;
}
#endif

/*
 * Line masks: one bit per byte of the MASK_WINDOW bytes from a line's
 * start, made with a few vector compares per 64 bytes.  stop: a byte
 * plain_run() stops at; nd: a byte that is not a digit.  The last bit of
 * each is set whatever the byte is, so a search from any bit finds one, and
 * a find at that bit means "not known in the window": the caller falls back
 * to the byte scans.  With the masks a value's length is a shift and a
 * count of trailing zeros, not a load and a scan that the next field
 * waits for.
 */
#define MASK_WINDOW 128

struct lmask {
	uint64_t stop[2], nd[2];
};

#ifdef HAVE_LINE_MASKS
__attribute__((target("avx512bw"))) static void lmask_avx512(const char *p, struct lmask *m)
{
	for (int h = 0; h < 2; h++) {
		__m512i x = _mm512_loadu_si512((const void *)(p + 64 * h));
		__mmask64 q = _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8('"'));
		__mmask64 b = _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8('\\'));
		/* signed: control bytes and, negative, non-ASCII ones */
		__mmask64 c = _mm512_cmplt_epi8_mask(x, _mm512_set1_epi8(0x20));
		__mmask64 d = _mm512_cmple_epu8_mask(_mm512_sub_epi8(x, _mm512_set1_epi8('0')), _mm512_set1_epi8(9));

		m->stop[h] = (uint64_t)(q | b | c);
		m->nd[h] = ~(uint64_t)d;
	}
	m->stop[1] |= 1ull << 63;
	m->nd[1] |= 1ull << 63;
}

__attribute__((target("avx2"))) static void lmask_avx2(const char *p, struct lmask *m)
{
	uint32_t st[4], dg[4];

	for (int k = 0; k < 4; k++) {
		__m256i x = _mm256_loadu_si256((const void *)(p + 32 * k));
		__m256i s = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(x, _mm256_set1_epi8('"')),
							    _mm256_cmpeq_epi8(x, _mm256_set1_epi8('\\'))),
					    _mm256_cmpgt_epi8(_mm256_set1_epi8(0x20), x));
		__m256i d = _mm256_and_si256(_mm256_cmpgt_epi8(x, _mm256_set1_epi8('0' - 1)),
					     _mm256_cmpgt_epi8(_mm256_set1_epi8('9' + 1), x));

		st[k] = (uint32_t)_mm256_movemask_epi8(s);
		dg[k] = (uint32_t)_mm256_movemask_epi8(d);
	}
	m->stop[0] = st[0] | (uint64_t)st[1] << 32;
	m->stop[1] = st[2] | (uint64_t)st[3] << 32 | 1ull << 63;
	m->nd[0] = ~(dg[0] | (uint64_t)dg[1] << 32);
	m->nd[1] = ~(dg[2] | (uint64_t)dg[3] << 32) | 1ull << 63;
}
#endif

/* The first set bit of m at or after o (o < MASK_WINDOW): one always is. */
static inline unsigned mask_next(const uint64_t m[2], unsigned o)
{
	/* which word o is in depends on the field, not the line: predicted */
	if (o < 64) {
		uint64_t x = m[0] >> o;

		return x ? o + (unsigned)__builtin_ctzll(x) : 64 + (unsigned)__builtin_ctzll(m[1]);
	}
	return o + (unsigned)__builtin_ctzll(m[1] >> (o - 64));
}

/* With masks mk of the window at line, the offset of the first bit of
 * m (mk->nd or mk->stop) at or after p; 0 when it is not known there (no
 * masks, p or the find past the window; p is past line's first byte, so
 * a find is never 0): the caller scans the bytes. */
static inline size_t mask_end(const struct lmask *mk, const uint64_t m[2], const char *line, const char *p)
{
	size_t o = (size_t)(p - line), e;

	if (!mk || o >= MASK_WINDOW - 1 || (e = mask_next(m, (unsigned)o)) >= MASK_WINDOW - 1)
		return 0;
	return e;
}

/* The mask maker for opts->line_masks on this CPU, or NULL (none, or the
 * one asked for is not there). */
lmask_fn pmu_v_lmask_pick(enum pmu_line_masks want)
{
#ifdef HAVE_LINE_MASKS
	__builtin_cpu_init();
	bool avx512 = __builtin_cpu_supports("avx512bw"), avx2 = __builtin_cpu_supports("avx2");

	switch (want) {
	case PMU_LINE_MASKS_AUTO: return avx512 ? lmask_avx512 : avx2 ? lmask_avx2 : NULL;
	case PMU_LINE_MASKS_AVX512: return avx512 ? lmask_avx512 : NULL;
	case PMU_LINE_MASKS_AVX2: return avx2 ? lmask_avx2 : NULL;
	case PMU_LINE_MASKS_NONE: break;
	}
#else
	(void)want;
#endif
	return NULL;
}

enum pmu_line_masks pmu_validate_line_masks(enum pmu_line_masks want)
{
	return want == PMU_LINE_MASKS_AUTO || want == PMU_LINE_MASKS_NONE || pmu_v_lmask_pick(want) ? want
												 : PMU_LINE_MASKS_NONE;
}

/* The value of the n (1 to 16) digits at p. */
static inline uint64_t digits_value_n(const char *p, size_t n)
{
	uint64_t x = pmu_load_le64(p);

	if (n <= 8)
		return pmu_digits_value(x, (unsigned)n);
	return pmu_eight_digits(x) * pow10_u64((unsigned)n - 8) + pmu_digits_value(pmu_load_le64(p + 8), (unsigned)n - 8);
}

/* Learn the shape of line, which the full path accepted as a record of rd
 * with no finding; silently nothing when it is not compact.  events: the
 * stream is one on_event() checks (on_event_roles() may take the record). */
void pmu_v_shape_learn(struct shapes *ss, const char *line, size_t len, const struct pmu_jrec *r,
		       const struct pmu_recdef *rd, bool events)
{
	struct shape sh;
	const char *p = line, *end = line + len;
	size_t used = 0;

	if (r->n == 0 || r->n > SHAPE_FIELDS || r->too_many || obj_has_status(rd->obj))
		return;
	memset(&sh, 0, sizeof(sh));
	for (int i = 0; i < SHAPE_FIELDS; i++)
		for (int e = 0; e < SHAPE_ENUMS; e++)
			sh.f[i].ek[e] = ~0ull;
	sh.rd = rd;
	sh.n = r->n;
	for (int i = 0; i < r->n; i++) {
		const struct pmu_jfield *jf = &r->f[i];
		const char *vstart, *vend, *cut;
		size_t pre;

		/* compact: the key sits in the line right after p's literal */
		if ((uintptr_t)jf->key < (uintptr_t)p || (uintptr_t)jf->key > (uintptr_t)end ||
		    jf->key + jf->klen + 2 > end || jf->key[jf->klen] != '"' || jf->key[jf->klen + 1] != ':')
			return;
		vstart = jf->key + jf->klen + 2;
		sh.f[i].sf = rec_field(rd->obj, jf->key, jf->klen, (size_t)i);
		if (!sh.f[i].sf)
			return;
		if (jf->klen == 4 && !memcmp(jf->key, "type", 4)) {
			if (jf->type != PMU_JV_STR || jf->s != vstart + 1 || jf->slen == 0)
				return;
			sh.f[i].kind = SK_TYPE;
			cut = vend = vstart + 1 + jf->slen + 1;
		} else if (jf->type == PMU_JV_STR) {
			if (jf->s != vstart + 1)
				return; /* unescaped into scratch: not compact */
			sh.f[i].kind = SK_STR;
			cut = vstart + 1;
			vend = jf->s + jf->slen;
		} else if (jf->type == PMU_JV_INT) {
			sh.f[i].kind = SK_INT;
			cut = vstart;
			for (vend = vstart; vend < end && *vend >= '0' && *vend <= '9'; vend++)
				;
		} else if (jf->type == PMU_JV_BOOL) {
			sh.f[i].kind = SK_BOOL;
			cut = vstart;
			vend = vstart + (jf->b ? 4 : 5);
		} else {
			return;
		}
		if (vend > end)
			return;
		/* the literal runs from p to the value (the type's value included) */
		pre = (size_t)(cut - p);
		if (used + pre > SHAPE_LIT || !litw_set(&sh.f[i].lw, p, pre))
			return;
		switch (sh.f[i].kind) {
		case SK_TYPE: sh.f[i].op = OP_TYPE; break;
		case SK_INT: sh.f[i].op = OP_INT; break;
		case SK_BOOL: sh.f[i].op = OP_BOOL; break;
		default:
			sh.f[i].op = sh.f[i].sf->type == PMU_FT_ENUM ? OP_ENUM :
				     sh.f[i].sf->type == PMU_FT_HEX64 ? OP_HEX : OP_STR;
			break;
		}
		memcpy(sh.lit + used, p, pre);
		sh.f[i].pre = (uint16_t)used;
		sh.f[i].prelen = (uint16_t)pre;
		sh.f[i].key = (uint16_t)(used + (size_t)(jf->key - p));
		sh.f[i].klen = (uint16_t)jf->klen;
		used += pre;
		p = vend;
	}
	if (used + (size_t)(end - p) > SHAPE_LIT || !litw_set(&sh.postw, p, (size_t)(end - p)))
		return;
	memcpy(sh.lit + used, p, (size_t)(end - p));
	sh.post = (uint16_t)used;
	sh.postlen = (uint16_t)(end - p);
	/* the members event_core() reads, by place */
	memset(&sh.ev, -1, sizeof(sh.ev));
	for (int i = 0; i < sh.n; i++) {
		static const struct {
			const char *key;
			size_t off;
			enum shape_kind kind;
		} roles[] = {
			{ "t_ns", offsetof(struct ev_roles, t), SK_INT },
			{ "inc", offsetof(struct ev_roles, inc), SK_STR },
			{ "pid", offsetof(struct ev_roles, pid), SK_INT },
			{ "tid", offsetof(struct ev_roles, tid), SK_INT },
			{ "name", offsetof(struct ev_roles, name), SK_STR },
			{ "ph", offsetof(struct ev_roles, ph), SK_STR },
		};

		for (size_t k = 0; k < PMU_ARRAY_SIZE(roles); k++)
			if (sh.f[i].klen == strlen(roles[k].key) &&
			    !memcmp(sh.lit + sh.f[i].key, roles[k].key, sh.f[i].klen) && sh.f[i].kind == roles[k].kind)
				*((int8_t *)&sh.ev + roles[k].off) = (int8_t)i;
	}
	sh.ev.ok = events && !strcmp(rd->type, "event") && sh.ev.t >= 0 && sh.ev.inc >= 0 && sh.ev.pid >= 0 &&
		   sh.ev.tid >= 0 && sh.ev.name >= 0 && sh.ev.ph >= 0;
	/* on_event_roles() reads three integers; every other consumer may
	 * read any */
	for (int i = 0; i < sh.n; i++)
		sh.f[i].need = !sh.ev.ok || i == sh.ev.t || i == sh.ev.pid || i == sh.ev.tid;
	/* a full set replaces the one after the last matched */
	int k = ss->n < SHAPES ? ss->n++ : (ss->mru + 1) % SHAPES;
	ss->s[k] = sh;
	ss->mru = k;
	for (int o = 0; o < ss->n; o++)
		ss->common[k][o] = ss->common[o][k] = (uint8_t)(o == k ? sh.n : shapes_common(&sh, &ss->s[o]));
}

/* A value of n <= 7 bytes at s as one word: its bytes, then n in the top
 * byte (which its bytes leave 0) */
static inline uint64_t enum_key(const char *s, size_t n)
{
	return (pmu_load_le64(s) & ((1ull << (8 * n)) - 1)) | (uint64_t)n << 56;
}

/* enum_ok() of a value not accepted so far: the schema's list, and the
 * value remembered when there is room */
static __attribute__((noinline)) bool enum_new(struct shape *sh, int i, const char *s, size_t n)
{
	if (!pmu_enum_has(sh->f[i].sf->enumv, s, n))
		return false;
	if (sh->f[i].nev < SHAPE_ENUMS && n <= sizeof(sh->f[i].ev[0])) {
		if (n <= 7)
			sh->f[i].ek[sh->f[i].nev] = enum_key(s, n);
		memcpy(sh->f[i].ev[sh->f[i].nev], s, n);
		sh->f[i].elen[sh->f[i].nev++] = (uint8_t)n;
	}
	return true;
}

static inline __attribute__((always_inline)) bool enum_ok(struct shape *sh, int i, const char *s, size_t n)
{
	if (n <= 7) {
		/* one word against every value accepted so far, with no branch
		 * on which one it is (the phases of events alternate) */
		uint64_t k = enum_key(s, n);
		const uint64_t *ek = sh->f[i].ek;
		bool hit = false;

		for (int e = 0; e < SHAPE_ENUMS; e++)
			hit |= ek[e] == k;
		if (hit)
			return true;
	} else if (n == 8) {
		uint64_t x = pmu_load_le64(s);

		for (int e = 0; e < sh->f[i].nev; e++)
			if (sh->f[i].elen[e] == 8 && pmu_load_le64(sh->f[i].ev[e]) == x)
				return true;
	} else {
		for (int e = 0; e < sh->f[i].nev; e++)
			if (sh->f[i].elen[e] == n && lit_eq(sh->f[i].ev[e], s, n))
				return true;
	}
	return enum_new(sh, i, s, n);
}

/*
 * Match line against sh from field i0 on (fields before it matched already,
 * the line's field i0 starting at pos[i0]).  1: the whole line matches and
 * passes the per-value rules; r is filled as pmu_jrec_parse() would (strings
 * point into line, keys into the shape).  0: *failed is the field that did
 * not match (sh->n: what follows the last value); pos[] holds where each
 * field up to it starts.
 *
 * It reads up to 64 bytes past the line's end (the lines buffer has
 * SHAPE_OVERREAD): no bound check per byte.  Whatever those bytes are, a
 * match must end exactly at the line's end, and no field starts past it.
 * mk, when not NULL, has the masks of the MASK_WINDOW bytes from line.
 */
static inline __attribute__((always_inline)) bool shape_match(struct shape *sh, const char *line, const char *end, bool nl, size_t *len,
			struct pmu_jrec *r, int i0, const char **pos, int *failed, const struct lmask *mk)
{
	const char *p = pos[i0];
	int i;

	/* r's names, types and constant values are this shape's already when
	 * it matched r last (r->owner): only the values change.  Else they are
	 * set here, from i0 on (the fields before hold another shape's match,
	 * with the same names).  Until this match succeeds r belongs to no
	 * shape: a failed try must not leave another shape's names behind
	 * for the shape that owned r. */
	if (r->owner != sh) {
		r->owner = NULL;
		for (i = i0; i < sh->n; i++) {
			struct pmu_jfield *f = &r->f[i];

			f->key = sh->lit + sh->f[i].key;
			f->klen = sh->f[i].klen;
			f->overflow = false;
			f->b = false;
			f->i = 0;
			f->type = sh->f[i].kind == SK_INT ? PMU_JV_INT : sh->f[i].kind == SK_BOOL ? PMU_JV_BOOL : PMU_JV_STR;
			if (sh->f[i].op == OP_TYPE) { /* the value is in the literal */
				f->s = f->key + f->klen + 3;
				f->slen = (size_t)(sh->lit + sh->f[i].pre + sh->f[i].prelen - 1 - f->s);
			}
		}
	}
	for (i = i0; i < sh->n; i++) {
		struct pmu_jfield *f = &r->f[i];
		unsigned op = sh->f[i].op;

		pos[i] = p;
		if (p > end || !litw_at(p, &sh->f[i].lw))
			goto fail;
		p += sh->f[i].prelen;
		if (op == OP_INT) {
			uint64_t v = 0;
			size_t nd, e = mask_end(mk, mk ? mk->nd : NULL, line, p);

			if (e) {
				nd = e - (size_t)(p - line);
				if (sh->f[i].need && nd - 1 <= 15)
					v = digits_value_n(p, nd);
			} else {
				nd = sh->f[i].need ? digits_over(p, &v) : digits_count(p);
			}

			/* 1 to 16 digits, no leading zero: what follows is the next
			 * literal, which refuses a fraction or an exponent */
			if (nd - 1 > 15 || (*p == '0' && nd > 1))
				goto fail;
			p += nd;
			f->i = (int64_t)v;
		} else if (op >= OP_STR && op <= OP_HEX) {
			/* strings: the next literal starts with the closing quote */
			const char *s = p;
			size_t n, e = mask_end(mk, mk ? mk->stop : NULL, line, p);

			if (e) {
				p = line + e;
			} else {
				for (;;) {
					unsigned k = plain_run(p);

					p += k;
					if (k < PLAIN_STEP)
						break;
					if (p > end)
						goto fail;
				}
			}
			n = (size_t)(p - s);
			f->s = s;
			f->slen = n;
			if (op == OP_STR ? !n : op == OP_ENUM ? !enum_ok(sh, i, s, n) : !is_hex64(s, n))
				goto fail;
		} else if (op == OP_BOOL) {
			if (p <= end - 4 && lit_eq(p, "true", 4))
				f->b = true, p += 4;
			else if (p <= end - 5 && lit_eq(p, "false", 5))
				f->b = false, p += 5;
			else
				goto fail;
		}
		/* OP_TYPE: the value is in the literal */
	}
	pos[i] = p;
	if (p > end || !litw_at(p, &sh->postw))
		goto fail;
	if (nl) {
		/* no match runs past a '\n': the first one ends the line */
		if ((size_t)(end - p) <= sh->postlen || p[sh->postlen] != '\n' ||
		    (size_t)(p + sh->postlen - line) >= LINE_LIMIT)
			goto fail;
		*len = (size_t)(p + sh->postlen - line);
	} else if ((size_t)(end - p) != sh->postlen) {
		goto fail;
	}
	r->n = sh->n;
	r->too_many = false;
	r->owner = sh;
	return true;
fail:
	*failed = i;
	return false;
}

/* The shape line matches, the last matched tried first, or NULL.  With nl,
 * end is the end of the buffered bytes and a match must be followed by a
 * '\n': *len gets the line's length.  Else the line is line[0..*len). */
struct shape *pmu_v_shapes_match(struct shapes *ss, const char *line, const char *end, bool nl, size_t *len,
				 struct pmu_jrec *r)
{
	const char *pos[SHAPE_FIELDS + 1];
	int valid, m = ss->mru;
	struct lmask mask, *mk = NULL;

	if (!ss->n)
		return NULL;
	if (ss->masks) {
		ss->masks(line, &mask);
		mk = &mask;
	}
	pos[0] = line;
	if (shape_match(&ss->s[m], line, end, nl, len, r, 0, pos, &valid, mk))
		return &ss->s[m];
	/* pos[0..valid] and r->f[0..valid) hold what m matched; a try of k
	 * keeps them for the fields k shares with m */
	for (int k = 0; k < ss->n; k++) {
		int from = ss->common[m][k] < valid ? ss->common[m][k] : valid, f2;

		if (k == m)
			continue;
		if (shape_match(&ss->s[k], line, end, nl, len, r, from, pos, &f2, mk)) {
			ss->mru = k;
			return &ss->s[k];
		}
		valid = from;
	}
	return NULL;
}

