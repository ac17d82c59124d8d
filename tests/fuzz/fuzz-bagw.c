/*
 * fuzz-bagw: differential fuzzing of pmu_bagw_quote() (lib/bagw.c), the
 * string escaper of the records pmurec builds in place, against what
 * jansson writes for the same text: json_dumps() of pmu_json_text(), the
 * way cohort records were written before (compact, invalid UTF-8 kept as
 * U+FFFD).  The input up to its first NUL is the text (C strings from the
 * system hold none); any difference, or a result longer than
 * PMU_BAGW_QUOTE_MAX, abort()s.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bagw.h"
#include "spec_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), *got, *want;
	size_t n, k;
	json_t *j;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	n = strlen(s);
	got = malloc(PMU_BAGW_QUOTE_MAX(n) + 1);
	j = pmu_json_text(s);
	want = j ? json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
	if (!got || !want) {
		fprintf(stderr, "fuzz-bagw: out of memory\n");
		abort();
	}
	k = pmu_bagw_quote(got, s, n);
	got[k] = '\0';
	if (k > PMU_BAGW_QUOTE_MAX(n) || strcmp(got, want)) {
		fprintf(stderr, "MISMATCH: pmu_bagw_quote gave %s, jansson %s\n", got, want);
		abort();
	}
	json_decref(j);
	free(want);
	free(got);
	free(s);
	return 0;
}
