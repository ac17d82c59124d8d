/* A thread's counts by the per-CPU, charged-at-context-switch method
 * (backends/linux/counting_switch.c): exact only when its counters ran all
 * of its slices; multiplexed dropped or, scaled, a labelled estimate; a lost
 * slice, a lost record, no room, or an event not counted: no value, with
 * the reason, never 0. */
#include <stdbool.h>
#include <string.h>

#include "../tap.h"
#include "linux/counting.h"

/* run event 3 counted as the follower's event 1 (run event 0 is its 0) */
static struct pmu_task_counts tc(uint64_t v, uint64_t en, uint64_t run)
{
	struct pmu_task_counts t = { .method = "per-cpu-switch", .n = 2, .ev = { 0, 3 }, .slices = 7,
				     .not_counted = "r08: the eBPF follower counts at most 4 events per thread" };

	t.value[0] = 5;
	t.enabled_ns[0] = t.running_ns[0] = 10;
	t.value[1] = v;
	t.enabled_ns[1] = en;
	t.running_ns[1] = run;
	return t;
}

int main(void)
{
	struct pmu_task_counts t = tc(1000, 2000000, 2000000);
	struct pmu_cnt_val v;
	struct pmu_cnt_raw raw;

	ok(pmu_switch_judge(&t, 3, true, false, &v, &raw), "the thread's sums are there");
	ok(v.ok && !v.estimate && v.value == 1000 && v.running_ppm == 1000000, "running == enabled: exact");
	is_int((long long)raw.raw, 1000, "raw is the sum of the slices");

	t = tc(1000, 4000000, 2000000);
	pmu_switch_judge(&t, 3, true, false, &v, &raw);
	ok(!v.ok && strstr(v.reason, "multiplexed"), "a multiplexed slice: dropped by default (%s)", v.reason);
	pmu_switch_judge(&t, 3, true, true, &v, &raw);
	ok(v.ok && v.estimate && v.value == 2000 && v.running_ppm == 500000, "--scaled: an estimate at 50 %%");

	t = tc(1000, 2000000, 2000000);
	t.lost_slices = 2;
	ok(pmu_switch_judge(&t, 3, true, true, &v, &raw) && raw.raw == 1000, "a lost slice: the sums stay as evidence");
	ok(!v.ok && strstr(v.reason, "2 of 9 slices") && v.remedy, "a lost slice: no value, even scaled (%s)",
	   v.reason);

	t = tc(0, 2000000, 0);
	pmu_switch_judge(&t, 3, true, false, &v, &raw);
	ok(!v.ok && v.not_counted, "running 0: not counted, never 0");

	t = tc(0, 2000000, 2000000);
	pmu_switch_judge(&t, 3, true, false, &v, &raw);
	ok(v.ok && v.value == 0 && v.suspect_zero, "a hardware 0 that ran: suspect zero, kept");

	t = tc(1000, 2000000, 2000000);
	ok(!pmu_switch_judge(&t, 2, true, false, &v, &raw) && !v.ok && strstr(v.reason, "at most 4 events"),
	   "a run event the follower does not count: why (%s)", v.reason);

	t.missing = true;
	ok(!pmu_switch_judge(&t, 3, true, false, &v, &raw) && !v.ok && strstr(v.reason, "lost"),
	   "the thread's counts record lost: no value");
	t.missing = false;
	t.no_entry = true;
	ok(!pmu_switch_judge(&t, 3, true, false, &v, &raw) && !v.ok && strstr(v.reason, "no room"),
	   "no room for the thread: no value");
	printf("1..%d\n", tap_n);
	return tap_failed != 0;
}
