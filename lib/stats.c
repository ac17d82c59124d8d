#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "stats.h"

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

/* Every sample is checked before any arithmetic: a NaN would make the
 * comparisons of a sort inconsistent and every result meaningless. */
static int check_sample(const double *v, size_t n, const char *name)
{
	if (n == 0 || !v)
		return pmu_error(PMU_ERR_INVAL, "sample %s is empty", name);
	for (size_t i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return pmu_error(PMU_ERR_INVAL, "sample %s: value %zu is not finite (%g)", name, i, v[i]);
	return 0;
}

double pmu_quantile_sorted(const double *sorted, size_t n, double p)
{
	if (n == 0 || isnan(p))
		return NAN;
	if (p <= 0)
		return sorted[0];
	if (p >= 1)
		return sorted[n - 1];

	double h = (double)(n - 1) * p;
	size_t lo = (size_t)h;
	double frac = h - (double)lo;

	if (lo + 1 >= n)
		return sorted[n - 1];
	/* x[lo] + frac * (x[lo+1] - x[lo]): exact at frac 0 and for equal
	 * neighbours, which keeps the median of a constant sample constant */
	return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

static void swap_d(double *x, ptrdiff_t i, ptrdiff_t j)
{
	double t = x[i];

	x[i] = x[j];
	x[j] = t;
}

/*
 * The k-th smallest of x[0..n) (Hoare's selection), leaving every element
 * before index k no larger than x[k].  A median-of-three pivot keeps sorted
 * and reverse-sorted input, common for repetitions, away from the quadratic
 * case; the indices are signed because j walks below lo on the last swap.
 */
static double select_kth(double *x, size_t n, size_t k)
{
	ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;

	while (lo < hi) {
		ptrdiff_t mid = lo + (hi - lo) / 2, i = lo, j = hi;

		if (x[mid] < x[lo])
			swap_d(x, mid, lo);
		if (x[hi] < x[lo])
			swap_d(x, hi, lo);
		if (x[hi] < x[mid])
			swap_d(x, hi, mid);

		double pivot = x[mid];

		while (i <= j) {
			while (x[i] < pivot)
				i++;
			while (x[j] > pivot)
				j--;
			if (i <= j)
				swap_d(x, i++, j--);
		}
		/* now x[lo..j] <= pivot <= x[i..hi], and x[j+1..i-1] == pivot */
		if (kk <= j)
			hi = j;
		else if (kk >= i)
			lo = i;
		else
			break;
	}
	return x[k];
}

double pmu_median_inplace(double *x, size_t n)
{
	size_t k = n / 2;
	double upper = select_kth(x, n, k);

	if (n % 2)
		return upper;

	/* the lower middle value is the largest of x[0..k) after selection */
	double lower = x[0];

	for (size_t i = 1; i < k; i++)
		if (x[i] > lower)
			lower = x[i];
	return lower + (upper - lower) / 2;
}

int pmu_summarize(const double *v, size_t n, struct pmu_summary *s)
{
	int err = check_sample(v, n, "to summarize");

	memset(s, 0, sizeof(*s));
	if (err)
		return err;

	double *x = malloc(n * sizeof(*x));

	if (!x)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	memcpy(x, v, n * sizeof(*x));
	qsort(x, n, sizeof(*x), cmp_double);
	s->n = n;
	s->min = x[0];
	s->max = x[n - 1];
	s->median = pmu_quantile_sorted(x, n, 0.5);
	s->q1 = pmu_quantile_sorted(x, n, 0.25);
	s->q3 = pmu_quantile_sorted(x, n, 0.75);
	for (size_t i = 0; i < n; i++)
		x[i] = fabs(x[i] - s->median);
	s->mad = pmu_median_inplace(x, n);
	free(x);
	return 0;
}

size_t pmu_outliers(const double *v, size_t n, const struct pmu_summary *s, size_t *idx, size_t cap)
{
	double iqr = s->q3 - s->q1, lo = s->q1 - 1.5 * iqr, hi = s->q3 + 1.5 * iqr;
	size_t count = 0;

	for (size_t i = 0; i < n; i++) {
		if (!(v[i] < lo || v[i] > hi))
			continue;
		if (count < cap)
			idx[count] = i;
		count++;
	}
	return count;
}

/*
 * xoshiro256** seeded through splitmix64 (Blackman & Vigna, prng.di.unimi.it):
 * the state lives on the caller's stack, so calls share nothing, and the
 * stream depends on the seed alone.
 */
struct rng {
	uint64_t s[4];
};

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void rng_seed(struct rng *r, uint64_t seed)
{
	/* splitmix64 never yields an all-zero state from four outputs */
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s, result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

/* Uniform in [0, n) without modulo bias: Lemire's multiply-and-reject. */
static size_t rng_below(struct rng *r, uint64_t n)
{
	unsigned __int128 m = (unsigned __int128)rng_next(r) * n;

	if ((uint64_t)m < n) {
		uint64_t threshold = -n % n;

		while ((uint64_t)m < threshold)
			m = (unsigned __int128)rng_next(r) * n;
	}
	return (size_t)(m >> 64);
}

/* (mb - ma) / ma rather than mb / ma - 1: no cancellation for small changes */
static double rel_change(double ma, double mb)
{
	return (mb - ma) / ma;
}

int pmu_bootstrap_median_ratio(const double *a, size_t na, const double *b, size_t nb, size_t iters,
			       double conf, uint64_t seed, struct pmu_ci *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	if ((err = check_sample(a, na, "A")) || (err = check_sample(b, nb, "B")))
		return err;
	if (!(conf > 0 && conf < 1))
		return pmu_error(PMU_ERR_INVAL, "confidence level %g is not between 0 and 1", conf);
	if (iters == 0 || iters > PMU_BOOT_MAX_ITERS)
		return pmu_error(PMU_ERR_INVAL, "%zu bootstrap resamples: want 1 to %u", iters, PMU_BOOT_MAX_ITERS);

	double *sa = malloc(na * sizeof(*sa)), *sb = malloc(nb * sizeof(*sb)), *r = malloc(iters * sizeof(*r));
	size_t skipped = 0, used = 0;
	struct rng rng;

	if (!sa || !sb || !r) {
		err = pmu_error(PMU_ERR_NOMEM, "out of memory");
		goto out;
	}

	memcpy(sa, a, na * sizeof(*sa));
	memcpy(sb, b, nb * sizeof(*sb));
	double ma = pmu_median_inplace(sa, na), mb = pmu_median_inplace(sb, nb);

	out->point = rel_change(ma, mb);
	if (ma == 0 || !isfinite(out->point)) {
		err = pmu_error(PMU_ERR_INVAL, "the median of A is %g: the ratio of medians is not defined", ma);
		goto out;
	}

	rng_seed(&rng, seed);
	for (size_t it = 0; it < iters; it++) {
		/* both sides are drawn even when A's median turns out 0, so
		 * that resample k uses the same stream whatever came before */
		for (size_t i = 0; i < na; i++)
			sa[i] = a[rng_below(&rng, na)];
		for (size_t i = 0; i < nb; i++)
			sb[i] = b[rng_below(&rng, nb)];
		ma = pmu_median_inplace(sa, na);
		mb = pmu_median_inplace(sb, nb);

		double q = ma != 0 ? rel_change(ma, mb) : NAN;

		/* a tiny nonzero median can still overflow the quotient */
		if (!isfinite(q)) {
			skipped++;
			continue;
		}
		r[used++] = q;
	}
	/* the brief's rule: up to 1% of undefined ratios is noise, more means
	 * the interval would describe a conditional distribution only */
	if (skipped * 100 > iters) {
		err = pmu_error(PMU_ERR_INVAL,
				"%zu of %zu resamples had a median of A of 0: the ratio of medians is not defined",
				skipped, iters);
		goto out;
	}
	qsort(r, used, sizeof(*r), cmp_double);
	out->low = pmu_quantile_sorted(r, used, (1 - conf) / 2);
	out->high = pmu_quantile_sorted(r, used, (1 + conf) / 2);
	out->used = used;
out:
	if (err)
		memset(out, 0, sizeof(*out));
	free(sa);
	free(sb);
	free(r);
	return err;
}

struct tagged {
	double v;
	int from_a;
};

static int cmp_tagged(const void *x, const void *y)
{
	double a = ((const struct tagged *)x)->v, b = ((const struct tagged *)y)->v;

	return (a > b) - (a < b);
}

/*
 * P(U <= k) * C(m+n, m) numerators for U over all rankings of m and n
 * values without ties: the generating function of U is the Gaussian binomial
 * coefficient prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i) (Harding, Applied
 * Statistics 33, 1984), built in place in m*n+1 coefficients.  Integer
 * arithmetic is exact: every coefficient is at most C(40, 20) < 2^38.
 * Returns twice the smaller tail beyond k as a probability, at most 1.
 */
static int mwu_exact_p(size_t m, size_t n, size_t k, double *p)
{
	size_t top = m * n;
	int64_t *c = calloc(top + 1, sizeof(*c));

	if (!c)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	c[0] = 1;
	for (size_t i = 1; i <= m; i++) {
		/* times (1 - q^(n+i)), from the top so each term is used once */
		for (size_t j = top; j >= n + i; j--)
			c[j] -= c[j - n - i];
		/* divided by (1 - q^i): times 1 + q^i + q^2i + ..., from the bottom */
		for (size_t j = i; j <= top; j++)
			c[j] += c[j - i];
	}

	int64_t total = 0, tail = 0;

	for (size_t j = 0; j <= top; j++) {
		total += c[j];
		if (j <= k)
			tail += c[j];
	}
	free(c);
	*p = fmin(1.0, 2.0 * (double)tail / (double)total);
	return 0;
}

int pmu_mann_whitney(const double *a, size_t na, const double *b, size_t nb, struct pmu_mwu *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	if ((err = check_sample(a, na, "A")) || (err = check_sample(b, nb, "B")))
		return err;

	size_t n = na + nb;
	struct tagged *t = malloc(n * sizeof(*t));

	if (!t)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < na; i++)
		t[i] = (struct tagged){ a[i], 1 };
	for (size_t i = 0; i < nb; i++)
		t[na + i] = (struct tagged){ b[i], 0 };
	qsort(t, n, sizeof(*t), cmp_tagged);

	/* mid-ranks: a run of equal values at 0-based i..j-1 shares the mean
	 * of the ranks i+1..j; each run of length c adds c^3 - c to the
	 * variance's tie term */
	double rank_sum_a = 0, tie_term = 0;
	bool ties = false;

	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && t[j].v == t[i].v; j++)
			;
		double c = (double)(j - i), rank = (double)(i + 1 + j) / 2;

		for (size_t k = i; k < j; k++)
			if (t[k].from_a)
				rank_sum_a += rank;
		if (j - i > 1) {
			ties = true;
			tie_term += c * c * c - c;
		}
	}
	free(t);

	double pairs = (double)na * (double)nb, dn = (double)n;
	double ua = rank_sum_a - (double)na * (double)(na + 1) / 2;

	out->u = ua;
	out->rank_biserial = 1 - 2 * ua / pairs;
	out->cles = (pairs - ua) / pairs;

	if (!ties && na <= PMU_MWU_EXACT_MAX && nb <= PMU_MWU_EXACT_MAX) {
		/* without ties U is an integer; the distribution is symmetric,
		 * so the upper tail beyond max(U) equals the lower one below min */
		size_t k = (size_t)fmin(ua, pairs - ua);

		out->exact = true;
		if ((err = mwu_exact_p(na, nb, k, &out->p_value))) {
			memset(out, 0, sizeof(*out));
			return err;
		}
		return 0;
	}

	double var = pairs / 12 * ((dn + 1) - tie_term / (dn * (dn - 1)));
	double dev = fabs(ua - pairs / 2) - 0.5;

	/* all values tied: no evidence either way.  A deviation within the
	 * continuity correction is none (scipy clips its p above 1 to 1). */
	if (!(var > 0) || dev <= 0)
		out->p_value = 1;
	else
		out->p_value = fmin(1.0, erfc(dev / sqrt(var) / M_SQRT2));
	return 0;
}

void pmu_wilson95(uint64_t k, uint64_t n, double *lo, double *hi)
{
	const double z = 1.959963984540054;
	double p, d, c, h;

	if (!n) {
		*lo = 0;
		*hi = 1;
		return;
	}
	p = (double)k / (double)n;
	d = 1 + z * z / (double)n;
	c = (p + z * z / (2.0 * (double)n)) / d;
	h = z * sqrt(p * (1 - p) / (double)n + z * z / (4.0 * (double)n * (double)n)) / d;
	*lo = c - h < 0 ? 0 : c - h;
	*hi = c + h > 1 ? 1 : c + h;
}
