/*
 * fuzz-perfdata: pmu_perfdata_scan() (lib/perfdata.c) on arbitrary files.
 * The validator runs it on a bundle's perf.data, which is whatever the
 * bundle's author put there: every offset is untrusted.
 *
 * The first input byte sets where a second reader fails (returns -1,
 * an I/O error): after data[0] * 97 bytes; the rest is the file.
 *
 * Rules checked (abort() on a violation):
 *   1. read whole, the result is 0 or PMU_ERR_CORRUPT, and a refusal says
 *      why (a non-empty, NUL-terminated reason).
 *   2. accepted  =>  every byte was read (size == the file's length), at
 *      least one attr, and the counted records add up: samples, mmaps,
 *      comms, forks, exits, throttles and unthrottles are at most records,
 *      records at most (data's bytes) / 8; the sample_type is the first
 *      attr's.
 *   3. refused   =>  size <= the file's length.
 *   4. with the failing reader: PMU_ERR_IO with a reason, unless the scan
 *      ended before the failure, and then the same result, reason and
 *      counts as the whole read.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "perfdata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

struct src {
	const uint8_t *p;
	size_t n, off;
	size_t fail_at; /* SIZE_MAX: never */
};

static long rd(void *ctx, void *buf, size_t n)
{
	struct src *s = ctx;
	size_t k = s->n - s->off;

	if (k > n)
		k = n;
	if (s->off + k > s->fail_at)
		return -1;
	memcpy(buf, s->p + s->off, k);
	s->off += k;
	return (long)k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct pmu_perfdata_stats a, b;
	char wa[256], wb[256];
	struct src s1, s2;
	uint8_t *file;
	size_t n;
	int ra, rb;

	if (len < 1)
		return 0;
	n = len - 1;
	/* an exact-size heap copy: ASan sees any read past the file */
	file = malloc(n ? n : 1);
	if (!file)
		return 0;
	memcpy(file, data + 1, n);

	s1 = (struct src){ file, n, 0, SIZE_MAX };
	memset(wa, 'x', sizeof(wa));
	ra = pmu_perfdata_scan(rd, &s1, &a, wa, sizeof(wa));
	if (ra != 0 && ra != PMU_ERR_CORRUPT)
		abort();
	if (ra && (!memchr(wa, 0, sizeof(wa)) || !wa[0]))
		abort();
	if (!ra) {
		if (a.size != n || a.nattrs < 1)
			abort();
		if (a.samples + a.mmaps + a.comms + a.forks + a.exits + a.throttles + a.unthrottles > a.records)
			abort();
		if (a.records > n / 8)
			abort();
		{
			uint64_t aoff, stype;

			memcpy(&aoff, file + 24, 8);
			memcpy(&stype, file + aoff + 24, 8);
			if (stype != a.sample_type)
				abort();
		}
	} else if (a.size > n) {
		abort();
	}

	s2 = (struct src){ file, n, 0, (size_t)data[0] * 97 };
	memset(wb, 'y', sizeof(wb));
	rb = pmu_perfdata_scan(rd, &s2, &b, wb, sizeof(wb));
	if (rb == PMU_ERR_IO) {
		if (!memchr(wb, 0, sizeof(wb)) || !wb[0] || n <= s2.fail_at)
			abort();
	} else if (rb != ra || memcmp(&a, &b, sizeof(a)) || (ra && strcmp(wa, wb))) {
		abort();
	}
	free(file);
	return 0;
}
