/* The eBPF follower: placeholder until the loader lands (unavailable, with the reason). */
#include <stdio.h>

#include "error.h"
#include "follow_ebpf.h"

int pmu_ebpf_open(struct pmu_cohort *c, const struct pmu_launch *l, struct pmu_ebpf_follow **out, char *why,
		  size_t n, const char **remedy)
{
	(void)c;
	(void)l;
	*out = NULL;
	snprintf(why, n, "the eBPF follower is not built in this pmu");
	*remedy = "record with --follower ptrace";
	return PMU_ERR_UNSUPPORTED;
}

int pmu_ebpf_add_root(struct pmu_ebpf_follow *e, pid_t root, char *why, size_t n)
{
	(void)e;
	(void)root;
	snprintf(why, n, "not built");
	return PMU_ERR_UNSUPPORTED;
}

int pmu_ebpf_fds(const struct pmu_ebpf_follow *e, int *fds, int max)
{
	(void)e;
	(void)fds;
	(void)max;
	return 0;
}

int pmu_ebpf_drain(struct pmu_ebpf_follow *e)
{
	(void)e;
	return 0;
}

void pmu_ebpf_root_status(struct pmu_ebpf_follow *e, int status)
{
	(void)e;
	(void)status;
}

void pmu_ebpf_evidence(const struct pmu_ebpf_follow *e, char *out, size_t n)
{
	(void)e;
	snprintf(out, n, "none");
}

void pmu_ebpf_stats(const struct pmu_ebpf_follow *e, uint64_t *lost, uint64_t *malformed)
{
	(void)e;
	*lost = *malformed = 0;
}

void pmu_ebpf_close(struct pmu_ebpf_follow *e)
{
	(void)e;
}
