/*
 * Decoding of the sched collector's ring records (schedrec.h).  The sample
 * length, the header's size and the kind's struct must agree exactly (an
 * off record is either the bare struct, nchain 0, or the struct with all
 * its chain slots, nchain 1..PMU_SCHED_CHAIN_MAX); a zero seq, an unknown
 * state or flag, times out of order (out <= wake <= back in; first <= exit)
 * and totals that do not sum to the thread's observed span are all
 * PMU_ERR_CORRUPT.
 */
#include <stdbool.h>
#include <string.h>

#include "error.h"
#include "linux/schedrec.h"

static int bad(const char *what, uint64_t seq)
{
	return pmu_error(PMU_ERR_CORRUPT, "sched record seq %llu: %s", (unsigned long long)seq, what);
}

const char *pmu_sched_state_name(unsigned state)
{
	switch (state) {
	case PMU_SCHED_S: return "S";
	case PMU_SCHED_D: return "D";
	case PMU_SCHED_R: return "R";
	default: return "other";
	}
}

/* a + b without wrapping past UINT64_MAX: false when it would */
static bool add(uint64_t *sum, uint64_t v)
{
	if (*sum > UINT64_MAX - v)
		return false;
	*sum += v;
	return true;
}

int pmu_sched_decode(const void *data, size_t len, union pmu_sched_rec *out)
{
	struct pmu_sched_hdr h;

	if (!data || len < sizeof(h))
		return pmu_error(PMU_ERR_CORRUPT, "sched record of %zu bytes is shorter than its header", len);
	memcpy(&h, data, sizeof(h));
	if (h.seq == 0)
		return bad("seq 0", h.seq);
	if (h.size != len)
		return bad("size does not match the sample", h.seq);
	switch (h.kind) {
	case PMU_SCHED_REC_OFF: {
		struct pmu_sched_off *r = &out->off;

		if (len < sizeof(struct pmu_sched_off) || len > sizeof(struct pmu_sched_off_chain) ||
		    (len - sizeof(struct pmu_sched_off)) % 8)
			return bad("size does not match its kind", h.seq);
		memcpy(out, data, len);
		if (len != sizeof(struct pmu_sched_off) + 8 * (size_t)r->nchain)
			return bad("chain length does not match the size", h.seq);
		if (r->state < PMU_SCHED_S || r->state > PMU_SCHED_OTHER)
			return bad("unknown state", h.seq);
		if (!r->tgid || !r->tid)
			return bad("pid 0", h.seq);
		if (!(r->out_ns <= r->wake_ns && r->wake_ns <= h.time_ns))
			return bad("switch out, wakeup and switch in out of order", h.seq);
		if (r->state == PMU_SCHED_R && r->wake_ns != r->out_ns)
			return bad("a preempted thread with a wakeup", h.seq);
		break;
	}
	case PMU_SCHED_REC_THREAD: {
		struct pmu_sched_thread *r = &out->thread;
		uint64_t sum = 0;

		if (len != sizeof(*r))
			return bad("size does not match its kind", h.seq);
		memcpy(out, data, len);
		if (r->flags & ~(uint32_t)PMU_SCHED_BORN)
			return bad("unknown thread flags", h.seq);
		if (!r->tgid || !r->tid)
			return bad("pid 0", h.seq);
		if (r->first_ns > h.time_ns)
			return bad("first sight after its exit", h.seq);
		if (r->first_on_ns && (r->first_on_ns < r->first_ns || r->first_on_ns > h.time_ns))
			return bad("first time on a CPU outside its life", h.seq);
		if (!add(&sum, r->on_ns) || !add(&sum, r->runq_ns) || !add(&sum, r->sleep_ns) ||
		    !add(&sum, r->blocked_ns) || !add(&sum, r->other_ns) || sum != h.time_ns - r->first_ns)
			return bad("totals do not sum to the thread's observed time", h.seq);
		break;
	}
	default:
		return bad("unknown kind", h.seq);
	}
	return 0;
}
