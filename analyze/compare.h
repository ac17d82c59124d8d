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
 * The comparison of a and b, as a new object the caller json_decref()s:
 * comparable, differences (each refusing or not), metrics, overhead,
 * warnings.  Never fails for incomparable input: that is in the result.
 */
json_t *an_compare(json_t *a, json_t *b);

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
