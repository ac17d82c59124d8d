/*
 * The recorder's loop (loop.h).  Bounds are checked on every wakeup, and a
 * wakeup comes at least every tick: a poll timeout is the timer.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "loop.h"
#include "util.h"

#define MAXFDS 64

/* What the bounds ask for now: a signal to the cohort, or a detach. */
static bool bounds(const struct pmurec_loop *lp, uint64_t now, uint64_t deadline, uint64_t *kill_at, int *stop_seen)
{
	struct pmu_launch_result *res = lp->res;
	struct pmu_cohort *c = lp->c;
	uint64_t grace = (uint64_t)lp->grace_ms * 1000000u;

	if (lp->attach) {
		const char *why = pmu_backend_abort || pmu_backend_stop_signal ? "a signal to the recorder"
				  : deadline && now >= deadline ? "--max-duration"
				  : c->limit_reason[0] ? "the cohort's bound (spec: PMU_COHORT_MAX_*)"
				  : lp->over_bound && lp->over_bound(lp->ctx, res->truncation, sizeof(res->truncation))
					  ? "--max-output-bytes" : NULL;

		if (why) {
			snprintf(res->detach_reason, sizeof(res->detach_reason), "detached from the running tree on %s",
				 why);
			res->detached = true;
			res->truncation[0] = '\0';
			pmu_follow_detach(lp->f);
			return true;
		}
		return false;
	}
	if (pmu_backend_abort) {
		pmu_follow_kill(lp->f, SIGKILL);
		*kill_at = 0;
	}
	if (pmu_backend_stop_signal && !*stop_seen) {
		*stop_seen = pmu_backend_stop_signal;
		res->interrupted = true;
		res->signal = *stop_seen;
		/* to every process of the cohort, not just the root */
		pmu_follow_kill(lp->f, *stop_seen == SIGINT ? SIGINT : SIGTERM);
		*kill_at = now + grace;
	}
	if (deadline && now >= deadline && !res->truncated) {
		res->truncated = true;
		snprintf(res->truncation, sizeof(res->truncation),
			 "--max-duration %d ms reached: the %s was sent SIGTERM", lp->max_duration_ms,
			 res->follow_ok ? "cohort" : "command");
		pmu_follow_kill(lp->f, SIGTERM);
		*kill_at = now + grace;
	}
	if (c->limit_reason[0] && !res->truncated) {
		res->truncated = true;
		snprintf(res->truncation, sizeof(res->truncation), "%s", c->limit_reason);
		pmu_follow_kill(lp->f, SIGTERM);
		*kill_at = now + grace;
	}
	if (lp->over_bound && !res->truncated && lp->over_bound(lp->ctx, res->truncation, sizeof(res->truncation))) {
		res->truncated = true;
		pmu_follow_kill(lp->f, SIGTERM);
		*kill_at = now + grace;
	}
	if (*kill_at && now >= *kill_at) {
		pmu_follow_kill(lp->f, SIGKILL);
		*kill_at = 0;
	}
	return false;
}

int pmurec_loop_run(const struct pmurec_loop *lp)
{
	uint64_t deadline = lp->max_duration_ms ? lp->res->start_ns + (uint64_t)lp->max_duration_ms * 1000000u : 0;
	uint64_t kill_at = 0;
	int stop_seen = 0, err = 0;

	for (;;) {
		struct pollfd pf[MAXFDS];
		int fds[MAXFDS], n, m;
		bool done = false;
		uint64_t now = pmu_now_mono_ns();

		if (bounds(lp, now, deadline, &kill_at, &stop_seen))
			return err; /* detached */
		/* the follower first: a task's events before the collectors hear of it */
		if ((err = pmu_follow_drain(lp->f, &done)))
			return err;
		if (lp->drain && (err = lp->drain(lp->ctx, pmu_now_mono_ns())))
			return err;
		if (done)
			return 0;
		n = pmu_follow_fds(lp->f, fds, MAXFDS);
		m = lp->fds ? lp->fds(lp->ctx, fds + n, MAXFDS - n) : 0;
		for (int i = 0; i < n + m; i++)
			pf[i] = (struct pollfd){ fds[i], POLLIN, 0 };
		if (poll(pf, (nfds_t)(n + m), PMUREC_TICK_MS) < 0 && errno != EINTR)
			return pmu_error(PMU_ERR_IO, "poll: %s", strerror(errno));
	}
}
