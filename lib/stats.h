#ifndef PMU_STATS_H
#define PMU_STATS_H
/*
 * Statistics for comparing a metric between two sets of repetitions (A, the
 * baseline, and B, e.g. the wall times in ns of 10 runs each), so that
 * pmuanalyze can say whether a difference is real.  Pure arithmetic: no
 * global state, nothing read or written but the arguments.
 *
 * Robust statistics throughout (medians, quartiles, ranks): run-to-run noise
 * of performance metrics is skewed and has outliers (a page-cache miss, a
 * migration), which a mean and a t-test would take at face value.
 *
 * Inputs must be finite: a NaN or an infinity is PMU_ERR_INVAL, never a
 * silently propagated NaN.  Functions that return int return 0 or a negative
 * enum pmu_err with a detail for pmu_error_detail().  Scratch memory is
 * allocated and freed inside each call; nothing is handed to the caller.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Quantile p (0..1, clamped) of the n values of sorted (ascending) with
 * linear interpolation between order statistics: Hyndman & Fan type 7, the
 * default of R's quantile() and numpy's percentile().  With h = (n-1)p the
 * result is sorted[floor(h)] + (h - floor(h)) * (sorted[floor(h)+1] -
 * sorted[floor(h)]).  NaN when n is 0 or p is NaN.  sorted is not checked.
 */
double pmu_quantile_sorted(const double *sorted, size_t n, double p);

/*
 * The median of x[0..n), n >= 1, in expected O(n) time by selection;
 * reorders x (a scratch copy, not the caller's data).  For an even n the
 * mean of the two middle values, as pmu_quantile_sorted(.., 0.5).
 */
double pmu_median_inplace(double *x, size_t n);

/*
 * Summary of one sample.  q1, q3: type-7 quartiles (as above); mad: the
 * median absolute deviation from the median, unscaled (multiply by 1.4826
 * for a consistent estimate of a normal sigma).
 */
struct pmu_summary {
	size_t n;
	double median, min, max, q1, q3, mad;
};

/*
 * Summarize v[0..n) (any order; a sorted copy is made and freed).
 * PMU_ERR_INVAL when n is 0 or a value is not finite, PMU_ERR_NOMEM.
 */
int pmu_summarize(const double *v, size_t n, struct pmu_summary *s);

/*
 * Tukey outliers: the indices of the values of v outside [q1 - 1.5 IQR,
 * q3 + 1.5 IQR] (IQR = q3 - q1), in input order.  s must be
 * pmu_summarize(v, n)'s result: the fences come from it, so this call
 * neither allocates nor fails.  Writes at most cap indices to idx (idx may
 * be NULL when cap is 0) and returns how many outliers there are, which may
 * exceed cap.
 */
size_t pmu_outliers(const double *v, size_t n, const struct pmu_summary *s, size_t *idx, size_t cap);

/*
 * Bootstrap confidence interval of median(B) / median(A) - 1, a fraction
 * (0.05 is B 5% above A).  Meant for positive metrics (times, counts); with
 * negative values the sign of the fraction means what the signs make it.
 *
 * point: from the samples themselves.  low, high: the percentile interval at
 * level conf (0 < conf < 1, e.g. 0.95), type-7 quantiles (1-conf)/2 and
 * (1+conf)/2 of the resampled ratios.  Each of the iters resamples (1 ..
 * PMU_BOOT_MAX_ITERS, e.g. 10000) draws na values from a and nb from b with
 * replacement.  Deterministic: the generator is xoshiro256** seeded from
 * seed through splitmix64, and integer-only, so the same inputs and seed
 * give the same interval on every platform; a different seed gives an
 * interval that differs by the Monte-Carlo error only.
 *
 * A resample whose median of A is 0 (A holds zeros) has no ratio: it is
 * skipped and not counted in used.  More than 1% skipped, or a median of A
 * of 0 in the samples themselves, is PMU_ERR_INVAL: the ratio is not defined
 * often enough to mean anything.
 *
 * With one value on a side, every resample of that side is that value, so
 * the interval shows the other side's variation only, and with one value on
 * both sides it is degenerate: low == high == point.  Allowed, since the
 * caller may still want the point, but such an interval understates the
 * run-to-run noise: pmuanalyze should not call it significant.
 *
 * Allocates O(na + nb + iters) doubles, freed before return.
 * PMU_ERR_INVAL for an empty side, a non-finite value, conf or iters out of
 * range; PMU_ERR_NOMEM.
 */
#define PMU_BOOT_MAX_ITERS 10000000u

struct pmu_ci {
	double point, low, high;
	size_t used;            /* resamples that gave a ratio */
};

int pmu_bootstrap_median_ratio(const double *a, size_t na, const double *b, size_t nb, size_t iters,
			       double conf, uint64_t seed, struct pmu_ci *out);

/*
 * Mann-Whitney U test, two-sided, of A against B.
 *
 * u: U of A, the number of pairs (a, b) with a > b plus half the pairs with
 * a == b (scipy.stats.mannwhitneyu(a, b).statistic; B's is na*nb - u).
 *
 * p_value: exact when na, nb <= PMU_MWU_EXACT_MAX and there are no ties,
 * from the distribution of U over all C(na+nb, na) rankings (Harding's
 * generating-function recurrence, O(na*nb) memory): twice the tail beyond
 * the observed U, at most 1.  Otherwise the normal approximation with the
 * tie correction of the variance and a continuity correction of 0.5, which
 * is scipy's method='asymptotic', use_continuity=True.  All values tied
 * (variance 0): p is 1.
 *
 * Effect sizes, both oriented so that B tending to be larger is positive:
 *   cles           P(B > A) + 0.5 P(B == A) over all pairs, 0..1 (0.5: none)
 *   rank_biserial  1 - 2u/(na*nb) = 2 cles - 1, -1..1 (0: none)
 *
 * Allocates O(na + nb) (+ O(na*nb) when exact), freed before return.
 * PMU_ERR_INVAL for an empty side or a non-finite value; PMU_ERR_NOMEM.
 */
#define PMU_MWU_EXACT_MAX 20

struct pmu_mwu {
	double u, p_value, rank_biserial, cles;
	bool exact;             /* p_value from the exact distribution */
};

int pmu_mann_whitney(const double *a, size_t na, const double *b, size_t nb, struct pmu_mwu *out);

/* The 95% Wilson score interval of k successes in n trials, as fractions
 * (n 0: [0, 1]): the interval of a share estimated from k of n samples. */
void pmu_wilson95(uint64_t k, uint64_t n, double *lo, double *hi);

#endif
