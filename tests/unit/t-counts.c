/* The honest-values rules of lib/counts.c on synthetic reads. */
#include <string.h>

#include "counts.h"
#include "tap.h"

static struct pmu_cnt_val judge(uint64_t raw, uint64_t en, uint64_t run, bool pmu, bool scaled)
{
	struct pmu_cnt_raw r = { raw, en, run, pmu };
	struct pmu_cnt_val v;

	pmu_cnt_judge(&r, scaled, &v);
	return v;
}

int main(void)
{
	struct pmu_cnt_val v;
	struct pmu_cnt_sum s;

	v = judge(12345, 5000000, 5000000, true, false);
	ok(v.ok && !v.estimate && v.value == 12345 && v.running_ppm == 1000000, "running == enabled is exact");
	v = judge(0, 5000000, 0, true, true);
	ok(!v.ok && v.not_counted && v.value == 0, "running 0 is not counted, even with --scaled");
	ok(strstr(v.reason, "not counted") != NULL, "its reason says not counted: %s", v.reason);
	v = judge(0, 0, 0, false, false);
	ok(!v.ok && v.not_counted && strstr(v.reason, "never enabled"), "enabled 0 is not counted either");
	v = judge(1000, 4000000, 1000000, true, false);
	ok(!v.ok && !v.not_counted && strstr(v.reason, "multiplexed: counted 25.0%"),
	   "multiplexed without --scaled is dropped: %s", v.reason);
	ok(v.remedy && strstr(v.remedy, "--scaled"), "and the remedy names --scaled");
	v = judge(1000, 4000000, 1000000, true, true);
	ok(v.ok && v.estimate && v.value == 4000 && v.running_ppm == 250000, "with --scaled: raw*enabled/running, 25%%");
	v = judge(1000, 3000000, 2000000, true, true);
	is_int((long long)v.value, 1500, "estimate 1000 * 3/2");
	is_int(v.running_ppm, 666666, "running fraction rounds down");
	v = judge(7, 3000000, 999999, true, true);
	ok(!v.ok && strstr(v.reason, "under 1 ms"), "under 1 ms of running time is not scaled");
	v = judge(7, 3000000, 1000000, true, true);
	ok(v.ok && v.estimate && v.value == 21, "exactly 1 ms is scaled");
	v = judge(UINT64_MAX / 2, 4000000000ull, 1000000, true, true);
	ok(!v.ok && strstr(v.reason, "overflow"), "an estimate past 63 bits is refused");
	v = judge(5, 10, 11, true, false);
	ok(!v.ok && strstr(v.reason, "inconsistent"), "running > enabled is inconsistent");
	v = judge(0, 2000000, 2000000, true, false);
	ok(v.ok && v.value == 0 && v.suspect_zero, "hardware 0 over 2 ms is a suspect zero");
	v = judge(0, 2000000, 2000000, false, false);
	ok(v.ok && !v.suspect_zero, "a software 0 is not suspect");
	v = judge(0, 500000, 500000, true, false);
	ok(v.ok && !v.suspect_zero, "a hardware 0 over 0.5 ms is not suspect");
	v = judge(1, 2000000, 2000000, true, false);
	ok(!v.suspect_zero, "a nonzero count is not suspect");

	/* sums */
	pmu_cnt_sum_init(&s);
	v = judge(10, 5, 5, false, false);
	pmu_cnt_sum_add(&s, &v, "thread 1");
	v = judge(32, 7, 7, false, false);
	pmu_cnt_sum_add(&s, &v, "thread 2");
	pmu_cnt_sum_done(&s);
	ok(s.v.ok && !s.v.estimate && s.v.value == 42, "exact parts sum exactly");
	pmu_cnt_sum_init(&s);
	v = judge(10, 5, 5, true, false);
	pmu_cnt_sum_add(&s, &v, "thread 1");
	v = judge(1000, 4000000, 2000000, true, true);
	pmu_cnt_sum_add(&s, &v, "thread 2");
	pmu_cnt_sum_done(&s);
	ok(s.v.ok && s.v.estimate && s.v.value == 2010 && s.v.running_ppm == 500000,
	   "one estimate makes the sum an estimate with the smallest running fraction");
	pmu_cnt_sum_init(&s);
	v = judge(10, 5, 5, false, false);
	pmu_cnt_sum_add(&s, &v, "thread 1");
	v = judge(0, 5, 0, false, false);
	pmu_cnt_sum_add(&s, &v, "thread 2");
	pmu_cnt_sum_done(&s);
	ok(!s.v.ok && s.v.value == 0 && strstr(s.v.reason, "1 of 2 parts") && strstr(s.v.reason, "thread 2"),
	   "a part not counted leaves no partial sum: %s", s.v.reason);
	pmu_cnt_sum_init(&s);
	pmu_cnt_sum_done(&s);
	ok(!s.v.ok && strstr(s.v.reason, "no part"), "an empty sum is not 0");
	pmu_cnt_sum_init(&s);
	v = judge(0, 2000000, 2000000, true, false);
	pmu_cnt_sum_add(&s, &v, "a");
	v = judge(3, 2000000, 2000000, true, false);
	pmu_cnt_sum_add(&s, &v, "b");
	pmu_cnt_sum_done(&s);
	ok(s.v.ok && s.v.value == 3 && !s.v.suspect_zero, "a nonzero sum of a suspect zero is not suspect");
	pmu_cnt_sum_init(&s);
	v = judge((uint64_t)INT64_MAX, 5, 5, false, false);
	pmu_cnt_sum_add(&s, &v, "a");
	v = judge(1, 5, 5, false, false);
	pmu_cnt_sum_add(&s, &v, "b");
	pmu_cnt_sum_done(&s);
	ok(!s.v.ok && strstr(s.v.reason, "overflow"), "a sum past 63 bits is refused");
	return done_testing();
}
