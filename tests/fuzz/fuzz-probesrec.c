/*
 * fuzz-probesrec: pmu_prb_decode() (backends/linux/probesrec.c) on
 * arbitrary ring samples.  The probes collector's records reach user space
 * through a ring any holder of the map fd can write, so the decoder must
 * never read past the sample and never accept a record whose parts
 * disagree.
 *
 * Rules checked (abort() on a violation):
 *   0. an accepted exec record is its struct exactly, seq, tgid, tid nonzero.
 *   1. accepted  =>  len == h.size == the hit and its nstr (<= 4) string
 *      slots, seq, tgid and tid nonzero, probe < the table's size, nargs
 *      <= 12, no flag outside PMU_PRB_F_ALL, and each string slot j < nstr
 *      NUL-terminated at slen[j] < 128 (so strlen is bounded).
 *   2. accepted  =>  decoding the decoded bytes again accepts them and gives
 *      the same bytes (the decoder is a filter, not a transformer).
 *   3. refused   =>  PMU_ERR_CORRUPT with a detail that starts "probe record".
 *
 * The first input byte is the table's size the decoder is given; the rest
 * is the sample.  The decoder is compiled into the harness (the generic
 * fuzz rule links lib/ only).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "linux/probesrec.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	union pmu_prb_rec r, again;
	uint32_t np;
	uint8_t *buf;

	if (!len)
		return 0;
	np = data[0];
	data++, len--;
	/* an exact-size heap copy: ASan sees any read past the sample */
	if (!(buf = malloc(len ? len : 1)))
		return 0;
	memcpy(buf, data, len);
	int rc = pmu_prb_decode(buf, len, np, &r);
	if (rc) {
		if (rc != PMU_ERR_CORRUPT || strncmp(pmu_error_detail(), "probe record", 12))
			abort();
		free(buf);
		return 0;
	}
	if (r.h.kind == PMU_PRB_REC_EXEC) {
		if (len != sizeof(r.exec) || r.h.size != len || !r.h.seq || !r.exec.tgid || !r.exec.tid)
			abort();
		if (pmu_prb_decode(&r, len, np, &again) || memcmp(&r, &again, len))
			abort();
		free(buf);
		return 0;
	}
	if (r.h.size != len || r.h.seq == 0 || r.h.kind != PMU_PRB_REC_HIT || r.hit.nstr > PMU_PRB_NSTR ||
	    len != sizeof(r.hit) + (size_t)r.hit.nstr * PMU_PRB_STR || !r.hit.tgid || !r.hit.tid ||
	    r.hit.probe >= np || r.hit.nargs > PMU_PRB_NARGS || (r.hit.flags & ~PMU_PRB_F_ALL))
		abort();
	for (unsigned j = 0; j < r.hit.nstr; j++)
		if (strlen(pmu_prb_str(&r, j)) > r.hit.slen[j] || r.hit.slen[j] >= PMU_PRB_STR)
			abort();
	/* a string's file only for a string the program could not read */
	for (unsigned j = 0; j < PMU_PRB_NSTR; j++)
		if (r.hit.sfile[j].ino && (j >= r.hit.nstr || !(r.hit.flags & PMU_PRB_F_STR_BAD(j))))
			abort();
	if (pmu_prb_decode(&r, len, np, &again) || memcmp(&r, &again, len))
		abort();
	free(buf);
	return 0;
}
