/*
 * fuzz-allocrec: pmu_allocrec_decode() (backends/linux/allocrec.h) on
 * arbitrary records.  The alloc collector reads them from a BPF ring any
 * holder of the map fd can write and from a socket the command itself
 * writes (the LD_PRELOAD interposer runs inside it), so the decoder must
 * never read past the record, never accept one whose sizes disagree, and
 * hand out only records the collector can use without checks of its own.
 *
 * Rules checked (abort() on a violation):
 *   1. accepted  =>  len == h.size == sizeof the kind's struct, known kind,
 *      seq, tgid and tid not 0; a sample's function known, its chain at
 *      most PMU_ALLOC_CHAIN_MAX, its size at most 2^62 when it succeeded; a free's address and sample seq not 0; a
 *      lost record's samples at most its records.
 *   2. accepted  =>  decoding the decoded bytes again accepts and gives the
 *      same bytes (the decoder is a filter, not a transformer).
 *   3. refused   =>  PMU_ERR_CORRUPT with a detail that starts "alloc record".
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "linux/allocrec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	union pmu_allocrec r, again;
	/* an exact-size heap copy: ASan sees any read past the record */
	uint8_t *buf = malloc(len ? len : 1);
	int rc;

	if (!buf)
		return 0;
	memcpy(buf, data, len);
	rc = pmu_allocrec_decode(buf, len, &r);
	if (rc) {
		if (rc != PMU_ERR_CORRUPT || strncmp(pmu_error_detail(), "alloc record", 12))
			abort();
		free(buf);
		return 0;
	}
	if (r.h.size != len || !r.h.seq || !r.h.tgid || !r.h.tid)
		abort();
	switch (r.h.kind) {
	case PMU_ALLOC_REC_SAMPLE:
		if (len != sizeof(r.s) || r.s.func >= PMU_ALLOC_F_N || r.s.nchain > PMU_ALLOC_CHAIN_MAX ||
		    (r.s.addr && r.s.size > (1ull << 62)))
			abort();
		break;
	case PMU_ALLOC_REC_FREE:
		if (len != sizeof(r.f) || !r.f.addr || !r.f.sample_seq)
			abort();
		break;
	case PMU_ALLOC_REC_LOST:
		if (len != sizeof(r.l) || r.l.samples > r.l.channel)
			abort();
		break;
	default:
		abort();
	}
	if (pmu_allocrec_decode(&r, len, &again) || memcmp(&r, &again, len))
		abort();
	free(buf);
	return 0;
}
