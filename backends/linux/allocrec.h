#ifndef PMU_LINUX_ALLOCREC_H
#define PMU_LINUX_ALLOCREC_H

/*
 * The decoder of the alloc collector's records (bpf/alloc.h), from its BPF
 * ring (any holder of the map fd can write it) or from the LD_PRELOAD
 * interposer's socket (the command itself writes it, and the command is
 * anything): trust nothing.  The length, the header's size and the kind's
 * struct must agree exactly; a zero seq, a zero tgid or tid, an unknown
 * function, a chain longer than PMU_ALLOC_CHAIN_MAX, a free of address 0
 * or of seq 0 and lost counts that disagree are all PMU_ERR_CORRUPT, with a
 * detail that starts "alloc record".  Header-only, so that the fuzz
 * harness (tests/fuzz/fuzz-allocrec.c) links it without the backend.
 */
#include <linux/types.h>
#include <stddef.h>
#include <string.h>

#include "error.h"
#include "bpf/alloc.h"

union pmu_allocrec {
	struct pmu_alloc_hdr h;
	struct pmu_alloc_sample s;
	struct pmu_alloc_free f;
	struct pmu_alloc_lost l;
};

static inline int pmu_allocrec_bad(const char *what, unsigned long long seq)
{
	return pmu_error(PMU_ERR_CORRUPT, "alloc record seq %llu: %s", seq, what);
}

/* Decode data[0..len) into *out: 0 or PMU_ERR_CORRUPT. */
static inline int pmu_allocrec_decode(const void *data, size_t len, union pmu_allocrec *out)
{
	struct pmu_alloc_hdr h;
	size_t want;

	if (!data || len < sizeof(h))
		return pmu_error(PMU_ERR_CORRUPT, "alloc record of %zu bytes is shorter than its header", len);
	memcpy(&h, data, sizeof(h));
	switch (h.kind) {
	case PMU_ALLOC_REC_SAMPLE: want = sizeof(struct pmu_alloc_sample); break;
	case PMU_ALLOC_REC_FREE: want = sizeof(struct pmu_alloc_free); break;
	case PMU_ALLOC_REC_LOST: want = sizeof(struct pmu_alloc_lost); break;
	default: return pmu_allocrec_bad("unknown kind", h.seq);
	}
	if (h.size != len || len != want)
		return pmu_allocrec_bad("size does not match its kind", h.seq);
	if (h.seq == 0)
		return pmu_allocrec_bad("seq 0", h.seq);
	if (!h.tgid || !h.tid)
		return pmu_allocrec_bad("pid 0", h.seq);
	if (h.time_ns > (1ull << 62))
		return pmu_allocrec_bad("a time past 2^62 ns", h.seq);
	memcpy(out, data, len);
	switch (h.kind) {
	case PMU_ALLOC_REC_SAMPLE:
		if (out->s.func >= PMU_ALLOC_F_N)
			return pmu_allocrec_bad("unknown function", h.seq);
		if (out->s.nchain > PMU_ALLOC_CHAIN_MAX)
			return pmu_allocrec_bad("a chain longer than kept", h.seq);
		/* any size may be asked for (a failed malloc(SIZE_MAX) is a
		 * program's right); a successful one past 2^62 is no record */
		if (out->s.addr && out->s.size > (1ull << 62))
			return pmu_allocrec_bad("an allocation past 2^62 bytes that succeeded", h.seq);
		break;
	case PMU_ALLOC_REC_FREE:
		if (!out->f.addr || !out->f.sample_seq)
			return pmu_allocrec_bad("a free of address 0 or of sample 0", h.seq);
		break;
	case PMU_ALLOC_REC_LOST:
		if (out->l.samples > out->l.channel)
			return pmu_allocrec_bad("more samples lost than records", h.seq);
		if (out->l.channel > (1ull << 62) || out->l.live_full > (1ull << 62))
			return pmu_allocrec_bad("a count past 2^62", h.seq);
		break;
	}
	return 0;
}

#endif
