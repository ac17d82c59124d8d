#ifndef PMU_LINUX_SCHEDREC_H
#define PMU_LINUX_SCHEDREC_H

/*
 * The sched collector's ring records (bpf/sched.h), decoded: the one
 * place user space reads what sched.bpf.c wrote.  The bytes are untrusted
 * (any holder of the ring's fd can write it): pmu_sched_decode() checks
 * the sample's length against its header and its kind's struct, and the
 * body's fields against each other, and answers PMU_ERR_CORRUPT with a
 * detail that starts "sched record" when anything disagrees.
 */
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "bpf/sched.h"

union pmu_sched_rec {
	struct pmu_sched_hdr h;
	struct pmu_sched_off off;
	struct pmu_sched_off_chain offc; /* off with its chain: h.size says which */
	struct pmu_sched_thread thread;
};

/* 0 and *out filled (a copy of the len bytes), or PMU_ERR_CORRUPT. */
int pmu_sched_decode(const void *data, size_t len, union pmu_sched_rec *out);

/* "S", "D", "R" or "other" for a PMU_SCHED_* state (decoded records only). */
const char *pmu_sched_state_name(unsigned state);

#endif
