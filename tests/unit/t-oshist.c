/*
 * lib/oshist.c: section 23.4's log-linear buckets (every boundary of every
 * power of two, the last bucket), and the hist text reader.
 */
#include <stdint.h>
#include <string.h>

#include "oshist.h"
#include "tap.h"

static int parse(const char *s, unsigned *bs, uint64_t *ns, int max)
{
	size_t at = 0;
	int k, n = 0;

	while (n < max && (k = pmu_oshist_next(s, strlen(s), &at, &bs[n], &ns[n])) > 0)
		n++;
	return k < 0 ? -1 : n;
}

int main(void)
{
	uint64_t lo, hi, prev_hi = 0, ns[8];
	unsigned bs[8], bad = 0;

	ok(pmu_oshist_bucket(0) == 0 && pmu_oshist_bucket(15) == 15 && pmu_oshist_bucket(16) == 16,
	   "below 16 ns one bucket per ns; 16 is bucket 16");
	ok(pmu_oshist_bucket(8000) == 87 && pmu_oshist_bucket(8200) == 88 && pmu_oshist_bucket(40000000) == 185,
	   "8000 ns bucket 87, 8200 ns bucket 88, 40 ms bucket 185 (the spec's examples)");
	pmu_oshist_bounds(87, &lo, &hi);
	ok(lo == 7680 && hi == 8192, "bucket 87 is [7680, 8192)");
	ok(pmu_oshist_bucket((1ull << 41) - 1) == 311 && pmu_oshist_bucket(1ull << 41) == 311 &&
	   pmu_oshist_bucket(UINT64_MAX) == 311, "2^41 ns and more are in bucket 311, and so is just below it");
	pmu_oshist_bounds(311, &lo, &hi);
	ok(hi == UINT64_MAX && lo == (1ull << 40) + 7 * (1ull << 37), "bucket 311 begins at 2^40 + 7 * 2^37, no end");
	/* the buckets tile [0, inf): each begins where the previous ended, and
	 * its bounds map back to it */
	for (unsigned b = 0; b < PMU_OSHIST_BUCKETS; b++) {
		pmu_oshist_bounds(b, &lo, &hi);
		if (lo != prev_hi || pmu_oshist_bucket(lo) != b || (hi != UINT64_MAX && pmu_oshist_bucket(hi - 1) != b) ||
		    (hi != UINT64_MAX && b >= 16 && (hi - lo) * 8 > lo))
			bad++;
		prev_hi = hi;
	}
	ok(bad == 0, "312 buckets tile the durations, each at most 1/8 of its start wide (%u wrong)", bad);
	ok(parse("87:1 88:2", bs, ns, 8) == 2 && bs[0] == 87 && ns[0] == 1 && bs[1] == 88 && ns[1] == 2, "87:1 88:2");
	ok(parse("", bs, ns, 8) == 0, "an empty hist has no pairs");
	ok(parse("87:0", bs, ns, 8) < 0 && parse("312:1", bs, ns, 8) < 0 && parse("087:1", bs, ns, 8) < 0 &&
	   parse("87:1  88:2", bs, ns, 8) < 0 && parse("87:1 ", bs, ns, 8) < 0 && parse(" 87:1", bs, ns, 8) < 0 &&
	   parse("87:01", bs, ns, 8) < 0 && parse("87:-1", bs, ns, 8) < 0 && parse("87", bs, ns, 8) < 0 &&
	   parse("87:99999999999999999999", bs, ns, 8) < 0,
	   "refused: count 0, bucket 312, leading zeros, double or trailing or leading space, no count, overflow");
	return done_testing();
}
