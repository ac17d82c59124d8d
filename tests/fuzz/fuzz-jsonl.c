/*
 * fuzz-jsonl: differential fuzzing of pmu_jrec_parse() (lib/jsonl.c)
 * against jansson's json_loadb(..., JSON_REJECT_DUPLICATES).
 *
 * The input is split on '\n'; every line is given to both parsers (and, as
 * a last record, the whole input too, so that '\n' is also seen as
 * whitespace inside a record).  Any disagreement that is not one of the
 * known differences below abort()s.
 *
 * Rules checked:
 *   1. jansson accepts an object  =>  pmu accepts it, with the same member
 *      count (capped at PMU_JREC_MAX, too_many set iff more members), the
 *      same member names, and for each member the corresponding type:
 *      string (byte-exact value), integer (exact value, never overflow),
 *      true/false, null, real -> PMU_JV_REAL, object/array -> PMU_JV_NESTED.
 *   2. jansson accepts a non-object (an array: json_loadb without
 *      JSON_DECODE_ANY takes '{' or '[')  =>  pmu rejects it with
 *      "record is not a JSON object".
 *   3. pmu rejects  =>  jansson rejects (rule 1 and 2 in the other
 *      direction), except for the known difference (a) below.
 *   4. jansson rejects but pmu accepts  =>  the jansson error must be one of
 *      the known differences (b)-(d), and pmu's result must show why.
 *
 * Known, intended differences (pmu is the validator's fast path: it only
 * needs exact syntax for records, whose members are scalars; a record with
 * nested or real members is refused by the schema check anyway):
 *   (a) Nesting depth: pmu refuses arrays/objects nested more than 64
 *       levels ("nesting too deep"); jansson allows 2048.
 *   (b) Duplicate member names inside NESTED objects: jansson's
 *       JSON_REJECT_DUPLICATES applies at every level, pmu checks nested
 *       values for syntax only.  Likewise duplicates among the members past
 *       PMU_JREC_MAX (32) are not detected by pmu; it sets too_many, which
 *       the schema check refuses.  So: jansson json_error_duplicate_key and
 *       pmu accepts  =>  pmu has a NESTED member or too_many.
 *   (c) Numeric overflow: jansson refuses integers outside int64 ("too big
 *       integer") and reals that overflow a double (1e999).  Both are valid
 *       JSON; pmu accepts them: a top-level integer has overflow set, a real
 *       is PMU_JV_REAL, and inside nested values nothing is recorded.  So:
 *       jansson json_error_numeric_overflow and pmu accepts  =>  pmu has an
 *       overflowed INT, a REAL, a NESTED member, or too_many (the overflow
 *       may sit in a member past the cap).
 *   (d) pmu takes a raw NUL byte anywhere as a syntax error, as RFC 8259
 *       does.  So does jansson, except for (e).
 *   (e) jansson drops ONE NUL byte that directly follows a number or a
 *       true/false/null token (its lexer "ungets" the NUL, and its stream
 *       then takes the empty buffer as used up): {"a":1\0} is accepted.  pmu
 *       rejects it.  When jansson accepts, pmu rejects at a NUL byte after a
 *       digit, 'e' or 'l', the line is compared again with that byte removed.
 *       (The validator refuses NUL bytes in documents and stream headers
 *       before they reach jansson, for this reason.)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "error.h"
#include "jsonl.h"

static struct pmu_jrec rec;
static int rec_init;

__attribute__((noreturn)) static void mismatch(const char *what, const char *line, size_t len)
{
	fprintf(stderr, "fuzz-jsonl: MISMATCH: %s\nline (%zu bytes): ", what, len);
	fwrite(line, 1, len, stderr);
	fputc('\n', stderr);
	abort();
}

static bool pmu_has(const struct pmu_jrec *r, bool ovf_int, bool real, bool nested)
{
	for (int i = 0; i < r->n; i++) {
		const struct pmu_jfield *f = &r->f[i];

		if ((ovf_int && f->type == PMU_JV_INT && f->overflow) || (real && f->type == PMU_JV_REAL) ||
		    (nested && f->type == PMU_JV_NESTED))
			return true;
	}
	return false;
}

static void compare_object(const struct pmu_jrec *r, json_t *obj, const char *line, size_t len)
{
	size_t n = json_object_size(obj);
	char key[4096 + 1];

	if (n > PMU_JREC_MAX ? (r->n != PMU_JREC_MAX || !r->too_many) : ((size_t)r->n != n || r->too_many))
		mismatch("member count differs", line, len);
	for (int i = 0; i < r->n; i++) {
		const struct pmu_jfield *f = &r->f[i];
		json_t *jv;

		if (f->klen >= sizeof(key))
			mismatch("key longer than the line", line, len);
		if (memchr(f->key, '\0', f->klen))
			mismatch("pmu key holds a NUL byte", line, len);
		jv = json_object_getn(obj, f->key, f->klen);
		if (!jv)
			mismatch("pmu member name not in jansson's object", line, len);
		if (pmu_jrec_get(r, (memcpy(key, f->key, f->klen), key[f->klen] = '\0', key)) != f)
			mismatch("pmu_jrec_get does not find the member", line, len);
		switch (json_typeof(jv)) {
		case JSON_STRING:
			if (f->type != PMU_JV_STR || f->slen != json_string_length(jv) ||
			    memcmp(f->s, json_string_value(jv), f->slen))
				mismatch("string member differs", line, len);
			break;
		case JSON_INTEGER:
			if (f->type != PMU_JV_INT || f->overflow || f->i != (int64_t)json_integer_value(jv))
				mismatch("integer member differs", line, len);
			break;
		case JSON_REAL:
			if (f->type != PMU_JV_REAL)
				mismatch("real member not PMU_JV_REAL", line, len);
			break;
		case JSON_TRUE:
		case JSON_FALSE:
			if (f->type != PMU_JV_BOOL || f->b != json_is_true(jv))
				mismatch("boolean member differs", line, len);
			break;
		case JSON_NULL:
			if (f->type != PMU_JV_NULL)
				mismatch("null member differs", line, len);
			break;
		case JSON_OBJECT:
		case JSON_ARRAY:
			if (f->type != PMU_JV_NESTED)
				mismatch("nested member not PMU_JV_NESTED", line, len);
			break;
		}
	}
}

static void one(const char *line, size_t len)
{
	json_error_t je;
	json_t *j = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
	const char *why = NULL;
	size_t at = 0;
	int err = pmu_jrec_parse(&rec, line, len, &why, &at);

	if (err == PMU_ERR_NOMEM) {
		json_decref(j);
		return;
	}
	if (err && err != PMU_ERR_CORRUPT)
		mismatch("pmu_jrec_parse returned an unexpected error", line, len);
	if (err && (!why || at > len))
		mismatch("pmu rejected without a reason or with a bad offset", line, len);
	if (j) {
		if (!json_is_object(j)) {
			if (!err || strcmp(why, "record is not a JSON object"))
				mismatch("jansson accepts a non-object, pmu does not say 'not a JSON object'",
					 line, len);
		} else if (err) {
			if (at < len && line[at] == '\0' && at > 0 && strchr("0123456789el", line[at - 1])) {
				/* (e): compare again without the NUL jansson dropped */
				char *c = malloc(len);

				json_decref(j);
				if (!c)
					return;
				memcpy(c, line, at);
				memcpy(c + at, line + at + 1, len - at - 1);
				one(c, len - 1);
				free(c);
				return;
			}
			if (strcmp(why, "nesting too deep")) /* (a) */
				mismatch("jansson accepts an object, pmu rejects it", line, len);
		} else {
			compare_object(&rec, j, line, len);
		}
		json_decref(j);
		return;
	}
	if (err)
		return; /* both reject */
	switch (json_error_code(&je)) {
	case json_error_duplicate_key: /* (b) */
		if (!rec.too_many && !pmu_has(&rec, false, false, true))
			mismatch("jansson finds a duplicate key, pmu accepts a flat record", line, len);
		break;
	case json_error_numeric_overflow: /* (c) */
		if (!rec.too_many && !pmu_has(&rec, true, true, true))
			mismatch("jansson finds a numeric overflow, pmu sees none", line, len);
		break;
	case json_error_out_of_memory:
		break;
	default:
		fprintf(stderr, "jansson: %s (code %d, column %d)\n", je.text, (int)json_error_code(&je),
			je.column);
		mismatch("jansson rejects, pmu accepts", line, len);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;

	if (!rec_init) {
		pmu_jrec_init(&rec);
		rec_init = 1;
	}
	while (p <= end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		/* a copy of exactly len bytes, so ASan sees any overread */
		char *line = malloc(len ? len : 1);

		if (!line)
			return 0;
		memcpy(line, p, len);
		one(line, len);
		free(line);
		if (!nl)
			break;
		p = nl + 1;
	}
	if (memchr(data, '\n', size)) {
		char *all = malloc(size);

		if (all) {
			memcpy(all, data, size);
			one(all, size);
			free(all);
		}
	}
	return 0;
}
