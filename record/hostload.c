/*
 * run.json's host_load: how busy the whole host was during a repetition,
 * and how much the hypervisor stole.  Scope "system", always: the numbers
 * include the cohort's own CPU time, and a reader subtracts nothing from
 * them nor shows them as the cohort's (spec 1.4, bundle-spec/README.md 12.1).
 */
#include <stdio.h>

#include <jansson.h>

#include "hostload.h"

static json_t *unavailable(const char *reason, const char *remedy)
{
	return json_pack("{s:s,s:s,s:s,s:s}", "scope", "system", "status", "unavailable", "reason", reason,
			 "remedy", remedy);
}

json_t *pmurec_host_load(const struct pmu_host_cpu *a, const struct pmu_host_cpu *b, uint64_t recorder_cpu_ns)
{
	const char *back = NULL;

	if (!a->ok)
		return unavailable(a->reason, a->remedy);
	if (!b->ok)
		return unavailable(b->reason, b->remedy);
	/* proc(5): iowait is not reliable and may decrease; an interval
	 * with a counter that went back is not reported as a smaller one */
	if (b->busy_ns < a->busy_ns)
		back = "busy";
	else if (b->steal_ns < a->steal_ns)
		back = "steal";
	else if (b->idle_ns < a->idle_ns)
		back = "idle";
	else if (b->iowait_ns < a->iowait_ns)
		back = "iowait";
	else if (b->t_ns < a->t_ns)
		back = "CLOCK_MONOTONIC";
	if (back) {
		char why[200];

		snprintf(why, sizeof(why), "%s's %s time went backwards during the repetition", a->source, back);
		return unavailable(why, "none: the kernel's counter is not monotonic here (proc(5)); "
					"another repetition may have it");
	}
	return json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "scope", "system", "status", "ok", "source",
			 a->source, "interval_ns", (json_int_t)(b->t_ns - a->t_ns), "cpus",
			 (json_int_t)(b->cpus > a->cpus ? b->cpus : a->cpus), "resolution_ns",
			 (json_int_t)b->resolution_ns, "busy_ns", (json_int_t)(b->busy_ns - a->busy_ns), "steal_ns",
			 (json_int_t)(b->steal_ns - a->steal_ns), "idle_ns", (json_int_t)(b->idle_ns - a->idle_ns),
			 "iowait_ns", (json_int_t)(b->iowait_ns - a->iowait_ns), "recorder_cpu_ns",
			 (json_int_t)recorder_cpu_ns);
}
