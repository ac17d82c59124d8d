#ifndef PMUREC_LOOP_H
#define PMUREC_LOOP_H

/*
 * The recorder's loop: one poll(2) over the follower's fds (the cohort) and
 * every collector's, woken at least every tick (PMUREC_TICK_MS) to apply
 * the run's bounds and to let collectors consume their rings on a timer.
 * It forwards a signal to the recorder to the cohort (SIGTERM, then SIGKILL
 * after the grace period), ends the run as truncated at --max-duration, at
 * the cohort's bound or at over_bound, and in attach mode lets go of the
 * tree instead.  It returns when the cohort has ended: 0, or the first
 * negative pmu_err of the follower or a collector.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"

#define PMUREC_TICK_MS 20

struct pmurec_loop {
	struct pmu_follow *f;
	struct pmu_cohort *c;
	struct pmu_launch_result *res;
	bool attach;
	int max_duration_ms;    /* 0: none */
	int grace_ms;           /* SIGTERM -> SIGKILL */
	bool (*over_bound)(void *ctx, char *why, size_t n);
	/* the collectors: their fds, and a drain of all (on input and every tick) */
	int (*fds)(void *ctx, int *fds, int max);
	int (*drain)(void *ctx, uint64_t now);
	void *ctx;
};

int pmurec_loop_run(const struct pmurec_loop *lp);

#endif
