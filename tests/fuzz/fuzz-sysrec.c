/*
 * fuzz-sysrec: pmu_sysrec_decode() (backends/linux/sysrec.h) on arbitrary
 * ring samples.  The syscalls collector's records reach user space through
 * a ring that any holder of the map fd can write, so the decoder must never
 * read past the sample, never accept a record whose sizes disagree, and
 * hand out only records whose strings end where the buffer does.
 *
 * Rules checked (abort() on a violation):
 *   1. accepted  =>  len == h.size == sizeof the kind's struct, seq != 0,
 *      known kind, no unknown flag, tgid and tid not 0, nr in range,
 *      dur_ns <= time_ns; a path record's strings are NUL-terminated in
 *      their arrays, at most one source per path, resolved paths
 *      absolute, the second path's flags only with it; a record without
 *      paths has no path flag.
 *   2. accepted  =>  decoding the decoded bytes again accepts and gives
 *      the same bytes (the decoder is a filter, not a transformer).
 *   3. refused   =>  PMU_ERR_CORRUPT with a detail that starts "syscall record".
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "linux/sysrec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	union pmu_sysrec r, again;
	/* an exact-size heap copy: ASan sees any read past the sample */
	uint8_t *buf = malloc(len ? len : 1);
	int rc;

	if (!buf)
		return 0;
	memcpy(buf, data, len);
	rc = pmu_sysrec_decode(buf, len, &r);
	if (rc) {
		if (rc != PMU_ERR_CORRUPT || strncmp(pmu_error_detail(), "syscall record", 14))
			abort();
		free(buf);
		return 0;
	}
	if (r.h.size != len || !r.h.seq || !r.c.tgid || !r.c.tid || r.c.nr >= PMU_SYS_NR_MAX ||
	    r.c.dur_ns > r.h.time_ns || (r.c.flags & ~(uint32_t)PMU_SYS_F_ALL))
		abort();
	if (r.h.kind == PMU_SYS_REC_CALL) {
		if (len != sizeof(struct pmu_sys_call) || (r.c.flags & PMU_SYS_PATH_FLAGS))
			abort();
	} else if (r.h.kind == PMU_SYS_REC_CALL_PATH) {
		uint32_t src = r.c.flags & PMU_SYS_P1_SRC;
		uint32_t src2 = r.c.flags & (PMU_SYS_F_P2_CWD | PMU_SYS_F_P2_DIRFD | PMU_SYS_F_P2_REL);

		if (len != sizeof(struct pmu_sys_call_path) || strnlen(r.p.path, sizeof(r.p.path)) == sizeof(r.p.path) ||
		    strnlen(r.p.path2, sizeof(r.p.path2)) == sizeof(r.p.path2) || (src & (src - 1)) ||
		    (src2 & (src2 - 1)))
			abort();
		if ((src & (PMU_SYS_F_PATH_DENTRY | PMU_SYS_F_PATH_CWD | PMU_SYS_F_PATH_DIRFD)) && r.p.path[0] != '/')
			abort();
		if ((src2 & (PMU_SYS_F_P2_CWD | PMU_SYS_F_P2_DIRFD)) && r.p.path2[0] != '/')
			abort();
		if ((r.c.flags & PMU_SYS_P2_BITS) && !(r.c.flags & PMU_SYS_F_PATH2))
			abort();
	} else
		abort();
	if (pmu_sysrec_decode(&r, len, &again) || memcmp(&r, &again, len))
		abort();
	free(buf);
	return 0;
}
