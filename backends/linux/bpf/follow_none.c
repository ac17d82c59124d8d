/*
 * The eBPF follower where it was not built (no clang, bpftool, libbpf or
 * build-host BTF when make ran): the same API as follow_bpf.c, and every
 * open answers unavailable with the reason the Makefile recorded.
 */
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "linux/follow_bpf.h"

#ifndef PMU_BPF_UNBUILT
#define PMU_BPF_UNBUILT "not configured"
#endif

int pmu_bpf_follow_open(const struct pmu_bpf_follow_opts *opts, struct pmu_bpf_follow **out,
                        struct pmu_bpf_why *why)
{
	(void)opts;
	*out = NULL;
	memset(why, 0, sizeof(*why));
	why->avail = PMU_BPF_NOT_BUILT;
	why->remedy = "install clang, bpftool and libbpf-dev (Debian: apt-get install clang bpftool libbpf-dev) "
	              "on a host whose kernel has BTF, and rebuild";
	/* the Makefile ends each missing piece with ';' */
	int n = snprintf(why->reason, sizeof(why->reason), "the ebpf follower was not built: %s", PMU_BPF_UNBUILT);
	if (n > 0 && (size_t)n < sizeof(why->reason) && why->reason[n - 1] == ';')
		why->reason[n - 1] = 0;
	return pmu_error(PMU_ERR_UNSUPPORTED, "%s", why->reason);
}

/* unreachable without an open follower; defined so that callers link */
int pmu_bpf_follow_add_root(struct pmu_bpf_follow *f, pid_t pid)
{
	(void)f, (void)pid;
	return pmu_error(PMU_ERR_UNSUPPORTED, "the ebpf follower was not built");
}

int pmu_bpf_follow_fd(const struct pmu_bpf_follow *f)
{
	(void)f;
	return -1;
}

int pmu_bpf_follow_drain(struct pmu_bpf_follow *f, pmu_bpf_record_fn cb, void *arg)
{
	(void)f, (void)cb, (void)arg;
	return pmu_error(PMU_ERR_UNSUPPORTED, "the ebpf follower was not built");
}

int pmu_bpf_follow_members(struct pmu_bpf_follow *f, size_t *n)
{
	(void)f;
	*n = 0;
	return pmu_error(PMU_ERR_UNSUPPORTED, "the ebpf follower was not built");
}

int pmu_bpf_follow_dying(struct pmu_bpf_follow *f, size_t *n)
{
	(void)f;
	*n = 0;
	return pmu_error(PMU_ERR_UNSUPPORTED, "the ebpf follower was not built");
}

void pmu_bpf_follow_stats(struct pmu_bpf_follow *f, struct pmu_bpf_follow_stats *st)
{
	(void)f;
	memset(st, 0, sizeof(*st));
	st->exit_hook = "";
}

void pmu_bpf_follow_close(struct pmu_bpf_follow *f)
{
	(void)f;
}
