#ifndef PMU_LINUX_FOLLOW_EBPF_H
#define PMU_LINUX_FOLLOW_EBPF_H

/*
 * The eBPF follower (private to backends/linux): the cohort's forks, execs
 * and exits from kernel tracepoints, into the cohort model, without
 * stopping any task.  run.c drives it:
 *
 *   pmu_ebpf_open        load and attach the programs (before the fork);
 *                        PMU_ERR_UNSUPPORTED with why and remedy when the
 *                        host cannot (no BTF, no CAP_BPF, not built...);
 *   pmu_ebpf_add_root    the root in the membership map, before its exec;
 *   pmu_ebpf_fds         the ring buffer's fd, to poll;
 *   pmu_ebpf_drain       consume the ring: every record into the model;
 *   pmu_ebpf_root_status the root's wait status (reaped by run.c);
 *   pmu_ebpf_done        whether any record can still come;
 *   pmu_ebpf_finish      then: end the groups still waiting for a thread's
 *                        exit record (it is not coming);
 *   pmu_ebpf_evidence    what proves it attached;
 *   pmu_ebpf_stats       records lost (failed reserves and map updates, and
 *                        sequence gaps) and records undecodable, the first
 *                        of them described;
 *   pmu_ebpf_close       detach and free (NULL: no-op).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend.h"

struct pmu_ebpf_follow;

int pmu_ebpf_open(struct pmu_cohort *c, const struct pmu_launch *l, struct pmu_ebpf_follow **out, char *why,
		  size_t n, const char **remedy);
int pmu_ebpf_add_root(struct pmu_ebpf_follow *e, pid_t root, char *why, size_t n);
int pmu_ebpf_fds(const struct pmu_ebpf_follow *e, int *fds, int max);
int pmu_ebpf_drain(struct pmu_ebpf_follow *e);
void pmu_ebpf_root_status(struct pmu_ebpf_follow *e, int status);
/* After the root is reaped: no record will come any more (drain once more). */
bool pmu_ebpf_done(struct pmu_ebpf_follow *e);
/* After the last drain: the incarnations whose group exit came but some of
 * whose threads' exit records did not are ended, their totals unavailable
 * with the count.  NULL: no-op. */
void pmu_ebpf_finish(struct pmu_ebpf_follow *e);
void pmu_ebpf_evidence(const struct pmu_ebpf_follow *e, char *out, size_t n);
void pmu_ebpf_stats(const struct pmu_ebpf_follow *e, uint64_t *lost, char *why, size_t whyn, uint64_t *malformed,
		    char *first, size_t n);
void pmu_ebpf_close(struct pmu_ebpf_follow *e);

#endif
