#ifndef PMU_JSONL_H
#define PMU_JSONL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * A strict RFC 8259 parser for one JSON Lines record whose members are
 * scalars, the shape of every stream record in the spec.  Why not jansson:
 * it builds a tree of allocations per record and reads ~45 MB/s on event
 * lines, while validation must keep pace with SHA-256 (~1 GB/s).  Nested
 * arrays and objects are still parsed for syntax, and reported as
 * PMU_JV_NESTED so the schema check can refuse them.  The fuzz harness
 * tests/fuzz/fuzz-jsonl.c compares its verdicts with jansson's.
 */

enum pmu_jv { PMU_JV_STR, PMU_JV_INT, PMU_JV_REAL, PMU_JV_BOOL, PMU_JV_NULL, PMU_JV_NESTED };

#define PMU_JREC_MAX 32

struct pmu_jfield {
	const char *key;   /* unescaped, not NUL-terminated */
	size_t klen;
	enum pmu_jv type;
	const char *s;     /* PMU_JV_STR: unescaped value */
	size_t slen;
	int64_t i;         /* PMU_JV_INT */
	bool b;            /* PMU_JV_BOOL */
	bool overflow;     /* PMU_JV_INT that does not fit int64 */
};

/* Embedded: pmu_jrec_init()/pmu_jrec_release(). */
struct pmu_jrec {
	struct pmu_jfield f[PMU_JREC_MAX];
	int n;
	bool too_many;     /* more than PMU_JREC_MAX members (all still syntax-checked) */
	const void *owner; /* NULL after a parse; a user that fills the record
			    * itself may tag it (the validator's shapes) */
	char *scratch;     /* unescaped strings live here */
	size_t scap;
};

void pmu_jrec_init(struct pmu_jrec *r);
void pmu_jrec_release(struct pmu_jrec *r);

/*
 * Parse line[0..len) (without its '\n') as one JSON object.  Returns 0, or
 * PMU_ERR_CORRUPT with *why (static) and *at (byte offset) describing the
 * syntax error, or PMU_ERR_NOMEM.  Field pointers stay valid until the next
 * call and while line[] is unchanged: keys and strings point into line (a
 * record in the compact form pmu writers emit) or into the record's scratch
 * (unescaped).  Duplicate member names are a syntax error here, as in
 * jansson's JSON_REJECT_DUPLICATES.
 */
int pmu_jrec_parse(struct pmu_jrec *r, const char *line, size_t len, const char **why, size_t *at);

const struct pmu_jfield *pmu_jrec_get(const struct pmu_jrec *r, const char *key);

/*
 * A PMU_JV_NESTED member's s[0..slen) is its raw JSON text, in the line.
 * pmu_json_strarr() reads such text (untrusted: every byte is checked) as
 * an array of strings: 0 with *n its strings and *bytes the sum of their
 * unescaped UTF-8 lengths, each plus one (a NUL); PMU_ERR_CORRUPT when it
 * is not an array of strings, PMU_ERR_NOMEM.
 */
int pmu_json_strarr(const char *raw, size_t len, size_t *n, size_t *bytes);

/* 1 for a byte that a string may hold unescaped and that needs no UTF-8
 * check: printable ASCII other than '"' and '\\'; 0 for every other. */
extern const unsigned char pmu_json_plain[256];

/* Eight bytes at p as a little-endian word (the first byte lowest), the
 * order the SWAR scans below count in. */
static inline uint64_t pmu_load_le64(const char *p)
{
	uint64_t x;

	memcpy(&x, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	x = __builtin_bswap64(x);
#endif
	return x;
}

static inline uint64_t pow10_u64(unsigned k)
{
	static const uint64_t p[] = { 1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000 };

	return p[k];
}

/* The value of eight ASCII digits loaded little-endian into x (the first
 * digit in the lowest byte; SWAR: three multiplies).  x must hold digits. */
static inline uint64_t pmu_eight_digits(uint64_t x)
{
	x -= 0x3030303030303030ull;
	/* little endian: the first digit is the lowest byte */
	x = x * 10 + (x >> 8);                              /* pairs, in bytes 0, 2, 4, 6 */
	x = ((x & 0x000000ff000000ffull) * (100 + (1000000ull << 32)) +
	     ((x >> 16) & 0x000000ff000000ffull) * (1 + (10000ull << 32))) >> 32;
	return x;
}

/* The number of leading ASCII digits of the 8 bytes in x (a word from
 * pmu_load_le64()).  A byte of y is 0 exactly for a digit, up to the first
 * non-digit (a carry can only spoil the bytes after it). */
static inline unsigned pmu_digits_in(uint64_t x)
{
	uint64_t y = ((x & 0xf0f0f0f0f0f0f0f0ull) ^ 0x3030303030303030ull) |
		     (((x + 0x0606060606060606ull) & 0xf0f0f0f0f0f0f0f0ull) ^ 0x3030303030303030ull);
	uint64_t nd = (((y & 0x7f7f7f7f7f7f7f7full) + 0x7f7f7f7f7f7f7f7full) | y) & 0x8080808080808080ull;

	return nd ? (unsigned)__builtin_ctzll(nd) / 8 : 8;
}

/* The value of the first k (1 to 8) digits of x, k = pmu_digits_in(x). */
static inline uint64_t pmu_digits_value(uint64_t x, unsigned k)
{
	/* the k digits to the top, '0's below */
	return pmu_eight_digits(k < 8 ? x << (8 * (8 - k)) | 0x3030303030303030ull >> (8 * k) : x);
}

/* The number of ASCII digits at p (up to end), and in *v their value when
 * there are at most 16 (8 at a time, where 8 bytes can be read; the value
 * of a longer run is not given).  Leading zeros are the caller's concern. */
static inline size_t pmu_digits(const char *p, const char *end, uint64_t *v)
{
	const char *d = p;
	uint64_t acc = 0;

	while (end - p >= 8 && p - d < 16) {
		uint64_t x = pmu_load_le64(p);
		unsigned k = pmu_digits_in(x);

		if (k == 0)
			break;
		acc = acc * pow10_u64(k) + pmu_digits_value(x, k);
		p += k;
		if (k < 8) {
			*v = acc;
			return (size_t)(p - d);
		}
	}
	while (p < end && *p >= '0' && *p <= '9')
		acc = acc * 10 + (unsigned)(*p++ - '0');
	*v = acc;
	return (size_t)(p - d);
}

/* Length of the valid UTF-8 sequence at p (lead byte >= 0x80) that ends by
 * end, or 0: no overlong form, surrogate or code point past U+10FFFF. */
size_t pmu_utf8_len(const unsigned char *p, const unsigned char *end);

#endif
