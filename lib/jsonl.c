#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "jsonl.h"

struct pj {
	const char *p, *end, *start;
	const char *why;
	char *out;   /* next free byte of scratch */
};

void pmu_jrec_init(struct pmu_jrec *r)
{
	memset(r, 0, sizeof(*r));
}

void pmu_jrec_release(struct pmu_jrec *r)
{
	free(r->scratch);
	pmu_jrec_init(r);
}

static void ws(struct pj *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static int fail(struct pj *j, const char *why)
{
	j->why = why;
	return -1;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int hex4(struct pj *j, unsigned *v)
{
	*v = 0;
	if (j->end - j->p < 4)
		return fail(j, "truncated \\u escape");
	for (int k = 0; k < 4; k++) {
		int h = hexval(j->p[k]);

		if (h < 0)
			return fail(j, "bad \\u escape");
		*v = *v << 4 | (unsigned)h;
	}
	j->p += 4;
	return 0;
}

static char *put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		*o++ = (char)cp;
	} else if (cp < 0x800) {
		*o++ = (char)(0xc0 | cp >> 6);
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*o++ = (char)(0xe0 | cp >> 12);
		*o++ = (char)(0x80 | (cp >> 6 & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*o++ = (char)(0xf0 | cp >> 18);
		*o++ = (char)(0x80 | (cp >> 12 & 0x3f));
		*o++ = (char)(0x80 | (cp >> 6 & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	}
	return o;
}

size_t pmu_utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned c = p[0];
	size_t n;
	unsigned cp;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	if ((size_t)(end - p) < n)
		return 0;
	for (size_t k = 1; k < n; k++) {
		if ((p[k] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[k] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

/*
 * String starting after the opening quote.  With store, the unescaped bytes
 * are written to j->out (never longer than the source) and *s and *slen set.
 */
static int string(struct pj *j, bool store, const char **s, size_t *slen)
{
	const char *run = j->p;
	char *o = j->out;

	for (;;) {
		unsigned char c;

		if (j->p >= j->end)
			return fail(j, "unterminated string");
		c = (unsigned char)*j->p;
		if (c == '"')
			break;
		if (c < 0x20)
			return fail(j, "control character in string");
		if (c == '\\') {
			unsigned cp;

			j->p++;
			if (j->p >= j->end)
				return fail(j, "unterminated escape");
			switch (*j->p++) {
			case '"': cp = '"'; break;
			case '\\': cp = '\\'; break;
			case '/': cp = '/'; break;
			case 'b': cp = '\b'; break;
			case 'f': cp = '\f'; break;
			case 'n': cp = '\n'; break;
			case 'r': cp = '\r'; break;
			case 't': cp = '\t'; break;
			case 'u':
				if (hex4(j, &cp))
					return -1;
				if (cp >= 0xdc00 && cp <= 0xdfff)
					return fail(j, "lone low surrogate");
				if (cp >= 0xd800 && cp <= 0xdbff) {
					unsigned lo;

					if (j->end - j->p < 2 || j->p[0] != '\\' || j->p[1] != 'u')
						return fail(j, "lone high surrogate");
					j->p += 2;
					if (hex4(j, &lo))
						return -1;
					if (lo < 0xdc00 || lo > 0xdfff)
						return fail(j, "bad surrogate pair");
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				}
				if (cp == 0)
					return fail(j, "\\u0000 in string");
				break;
			default:
				return fail(j, "bad escape");
			}
			if (store)
				o = put_utf8(o, cp);
			continue;
		}
		if (c < 0x80) {
			/* a run of plain ASCII, up to the next quote, backslash,
			 * control or non-ASCII byte */
			const char *q = j->p + 1;

			while (q < j->end && (unsigned char)*q >= 0x20 && (unsigned char)*q < 0x80 &&
			       *q != '"' && *q != '\\')
				q++;
			if (store) {
				memcpy(o, j->p, (size_t)(q - j->p));
				o += q - j->p;
			}
			j->p = q;
			continue;
		}
		size_t n = pmu_utf8_len((const unsigned char *)j->p, (const unsigned char *)j->end);
		if (!n)
			return fail(j, "invalid UTF-8");
		if (store) {
			memcpy(o, j->p, n);
			o += n;
		}
		j->p += n;
	}
	(void)run;
	if (store) {
		*s = j->out;
		*slen = (size_t)(o - j->out);
		j->out = o;
	}
	j->p++; /* closing quote */
	return 0;
}

static int number(struct pj *j, struct pmu_jfield *f)
{
	const char *p = j->p;
	bool neg = false, real = false, ovf = false;
	uint64_t v = 0;

	if (p < j->end && *p == '-')
		neg = true, p++;
	if (p >= j->end || *p < '0' || *p > '9')
		return fail(j, "bad number");
	if (*p == '0') {
		p++;
	} else {
		for (; p < j->end && *p >= '0' && *p <= '9'; p++) {
			unsigned d = (unsigned)(*p - '0');

			if (v > (UINT64_MAX - d) / 10)
				ovf = true;
			else
				v = v * 10 + d;
		}
	}
	if (p < j->end && *p == '.') {
		real = true;
		p++;
		if (p >= j->end || *p < '0' || *p > '9')
			return fail(j, "bad fraction");
		while (p < j->end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < j->end && (*p == 'e' || *p == 'E')) {
		real = true;
		p++;
		if (p < j->end && (*p == '+' || *p == '-'))
			p++;
		if (p >= j->end || *p < '0' || *p > '9')
			return fail(j, "bad exponent");
		while (p < j->end && *p >= '0' && *p <= '9')
			p++;
	}
	j->p = p;
	if (real) {
		f->type = PMU_JV_REAL;
		return 0;
	}
	f->type = PMU_JV_INT;
	if (neg) {
		ovf = ovf || v > (uint64_t)INT64_MAX + 1;
		f->i = ovf ? 0 : (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v);
	} else {
		ovf = ovf || v > (uint64_t)INT64_MAX;
		f->i = ovf ? 0 : (int64_t)v;
	}
	f->overflow = ovf;
	return 0;
}

static int literal(struct pj *j, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n))
		return fail(j, "bad literal");
	j->p += n;
	return 0;
}

static int value(struct pj *j, struct pmu_jfield *f, int depth);

static int nested(struct pj *j, int depth)
{
	struct pmu_jfield dummy;
	char open = *j->p++;
	char close = open == '{' ? '}' : ']';

	if (depth > 64)
		return fail(j, "nesting too deep");
	ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		return 0;
	}
	for (;;) {
		ws(j);
		if (open == '{') {
			const char *s;
			size_t sl;

			if (j->p >= j->end || *j->p != '"')
				return fail(j, "expected member name");
			j->p++;
			if (string(j, false, &s, &sl))
				return -1;
			ws(j);
			if (j->p >= j->end || *j->p != ':')
				return fail(j, "expected ':'");
			j->p++;
		}
		ws(j);
		if (value(j, &dummy, depth + 1))
			return -1;
		ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == close) {
			j->p++;
			return 0;
		}
		return fail(j, open == '{' ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

/* Nested objects are checked for syntax only; jansson's duplicate-key rule
 * is enforced at the top level, where records live. */
static int value(struct pj *j, struct pmu_jfield *f, int depth)
{
	if (j->p >= j->end)
		return fail(j, "expected value");
	switch (*j->p) {
	case '"':
		j->p++;
		f->type = PMU_JV_STR;
		return string(j, depth == 0, &f->s, &f->slen);
	case '{':
	case '[': {
		const char *at = j->p;
		int err;

		f->type = PMU_JV_NESTED;
		err = nested(j, depth);
		/* the raw text, for pmu_json_strarr() */
		f->s = at;
		f->slen = (size_t)(j->p - at);
		return err;
	}
	case 't':
		f->type = PMU_JV_BOOL, f->b = true;
		return literal(j, "true");
	case 'f':
		f->type = PMU_JV_BOOL, f->b = false;
		return literal(j, "false");
	case 'n':
		f->type = PMU_JV_NULL;
		return literal(j, "null");
	default:
		return number(j, f);
	}
}

static int parse_general(struct pmu_jrec *r, const char *line, size_t len, const char **why, size_t *at);

const unsigned char pmu_json_plain[256] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* 0x80 and above: 0 */
};

/*
 * The fast path: the compact form every pmu writer emits.  It accepts a
 * strict subset of what parse_general() accepts (no whitespace, no escapes,
 * no non-ASCII bytes, no nesting, no fractions or exponents, integers of at
 * most 16 digits) and fills the record exactly as parse_general() would,
 * with strings pointing into the line.  Anything else returns false, and
 * parse_general() starts over: it alone gives verdicts and error messages.
 */
static inline bool plain_byte(unsigned char c)
{
	return pmu_json_plain[c];
}

static bool parse_compact(struct pmu_jrec *r, const char *line, size_t len)
{
	const unsigned char *p = (const unsigned char *)line, *end = p + len;
	uint64_t seen = 0; /* a bloom filter of keys, by length and first byte */

	r->n = 0;
	r->too_many = false;
	r->owner = NULL;
	if (len < 2 || *p != '{' || end[-1] != '}')
		return false;
	p++;
	if (*p == '}')
		return p + 1 == end;
	for (;;) {
		struct pmu_jfield *f;
		const unsigned char *k, *s;
		size_t kl;
		unsigned bit;

		if (r->n == PMU_JREC_MAX || *p != '"')
			return false;
		k = ++p;
		while (p < end && plain_byte(*p))
			p++;
		if (p + 1 >= end || *p != '"' || p[1] != ':')
			return false;
		kl = (size_t)(p - k);
		p += 2;
		bit = (unsigned)((kl * 31 + (kl ? k[0] : 0)) & 63);
		if (seen >> bit & 1) {
			for (int i = 0; i < r->n; i++)
				if (r->f[i].klen == kl && !memcmp(r->f[i].key, k, kl))
					return false; /* duplicate: parse_general() says so */
		}
		seen |= 1ull << bit;
		f = &r->f[r->n];
		f->key = (const char *)k;
		f->klen = kl;
		f->s = NULL;
		f->slen = 0;
		f->i = 0;
		f->b = false;
		f->overflow = false;
		if (p >= end)
			return false;
		switch (*p) {
		case '"':
			s = ++p;
			while (p < end && plain_byte(*p))
				p++;
			if (p >= end || *p != '"')
				return false;
			f->type = PMU_JV_STR;
			f->s = (const char *)s;
			f->slen = (size_t)(p - s);
			p++;
			break;
		case 't':
			if (end - p < 4 || memcmp(p, "true", 4))
				return false;
			f->type = PMU_JV_BOOL;
			f->b = true;
			p += 4;
			break;
		case 'f':
			if (end - p < 5 || memcmp(p, "false", 5))
				return false;
			f->type = PMU_JV_BOOL;
			p += 5;
			break;
		case 'n':
			if (end - p < 4 || memcmp(p, "null", 4))
				return false;
			f->type = PMU_JV_NULL;
			p += 4;
			break;
		default: {
			bool neg = *p == '-';
			const unsigned char *d;
			uint64_t v;
			size_t nd;

			p += neg;
			d = p;
			nd = pmu_digits((const char *)p, (const char *)end, &v);
			p += nd;
			/* no digits, a leading zero, 17 digits or more, a
			 * fraction or an exponent: the general parser */
			if (nd == 0 || (*d == '0' && nd > 1) || nd > 16 ||
			    (p < end && (*p == '.' || *p == 'e' || *p == 'E')))
				return false;
			f->type = PMU_JV_INT;
			f->i = neg ? -(int64_t)v : (int64_t)v;
			break;
		}
		}
		r->n++;
		if (p >= end)
			return false;
		if (*p == ',') {
			p++;
			continue;
		}
		return *p == '}' && p + 1 == end;
	}
}

int pmu_jrec_parse(struct pmu_jrec *r, const char *line, size_t len, const char **why, size_t *at)
{
	if (parse_compact(r, line, len))
		return 0;
	return parse_general(r, line, len, why, at);
}

static int parse_general(struct pmu_jrec *r, const char *line, size_t len, const char **why, size_t *at)
{
	struct pj j = { line, line + len, line, NULL, NULL };
	struct pmu_jfield spare;

	r->n = 0;
	r->too_many = false;
	r->owner = NULL;
	if (r->scap < len + 1) {
		char *s = realloc(r->scratch, len + 1);

		if (!s)
			return pmu_error(PMU_ERR_NOMEM, "out of memory");
		r->scratch = s;
		r->scap = len + 1;
	}
	j.out = r->scratch;
	ws(&j);
	if (j.p >= j.end || *j.p != '{') {
		fail(&j, "record is not a JSON object");
		goto bad;
	}
	j.p++;
	ws(&j);
	if (j.p < j.end && *j.p == '}') {
		j.p++;
		goto done;
	}
	for (;;) {
		struct pmu_jfield *f = r->n < PMU_JREC_MAX ? &r->f[r->n] : &spare;
		const char *k;
		size_t kl;

		memset(f, 0, sizeof(*f));
		ws(&j);
		if (j.p >= j.end || *j.p != '"') {
			fail(&j, "expected member name");
			goto bad;
		}
		j.p++;
		if (string(&j, true, &k, &kl))
			goto bad;
		for (int i = 0; i < r->n; i++)
			if (r->f[i].klen == kl && (kl == 0 || r->f[i].key[0] == k[0]) &&
			    !memcmp(r->f[i].key, k, kl)) {
				fail(&j, "duplicate member name");
				goto bad;
			}
		f->key = k;
		f->klen = kl;
		ws(&j);
		if (j.p >= j.end || *j.p != ':') {
			fail(&j, "expected ':'");
			goto bad;
		}
		j.p++;
		ws(&j);
		if (value(&j, f, 0))
			goto bad;
		if (f == &spare)
			r->too_many = true;
		else
			r->n++;
		ws(&j);
		if (j.p < j.end && *j.p == ',') {
			j.p++;
			continue;
		}
		if (j.p < j.end && *j.p == '}') {
			j.p++;
			break;
		}
		fail(&j, "expected ',' or '}'");
		goto bad;
	}
done:
	ws(&j);
	if (j.p != j.end) {
		fail(&j, "trailing characters after the object");
		goto bad;
	}
	return 0;
bad:
	*why = j.why;
	*at = (size_t)(j.p - j.start);
	return PMU_ERR_CORRUPT;
}

const struct pmu_jfield *pmu_jrec_get(const struct pmu_jrec *r, const char *key)
{
	size_t kl = strlen(key);

	for (int i = 0; i < r->n; i++)
		if (r->f[i].klen == kl && (kl == 0 || r->f[i].key[0] == key[0]) &&
		    !memcmp(r->f[i].key, key, kl))
			return &r->f[i];
	return NULL;
}

int pmu_json_strarr(const char *raw, size_t len, size_t *n, size_t *bytes)
{
	/* unescaped strings are never longer than their source */
	char *buf = malloc(len + 1);
	struct pj j = { raw, raw + len, raw, NULL, buf };
	int err = PMU_ERR_CORRUPT;

	*n = 0;
	*bytes = 0;
	if (!buf)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	ws(&j);
	if (j.p >= j.end || *j.p++ != '[')
		goto out;
	ws(&j);
	if (j.p < j.end && *j.p == ']') {
		j.p++;
		goto end;
	}
	for (;;) {
		const char *s;
		size_t sl;

		ws(&j);
		if (j.p >= j.end || *j.p != '"')
			goto out;
		j.p++;
		j.out = buf;
		if (string(&j, true, &s, &sl))
			goto out;
		(*n)++;
		*bytes += sl + 1;
		ws(&j);
		if (j.p < j.end && *j.p == ',') {
			j.p++;
			continue;
		}
		if (j.p < j.end && *j.p == ']') {
			j.p++;
			break;
		}
		goto out;
	}
end:
	ws(&j);
	if (j.p == j.end)
		err = 0;
out:
	free(buf);
	return err ? pmu_error(PMU_ERR_CORRUPT, "not an array of strings") : 0;
}
