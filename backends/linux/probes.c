/* Placeholder until the probes collector lands (issue 18). */
#include <stdbool.h>

#include "collector.h"
#include "lifecycle.h"
#include "util.h"

static int x_probe(struct pmu_collector_env *env, json_t *caps, void **state)
{
	(void)caps;
	*state = NULL;
	pmu_lc_unavailable_at(env->lc, pmu_now_mono_ns(), "the probes collector is not built yet", "wait for issue 18");
	return 0;
}

static int x_emit(void *state, struct pmu_collector_env *env, const struct pmu_run_window *win)
{
	(void)state, (void)env, (void)win;
	return 0;
}

static void x_release(void *state)
{
	(void)state;
}

const struct pmu_collector_ops pmu_probes_collector = {
	.name = "probes", .modes = 4, .probe = x_probe, .emit = x_emit, .release = x_release,
};
