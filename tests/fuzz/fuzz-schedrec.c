/*
 * fuzz-schedrec: pmu_sched_decode() (backends/linux/schedrec.c) on arbitrary
 * ring samples.  The sched collector's records reach user space through a
 * ring any holder of the map fd can write, so the decoder must never read
 * past the sample and never accept a record whose parts disagree.
 *
 * Rules checked (abort() on a violation):
 *   1. accepted  =>  len == h.size, seq != 0, a known kind of its exact
 *      size; off: a known state, its size the struct and its
 *      nchain (<= PMU_SCHED_CHAIN_MAX) frames, out <= wake <= back in,
 *      a preempted (R) interval without a wait; thread: only known flags,
 *      first <= first_on (when set) <= exit, and the five totals sum to
 *      exit - first exactly (the identity the thread records keep).
 *   2. accepted  =>  decoding the decoded bytes again accepts them and gives
 *      the same bytes (the decoder is a filter, not a transformer).
 *   3. refused   =>  PMU_ERR_CORRUPT with a detail that starts "sched record".
 *
 * The decoder is compiled into the harness (the generic fuzz rule links
 * lib/ only).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "linux/schedrec.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	union pmu_sched_rec r, again;
	/* an exact-size heap copy: ASan sees any read past the sample */
	uint8_t *buf = malloc(len ? len : 1);

	if (!buf)
		return 0;
	memcpy(buf, data, len);
	int rc = pmu_sched_decode(buf, len, &r);
	if (rc) {
		if (rc != PMU_ERR_CORRUPT || strncmp(pmu_error_detail(), "sched record", 12))
			abort();
		free(buf);
		return 0;
	}
	if (r.h.size != len || r.h.seq == 0)
		abort();
	switch (r.h.kind) {
	case PMU_SCHED_REC_OFF:
		if (len != sizeof(r.off) + 8 * (size_t)r.off.nchain || r.off.nchain > PMU_SCHED_CHAIN_MAX)
			abort();
		if (r.off.state < PMU_SCHED_S || r.off.state > PMU_SCHED_OTHER || r.off.out_ns > r.off.wake_ns ||
		    r.off.wake_ns > r.h.time_ns || (r.off.state == PMU_SCHED_R && r.off.wake_ns != r.off.out_ns))
			abort();
		break;
	case PMU_SCHED_REC_THREAD: {
		const struct pmu_sched_thread *t = &r.thread;
		unsigned __int128 sum = (unsigned __int128)t->on_ns + t->runq_ns + t->sleep_ns + t->blocked_ns +
					t->other_ns;

		if (len != sizeof(*t) || (t->flags & ~(uint32_t)PMU_SCHED_BORN) || t->first_ns > t->h.time_ns ||
		    sum != t->h.time_ns - t->first_ns ||
		    (t->first_on_ns && (t->first_on_ns < t->first_ns || t->first_on_ns > t->h.time_ns)))
			abort();
		break;
	}
	default:
		abort();
	}
	if (pmu_sched_decode(&r, len, &again) || memcmp(&r, &again, len))
		abort();
	free(buf);
	return 0;
}
