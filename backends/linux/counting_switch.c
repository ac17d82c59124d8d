/*
 * Per-thread counts by the per-CPU, charged-at-context-switch method: what
 * a thread's counts from the eBPF follower (lib/cohort_model.h struct
 * pmu_task_counts) mean, by the honest-values rules of lib/counts.h.
 *
 * The eBPF follower holds no task, so no per-thread counter can be opened
 * before a task runs; it counts instead with one counting event per CPU per
 * event and charges each slice (the delta between two context switches on
 * a CPU) to the task leaving the CPU (backends/linux/bpf/follow.bpf.c).  A
 * thread's value, enabled and running times are the sums over its slices:
 *
 *   every slice charged, running == enabled     exact
 *   running < enabled (a slice multiplexed)     as lib/counts.h: dropped
 *                                               by default, an estimate
 *                                               labelled under --scaled
 *   a slice lost (a failed counter read on its  not exact and not
 *   CPU, or no room for the thread), or the     estimable: unavailable,
 *   thread's counts record lost                 with the count
 *   an event the follower does not count        unavailable, with why
 *
 * counting.c sums the threads per incarnation and the incarnations per
 * cohort, as it does the per-thread counters', and labels every record
 * with the method (bundle-spec/README.md, section 19.3).
 */
#include <stdio.h>
#include <string.h>

#include "counting.h"

#define REMEDY_PTRACE "record with --follower ptrace (per-thread counters, every event)"

bool pmu_switch_judge(const struct pmu_task_counts *tc, int ev, bool on_pmu, bool scaled,
		      struct pmu_cnt_val *v, struct pmu_cnt_raw *raw)
{
	unsigned i;

	memset(v, 0, sizeof(*v));
	memset(raw, 0, sizeof(*raw));
	if (tc->missing) {
		snprintf(v->reason, sizeof(v->reason),
			 "the eBPF follower's counts record of this thread was lost (a failed ring reserve; "
			 "the loss is in the cohort lifecycle)");
		v->remedy = "a larger ring buffer (fewer threads at once), or " REMEDY_PTRACE;
		return false;
	}
	for (i = 0; i < tc->n && tc->ev[i] != ev; i++)
		;
	if (i == tc->n) {
		snprintf(v->reason, sizeof(v->reason), "not counted by the eBPF follower's per-CPU method: %s",
			 tc->not_counted && tc->not_counted[0] ? tc->not_counted : "it counts none of the run's events");
		v->remedy = REMEDY_PTRACE;
		return false;
	}
	if (tc->no_entry) {
		snprintf(v->reason, sizeof(v->reason),
			 "the eBPF follower had no room for this thread in its per-thread map: none of its "
			 "slices was charged");
		v->remedy = REMEDY_PTRACE;
		return false;
	}
	*raw = (struct pmu_cnt_raw){ tc->value[i], tc->enabled_ns[i], tc->running_ns[i], on_pmu };
	if (tc->lost_slices) {
		/* a lost slice's counts are unknown: the sum is a lower bound,
		 * and no fraction of running time can scale it */
		snprintf(v->reason, sizeof(v->reason),
			 "%u of %u slices of this thread could not be charged (a failed read of its CPU's counter): "
			 "the sum is a lower bound",
			 tc->lost_slices, tc->lost_slices + tc->slices);
		v->remedy = REMEDY_PTRACE;
		return true;
	}
	pmu_cnt_judge(raw, scaled, v);
	return true;
}
