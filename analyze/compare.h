#ifndef PMU_ANALYZE_COMPARE_H
#define PMU_ANALYZE_COMPARE_H
/*
 * A/B comparison of two bundle reports (model.h): comparability first,
 * then per metric the medians, the change and its 95% confidence interval
 * (bootstrap of the ratio of medians, seeded, so a report is reproducible),
 * a Mann-Whitney U test with its effect size, the observer overhead when A
 * is the none-mode run of B's campaign, and the CI gates.
 */
#include <stdbool.h>

#include <jansson.h>

#define AN_MIN_REPS_CI 3     /* fewer on a side: no interval at all */
#define AN_MIN_REPS_FIRM 9   /* fewer on a side: the statistics are weak */
#define AN_OVERHEAD_OK 5.0   /* % : traced timings may be read at this overhead */

/*
 * The default minimum effect (--min-effect), in percent: a change whose
 * whole 95% interval lies within +-this is "no practical difference", even
 * when it is significant.  2%, from A/A noise: on the 2-vCPU VM pmu is
 * developed on (loaded by other builds), ten interleaved A/A campaigns
 * (pmurec --ab light,light, 10 and 15 repetitions a side, a shell and an
 * awk loop) gave medians of task-clock that differed by 0.5% to 6.7%,
 * median 1.8%, between identical runs (wall time: median 5.0%).  A change
 * below that is what identical runs show, and nothing to act on; the
 * interval, not this threshold, guards against noise.  See pmuanalyze(1).
 */
#define AN_MIN_EFFECT_DEFAULT 2.0
#define AN_MIN_EFFECT_MAX 100.0

/*
 * Host load outside the cohort (run.json host_load, scope system): the
 * levels at which the comparability check warns, in percent of the host's
 * CPU time over a repetition (interval x CPUs).  Steal is time the
 * hypervisor ran someone else while a vCPU wanted to run: it lengthens the
 * cohort's times directly, so a small amount is worth a warning.  Busy
 * outside the cohort (the recorder itself included) competes for the CPUs
 * and caches.
 */
#define AN_STEAL_LEVEL 2.0          /* median steal above this on a side */
#define AN_STEAL_DIFF 1.0           /* medians differing by more (points) */
#define AN_OUTSIDE_BUSY_LEVEL 25.0  /* median outside busy above this on a side */
#define AN_OUTSIDE_BUSY_DIFF 10.0   /* medians differing by more (points) */

/*
 * The host load beside one bundle's cohort (its report rep, from an_load()):
 * per repetition the steal share and the share of the host's CPU time busy
 * outside the cohort, their medians, scope system, labelled estimates; a
 * warning string appended to warnings for each median above its level.
 * Returns a new object the caller json_decref()s; status unavailable, with
 * the reason, when no repetition recorded one.
 */
json_t *an_host_load_one(json_t *rep, json_t *warnings);

struct an_compare_opts {
	double min_effect;   /* percent, 0 .. AN_MIN_EFFECT_MAX */
	bool min_effect_given; /* from --min-effect, not the default */
};

/*
 * The comparison of a and b, as a new object the caller json_decref()s:
 * comparable, comparability (basis, statement, warnings), differences
 * (each refusing or not), metrics, overhead, host load, warnings.  Never
 * fails for incomparable input: that is in the result.
 */
json_t *an_compare(json_t *a, json_t *b, const struct an_compare_opts *o);

/*
 * The verdict of one compared metric from its 95% interval [lo, hi] (in
 * percent), whether the change is significant (interval and rank test
 * agree) and the minimum effect (percent):
 *   "no-practical-difference"  the interval lies within +-min_effect
 *   "higher" / "lower"         significant, the whole interval beyond the
 *                              minimum effect: "by at least L%"
 *   "higher-maybe-below-min-effect" / "lower-maybe-below-min-effect"
 *                              significant, the interval reaches into it
 *   "no-significant-difference" otherwise, with what it cannot rule out
 * Returns the code (a static string) and writes the sentence to out.
 */
const char *an_effect_verdict(double lo, double hi, bool significant, double min_effect, char *out, size_t n);

/*
 * The overhead sentence of mode on wall time from its 95% interval
 * [lo, hi] and point estimate (percent) against level (percent): returns
 * "below" (the whole interval at most level: "below 5% with 95%
 * confidence"), "above" (the whole interval beyond it: "at least L%") or
 * "undetermined" (it straddles level: "cannot rule out more than 5%"), and
 * writes the sentence to out.
 */
const char *an_overhead_sentence(const char *mode, double point, double lo, double hi, double level, char *out,
				 size_t n);

/*
 * A --fail-if expression: METRIC[.median]:(+|-)N%.  Returns 0 and fills
 * metric and pct (signed), or -1 with why.
 */
int an_gate_parse(const char *expr, char *metric, size_t n, double *pct, char *why, size_t wn);

/*
 * Evaluate the gates (an array of expression strings) against the
 * comparison; returns a new array of verdicts.  *regression is set when a
 * threshold was crossed significantly (the whole 95% interval beyond it),
 * *unusable when a gate cannot be evaluated (unknown metric, too few
 * repetitions), with the reason in its verdict.
 */
json_t *an_gates(json_t *cmp, json_t *exprs, bool *regression, bool *unusable);

#endif
