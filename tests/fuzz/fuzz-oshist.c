/*
 * fuzz-oshist: the syscall-stats histogram (lib/oshist.h, section 23.4 of
 * bundle-spec/README.md) on untrusted text.  The input is a hist string:
 * pmu_oshist_next() must stay inside it and accept only what it promises
 * (buckets below PMU_OSHIST_BUCKETS, counts >= 1, the position rising); the
 * input's first 8 bytes, as a duration, must fall inside the bounds of its
 * own bucket.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oshist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	size_t at = 0, prev = 0;
	unsigned b;
	uint64_t n, d = 0, lo, hi;
	int k;

	while ((k = pmu_oshist_next(s, size, &at, &b, &n)) > 0) {
		if (b >= PMU_OSHIST_BUCKETS || n == 0 || at > size || (prev && at <= prev))
			abort();
		prev = at;
	}
	if (k == 0 && at < size && size)
		abort(); /* the end is only at the end */
	memcpy(&d, data, size < 8 ? size : 8);
	b = pmu_oshist_bucket(d);
	pmu_oshist_bounds(b, &lo, &hi);
	if (b >= PMU_OSHIST_BUCKETS || d < lo || (hi != UINT64_MAX && d >= hi))
		abort();
	return 0;
}
