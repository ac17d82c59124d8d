#ifndef PMU_JSONL_H
#define PMU_JSONL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
	char *scratch;     /* unescaped strings live here */
	size_t scap;
};

void pmu_jrec_init(struct pmu_jrec *r);
void pmu_jrec_release(struct pmu_jrec *r);

/*
 * Parse line[0..len) (without its '\n') as one JSON object.  Returns 0, or
 * PMU_ERR_CORRUPT with *why (static) and *at (byte offset) describing the
 * syntax error, or PMU_ERR_NOMEM.  Field pointers stay valid until the next
 * call.  Duplicate member names are a syntax error here, as in jansson's
 * JSON_REJECT_DUPLICATES.
 */
int pmu_jrec_parse(struct pmu_jrec *r, const char *line, size_t len, const char **why, size_t *at);

const struct pmu_jfield *pmu_jrec_get(const struct pmu_jrec *r, const char *key);

/* Length of the valid UTF-8 sequence at p (lead byte >= 0x80) that ends by
 * end, or 0: no overlong form, surrogate or code point past U+10FFFF. */
size_t pmu_utf8_len(const unsigned char *p, const unsigned char *end);

#endif
