#ifndef PMU_LINUX_PROBESREC_H
#define PMU_LINUX_PROBESREC_H

/*
 * The probes collector's ring records (bpf/probes.h), decoded: the one
 * place user space reads what probes.bpf.c wrote.  The bytes are untrusted
 * (any holder of the ring's fd can write it): pmu_prb_decode() checks the
 * sample's length against its header and its string count, the counts
 * against their bounds, the flags, and every string's NUL at its length,
 * and answers PMU_ERR_CORRUPT with a detail that starts "probe record"
 * when anything disagrees.  tests/fuzz/fuzz-probesrec.c holds it to that.
 */
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "bpf/probes.h"

union pmu_prb_rec {
	struct pmu_prb_hdr h;
	struct pmu_prb_hit hit;
	struct pmu_prb_exec exec;
	struct pmu_prb_hit_full full; /* hit with its string slots: h.size says how many */
};

/* 0 and *out filled (a copy of the len bytes), or PMU_ERR_CORRUPT.
 * nprobes: the loader's table size (a probe index at or past it is
 * corrupt). */
int pmu_prb_decode(const void *data, size_t len, uint32_t nprobes, union pmu_prb_rec *out);

/* The string j of a decoded hit (j < h.nstr), NUL-terminated. */
static inline const char *pmu_prb_str(const union pmu_prb_rec *r, unsigned j)
{
	return r->full.str[j];
}

#endif
