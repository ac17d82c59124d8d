/*
 * The cohort collector: the follower itself (backends/, chosen at run time:
 * eBPF or ptrace) as a collector on the contract.  Its stream,
 * cohort.jsonl, is written as the cohort grows (by the recorder's cohort
 * sink); here is its lifecycle: which follower ran, why, what proves it
 * attached, and what it lost.
 */
#include <stdio.h>
#include <stdlib.h>

#include "collector.h"
#include "error.h"
#include "lifecycle.h"
#include "util.h"

struct cohort_coll {
	struct pmu_collector_env *env;
};

static int cohort_probe(struct pmu_collector_env *env, json_t *caps, void **state)
{
	struct cohort_coll *cc = calloc(1, sizeof(*cc));

	(void)caps;
	if (!cc)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	cc->env = env;
	pmu_lc_probed_ok(env->lc, pmu_now_mono_ns());
	*state = cc;
	return 0;
}

static bool cohort_usable(void *state)
{
	(void)state;
	return true;
}

static int cohort_open(void *state, pid_t root, uint64_t t)
{
	struct cohort_coll *cc = state;
	char ev[1024];

	(void)root;
	if (!cc->env->followed)
		return 0;
	/* the follower attached before this call: the root is held, followed */
	pmu_lc_step(cc->env->lc, "opened", t);
	snprintf(ev, sizeof(ev), "%s follower (%s): %s", cc->env->follower, cc->env->follower_why,
		 cc->env->follower_evidence);
	pmu_lc_attached(cc->env->lc, t, ev);
	return 0;
}

static void cohort_stop(void *state, uint64_t t)
{
	struct cohort_coll *cc = state;

	if (cc->env->followed) {
		pmu_lc_step(cc->env->lc, "stopped", t);
		pmu_lc_step(cc->env->lc, "detached", t);
	}
}

static int cohort_emit(void *state, struct pmu_collector_env *env, const struct pmu_run_window *win)
{
	char ev[1400], bad[400], lost[500];

	if (!state)
		return 0;
	if (!env->followed) {
		pmu_lc_unavailable_at(env->lc, win->start_ns, env->follow_reason, env->follow_remedy);
		return 0;
	}
	/* the attached evidence gains what following took, now that it is known */
	snprintf(ev, sizeof(ev), "%s follower (%s): %s; %zu incarnation(s) followed%s", env->follower,
		 env->follower_why, env->follower_evidence, env->cohort->n, env->cohort_note ? env->cohort_note : "");
	pmu_lc_set_evidence(env->lc, ev);
	/* what the loss was made of: which kind, on which CPU */
	snprintf(lost, sizeof(lost), "records of the eBPF follower lost: %s",
		 env->follow_lost_why && env->follow_lost_why[0]
			 ? env->follow_lost_why
			 : "failed ring reserves or map updates, or sequence gaps");
	pmu_lc_lost(env->lc, "drop", win->end_ns, env->follow_lost, lost);
	/* the first refused record named: which seq, and which check */
	snprintf(bad, sizeof(bad), "records of the eBPF follower that did not decode; the first: %s",
		 env->follow_malformed_first && env->follow_malformed_first[0] ? env->follow_malformed_first
									      : "not described");
	pmu_lc_lost(env->lc, "malformed", win->end_ns, env->follow_malformed, bad);
	pmu_lc_final(env->lc, win->end_ns, "ok", NULL);
	return 0;
}

static void cohort_release(void *state)
{
	free(state);
}

const struct pmu_collector_ops pmu_cohort_collector = {
	.name = "cohort",
	.modes = 2 | 4,
	.probe = cohort_probe,
	.usable = cohort_usable,
	.open = cohort_open,
	.stop = cohort_stop,
	.emit = cohort_emit,
	.release = cohort_release,
};
