/*
 * fuzz-perfrec: the perf ring-buffer reader and record decoder
 * (lib/perfrec.c) on arbitrary bytes.  The first byte picks the
 * read_format and where in the buffer the reader starts; the rest is the
 * buffer's content, as the kernel could have written it.  Every record
 * handed out must lie within what was written and have the size its
 * header says; a decoded string must end inside its record.
 */
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfrec.h"

#define PAGE 4096u
#define DS 4096u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned char *m;
	static struct pmu_perf_ring *g;
	struct perf_event_mmap_page *mp;
	uint64_t rf;
	size_t len, sz, total = 0;
	const void *x;

	if (size < 1)
		return 0;
	if (!m) {
		m = calloc(1, PAGE + DS);
		g = calloc(1, sizeof(*g));
		if (!m || !g)
			abort();
	}
	rf = (uint64_t)(data[0] & 0x1f);
	len = size - 1 > DS ? DS : size - 1;
	memset(m, 0, PAGE + DS);
	mp = (void *)m;
	mp->data_offset = PAGE;
	mp->data_tail = (uint64_t)(data[0] >> 5) * 512u + (1ull << 40);
	mp->data_head = mp->data_tail + len;
	for (size_t i = 0; i < len; i++)
		m[PAGE + (mp->data_tail + i) % DS] = data[1 + i];
	memset(g, 0, sizeof(*g));
	g->base = m;
	g->data_size = DS;
	pmu_perf_ring_begin(g);
	while ((x = pmu_perf_ring_next(g, &sz))) {
		struct pmu_perf_rec r;
		const char *why;
		struct perf_event_header h;

		memcpy(&h, x, sizeof(h));
		if (sz != h.size || sz < sizeof(h))
			abort();
		total += sz;
		if (total > len)
			abort();
		if (pmu_perf_decode(x, sz, rf, &r, &why) == 0 && r.str) {
			const char *lo = x, *hi = lo + sz;

			if (r.str < lo || r.str >= hi || !memchr(r.str, '\0', (size_t)(hi - r.str)))
				abort();
		}
	}
	pmu_perf_ring_done(g);
	if (mp->data_tail != mp->data_head - len + total)
		abort();
	/* the input as one record, too */
	{
		struct pmu_perf_rec r;
		const char *why;

		(void)pmu_perf_decode(data + 1, size - 1, rf, &r, &why);
	}
	return 0;
}
