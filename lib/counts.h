#ifndef PMU_COUNTS_H
#define PMU_COUNTS_H
/*
 * What a counter read means: the honest-values rules of the counting
 * collector (bundle-spec/README.md, "Counts"), as pure arithmetic so that
 * they are tested on synthetic inputs.  Nothing here opens a counter.
 *
 *   running == enabled > 0      exact
 *   0 < running < enabled       multiplexed: unavailable by default
 *                               (exact-or-drop); with scaling allowed, an
 *                               estimate raw * enabled / running, labelled,
 *                               unless running < PMU_CNT_MIN_RUNNING_NS
 *   running == 0                not counted, never 0
 *   running > enabled           inconsistent: unavailable
 *
 * A counter on a hardware PMU that reads exactly 0 while it ran for at least
 * PMU_CNT_SUSPECT_NS is flagged suspect_zero (virtual machines return silent
 * zeros); its value stays, labelled.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PMU_CNT_MIN_RUNNING_NS 1000000ull   /* 1 ms: less is not scaled */
#define PMU_CNT_SUSPECT_NS     1000000ull   /* 1 ms of running time */
#define PMU_CNT_PPM            1000000u

struct pmu_cnt_raw {
	uint64_t raw, enabled_ns, running_ns;
	bool on_pmu;            /* a hardware PMU counter (suspect-zero applies) */
};

struct pmu_cnt_val {
	bool ok;                /* value is meaningful (exact or estimate) */
	bool estimate;          /* scaled from a multiplexed count */
	bool suspect_zero;
	bool not_counted;       /* running was 0 */
	uint64_t value;
	uint32_t running_ppm;   /* running / enabled in parts per million */
	char reason[240];       /* when !ok */
	const char *remedy;     /* static, when !ok */
};

/* Judge one read.  scaled: the user accepted estimates (--scaled). */
void pmu_cnt_judge(const struct pmu_cnt_raw *r, bool scaled, struct pmu_cnt_val *v);

/*
 * Accumulate parts into a sum: the sum is ok only when every part is ok (a
 * partial sum would be a fabricated number), an estimate when any part is,
 * suspect_zero when it is 0 and any part was suspect, its running_ppm the
 * smallest of the parts'.  pmu_cnt_sum_init() starts an empty sum (ok, 0,
 * exact, 1000000 ppm); label names the part in the reason ("thread 4711").
 */
struct pmu_cnt_sum {
	struct pmu_cnt_val v;
	size_t parts, bad;
};

void pmu_cnt_sum_init(struct pmu_cnt_sum *s);
void pmu_cnt_sum_add(struct pmu_cnt_sum *s, const struct pmu_cnt_val *part, const char *label);
/* Finish: reason for an unavailable sum says how many parts were missing. */
void pmu_cnt_sum_done(struct pmu_cnt_sum *s);

#endif
