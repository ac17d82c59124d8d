/*
 * A/B comparison (compare.h).
 *
 * Comparability: two bundles are compared only when they measured the same
 * thing the same way: the same command, mode (unless they are two modes of
 * one --ab campaign: that is the observer-overhead comparison), counter
 * set, host (CPU, architecture, kernel) and timing settings (governor,
 * SMT, turbo, clocksource).  What an A/B comparison is for (other builds:
 * the images' build-ids and digests; the seed; the working directory) is
 * listed, never refused; so are the commands of two variants of one
 * interleaved campaign (pmurec --variants), which differ by design.  A
 * pair recorded one after the other is compared with a warning: the host
 * may have drifted in between, which interleaving would have controlled.
 *
 * Verdicts come from the 95% interval against a minimum effect, and the
 * observer overhead from its interval against 5%, never from a point
 * estimate.  The host's load outside the cohort (run.json host_load) is
 * host-wide: it is reported beside the metrics and warned about, never
 * made one of them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "oscall.h"
#include "runtime.h"
#include "stats.h"
#include "util.h"

#define BOOT_ITERS 10000
#define BOOT_SEED 0x9e3779b97f4a7c15ull

static const char *sget(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "?";
}

static void diff(json_t *out, const char *what, json_t *a, json_t *b, bool refusing)
{
	char *sa = a ? json_dumps(a, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS) : strdup("(none)");
	char *sb = b ? json_dumps(b, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS) : strdup("(none)");

	if (sa && sb && strcmp(sa, sb))
		json_array_append_new(out, json_pack("{s:s,s:s,s:s,s:b}", "what", what, "a", sa, "b", sb, "refusing",
						     refusing));
	free(sa);
	free(sb);
}

/* The counters as measured: name and encoding, in order. */
static json_t *counter_set(json_t *r)
{
	json_t *out = json_array(), *c;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(r, "counting"), "counters"), i, c)
		json_array_append_new(out, json_pack("{s:s,s:s,s:b,s:b}", "name", sget(c, "name"), "config",
						     sget(c, "config"), "exclude_user",
						     json_is_true(json_object_get(c, "exclude_user")), "exclude_kernel",
						     json_is_true(json_object_get(c, "exclude_kernel"))));
	return out;
}

static json_t *setting(json_t *r, const char *name)
{
	json_t *s;
	size_t i;

	json_array_foreach(json_object_get(r, "settings"), i, s)
		if (!strcmp(sget(s, "name"), name))
			return json_object_get(s, "value") ? json_object_get(s, "value") : json_object_get(s, "status");
	return NULL;
}

static json_t *images_by_path(json_t *r)
{
	json_t *out = json_object(), *im;
	size_t i;

	json_array_foreach(json_object_get(r, "images"), i, im)
		if (!strcmp(sget(im, "role"), "exec") || !json_object_get(im, "role"))
			json_object_set_new(out, sget(im, "path"),
					    json_pack("{s:s,s:s}", "build_id",
						      json_object_get(im, "build_id") ? sget(im, "build_id") : "-",
						      "sha256", json_object_get(im, "sha256") ? sget(im, "sha256") : "-"));
	return out;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static json_t *values_of(json_t *r, const char *metric, bool *est)
{
	json_t *out = json_array(), *run;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(r, "repetitions"), "runs"), i, run) {
		json_t *m = json_object_get(json_object_get(run, "metrics"), metric);

		if (m && !strcmp(sget(m, "status"), "ok")) {
			json_array_append(out, json_object_get(m, "value"));
			*est |= json_is_true(json_object_get(m, "estimate"));
		}
	}
	return out;
}

static double *to_doubles(json_t *arr, size_t *n)
{
	double *v = calloc(json_array_size(arr) + 1, sizeof(*v));
	json_t *x;
	size_t i;

	*n = 0;
	json_array_foreach(arr, i, x)
		v[(*n)++] = json_number_value(x);
	return v;
}

static double min_p(size_t na, size_t nb)
{
	double c = 1;

	/* C(na + nb, na), in doubles: only its size matters */
	for (size_t i = 1; i <= na; i++)
		c = c * (double)(nb + i) / (double)i;
	return 2.0 / c;
}

/* The source of a metric in a bundle (its first repetition with a value). */
static const char *source_of(json_t *r, const char *metric)
{
	json_t *run;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(r, "repetitions"), "runs"), i, run) {
		json_t *m = json_object_get(json_object_get(run, "metrics"), metric);

		if (m && !strcmp(sget(m, "status"), "ok"))
			return json_string_value(json_object_get(m, "source"));
	}
	return NULL;
}

/*
 * The verdict from the interval, in this order: inside the band of no
 * practical interest first (a significant 0.5% is still not worth acting
 * on), then a significant change whose whole interval is beyond the
 * minimum effect (its size is then known to be at least the interval's
 * near end), then a significant change that may be small, and otherwise
 * none, with the range the interval cannot rule out.
 */
const char *an_effect_verdict(double lo, double hi, bool significant, double min_effect, char *out, size_t n)
{
	if (lo >= -min_effect && hi <= min_effect) {
		snprintf(out, n, "no practical difference (the 95%% interval lies within +-%g%%%s)", min_effect,
			 significant ? "; significant, but smaller than the minimum effect" : "");
		return "no-practical-difference";
	}
	if (significant && lo > min_effect) {
		snprintf(out, n, "higher in B by at least %.1f%%", lo);
		return "higher";
	}
	if (significant && hi < -min_effect) {
		snprintf(out, n, "lower in B by at least %.1f%%", -hi);
		return "lower";
	}
	if (significant && lo > 0) {
		snprintf(out, n, "higher in B, significant, but may be below the %g%% minimum effect", min_effect);
		return "higher-maybe-below-min-effect";
	}
	if (significant && hi < 0) {
		snprintf(out, n, "lower in B, significant, but may be below the %g%% minimum effect", min_effect);
		return "lower-maybe-below-min-effect";
	}
	snprintf(out, n, "no significant difference (cannot rule out %+.1f%% .. %+.1f%%)", lo, hi);
	return "no-significant-difference";
}

/*
 * Where the interval lies against the level decides the sentence, never
 * the point estimate: a point of +2.6% inside -28% .. +66% says nothing
 * about whether the overhead is below 5%.
 */
const char *an_overhead_sentence(const char *mode, double point, double lo, double hi, double level, char *out,
				 size_t n)
{
	if (hi <= level) {
		snprintf(out, n, "mode %s adds below %g%% wall time with 95%% confidence (95%% CI %+.1f%% .. %+.1f%%, "
			 "point %+.1f%%), so its timings may be read as the program's own", mode, level, lo, hi, point);
		return "below";
	}
	if (lo > level) {
		snprintf(out, n, "mode %s adds at least %.1f%% wall time (95%% CI %+.1f%% .. %+.1f%%, point %+.1f%%): "
			 "more than %g%%, so read its timings as relative, not as the program's own", mode, lo, lo, hi,
			 point, level);
		return "above";
	}
	snprintf(out, n, "mode %s adds an overhead to wall time that this interval cannot bound (95%% CI %+.1f%% .. "
		 "%+.1f%%, point %+.1f%%): it cannot rule out more than %g%%, so read its timings as relative, or "
		 "record more repetitions", mode, lo, hi, point, level);
	return "undetermined";
}

/* One metric, A against B. */
static json_t *compare_metric(const char *name, const char *unit, json_t *ra, json_t *rb, double min_effect)
{
	bool ea = false, eb = false;
	json_t *va = values_of(ra, name, &ea), *vb = values_of(rb, name, &eb);
	size_t na, nb;
	double *a = to_doubles(va, &na), *b = to_doubles(vb, &nb);
	struct pmu_summary sa, sb;
	json_t *o = json_pack("{s:s,s:s,s:I,s:I,s:O,s:O,s:b}", "name", name, "unit", unit, "n_a", (json_int_t)na,
			      "n_b", (json_int_t)nb, "a_values", va, "b_values", vb, "estimate", ea || eb);

	if (!na || !nb) {
		json_object_set_new(o, "status", json_string("unavailable"));
		json_object_set_new(o, "reason", json_string(!na ? "A has no value of it" : "B has no value of it"));
		goto out;
	}
	if (pmu_summarize(a, na, &sa) || pmu_summarize(b, nb, &sb)) {
		json_object_set_new(o, "status", json_string("unavailable"));
		json_object_set_new(o, "reason", json_string("a value is not a finite number"));
		goto out;
	}
	json_object_set_new(o, "a_median", json_real(sa.median));
	json_object_set_new(o, "b_median", json_real(sb.median));
	if (sa.median == 0) {
		json_object_set_new(o, "status", json_string("unavailable"));
		json_object_set_new(o, "reason", json_string("A's median is 0: no relative change"));
		goto out;
	}
	json_object_set_new(o, "delta_percent", json_real(100.0 * (sb.median / sa.median - 1)));
	{
		const char *sa_ = source_of(ra, name), *sb_ = source_of(rb, name);

		if (sa_ && sb_ && strcmp(sa_, sb_)) {
			char why[400];

			snprintf(why, sizeof(why), "measured differently: A from %s, B from %s", sa_, sb_);
			json_object_set_new(o, "status", json_string("unavailable"));
			json_object_set_new(o, "reason", json_string(why));
			goto out;
		}
	}
	/* the smallest two-sided p the rank test can reach is 2 / C(na+nb, na):
	 * below 0.05 only from 4 + 4 (or 3 + 5) repetitions on; fewer can
	 * never be significant, so they get no verdict at all */
	if (na < AN_MIN_REPS_CI || nb < AN_MIN_REPS_CI || min_p(na, nb) >= 0.05) {
		char why[200];

		snprintf(why, sizeof(why), "too few repetitions to tell (A %zu, B %zu: the rank test cannot reach "
			 "p < 0.05 below 4 on each side, or 3 against 5)", na, nb);
		json_object_set_new(o, "status", json_string("undetermined"));
		json_object_set_new(o, "reason", json_string(why));
		json_object_set_new(o, "verdict_code", json_string("undetermined"));
		json_object_set_new(o, "verdict", json_string("undetermined"));
		goto out;
	}
	{
		struct pmu_ci ci;
		struct pmu_mwu mw;
		bool sig;

		if (pmu_bootstrap_median_ratio(a, na, b, nb, BOOT_ITERS, 0.95, BOOT_SEED, &ci)) {
			json_object_set_new(o, "status", json_string("unavailable"));
			json_object_set_new(o, "reason",
					    json_string("the ratio of medians is undefined in too many resamples (A's "
							"median is 0 in them)"));
			goto out;
		}
		json_object_set_new(o, "status", json_string("ok"));
		json_object_set_new(o, "ci_low_percent", json_real(100.0 * ci.low));
		json_object_set_new(o, "ci_high_percent", json_real(100.0 * ci.high));
		if (pmu_mann_whitney(a, na, b, nb, &mw)) {
			mw.p_value = 1; /* no test, no claim */
		} else {
			json_object_set_new(o, "p_value", json_real(mw.p_value));
			json_object_set_new(o, "effect_size", json_real(mw.rank_biserial));
		}
		/* significant: the bootstrap interval excludes 0 and the rank
		 * test agrees; either alone is too eager with ten repetitions */
		sig = (ci.low > 0 || ci.high < 0) && mw.p_value < 0.05;
		json_object_set_new(o, "significant", json_boolean(sig));
		{
			char sentence[300];
			const char *code = an_effect_verdict(100.0 * ci.low, 100.0 * ci.high, sig, min_effect, sentence,
							     sizeof(sentence));

			json_object_set_new(o, "verdict_code", json_string(code));
			json_object_set_new(o, "verdict", json_string(sentence));
			if (!strcmp(code, "higher") || !strcmp(code, "lower"))
				json_object_set_new(o, "at_least_percent",
						    json_real(!strcmp(code, "higher") ? 100.0 * ci.low : -100.0 * ci.high));
		}
	}
out:
	free(a);
	free(b);
	json_decref(va);
	json_decref(vb);
	return o;
}

/* A campaign's kind: "modes" (pmurec --ab) or "variants" (pmurec
 * --variants, spec 1.4); absent in older bundles, which means "modes". */
static const char *campaign_kind(json_t *c)
{
	const char *k = json_string_value(json_object_get(c, "kind"));

	return k ? k : "modes";
}

/* ---- host load ------------------------------------------------------------- */

/*
 * The cohort's own CPU time in one repetition, to subtract from the host's
 * busy time: the command's wait4 totals (every mode), else the sum of the
 * incarnations' CPU, else their task-clock.  NULL when none is known.
 */
static const char *const cohort_cpu_metrics[] = { "command.cpu", "cpu", "task-clock" };

static const char *cohort_cpu(json_t *run, double *ns)
{
	for (size_t k = 0; k < PMU_ARRAY_SIZE(cohort_cpu_metrics); k++) {
		json_t *m = json_object_get(json_object_get(run, "metrics"), cohort_cpu_metrics[k]);

		if (m && !strcmp(sget(m, "status"), "ok") && json_is_number(json_object_get(m, "value"))) {
			*ns = json_number_value(json_object_get(m, "value"));
			return cohort_cpu_metrics[k];
		}
	}
	return NULL;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

static double median_of(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * One side's host load (run.json host_load of each repetition, scope
 * system): per repetition the host's busy time outside the cohort (busy
 * minus the cohort's own CPU and, where recorded (recorder_cpu_ns), the
 * recorder's own)
 * and the steal time, each as a share of the host's CPU time over the
 * repetition (interval x CPUs).  /proc/stat counts in clock ticks, so
 * every value is an estimate with that resolution per CPU.  A repetition
 * whose cohort CPU is unknown has a steal share but no outside share: its
 * busy time would count the cohort as outside load.  *busy and *steal get
 * the medians, NAN when no repetition has one.
 */
static json_t *host_side(json_t *r, double *busy, double *steal)
{
	json_t *runs = json_array(), *run, *reasons = json_array(), *out;
	size_t i, nbusy = 0, nsteal = 0, without = 0,
		  nr = json_array_size(json_object_get(json_object_get(r, "repetitions"), "runs"));
	double *vb = calloc(nr + 1, sizeof(*vb)), *vs = calloc(nr + 1, sizeof(*vs));

	*busy = *steal = NAN;
	json_array_foreach(json_object_get(json_object_get(r, "repetitions"), "runs"), i, run) {
		json_t *h = json_object_get(run, "host_load");
		json_int_t rep = json_integer_value(json_object_get(run, "repetition"));
		double cap, cohort = 0, outside;
		const char *src;
		json_t *o;

		if (!h || strcmp(sget(h, "status"), "ok")) {
			without++;
			json_array_append_new(reasons, json_sprintf("repetition %lld: %s", (long long)rep,
								     !h ? "no host_load in run.json (recorded before spec 1.4)"
								     : json_object_get(h, "reason") ? sget(h, "reason")
												   : "host load unavailable"));
			continue;
		}
		cap = (double)json_integer_value(json_object_get(h, "interval_ns")) *
		      (double)json_integer_value(json_object_get(h, "cpus"));
		if (!(cap > 0) || !vb || !vs) {
			without++;
			json_array_append_new(reasons, json_sprintf("repetition %lld: %s", (long long)rep,
								     !vb || !vs ? "out of memory" : "an empty host_load interval"));
			continue;
		}
		vs[nsteal] = 100.0 * (double)json_integer_value(json_object_get(h, "steal_ns")) / cap;
		o = json_pack("{s:I,s:f,s:I,s:I}", "repetition", rep, "steal_percent", vs[nsteal++], "interval_ns",
			      json_integer_value(json_object_get(h, "interval_ns")), "cpus",
			      json_integer_value(json_object_get(h, "cpus")));
		if (json_object_get(h, "resolution_ns"))
			json_object_set(o, "resolution_ns", json_object_get(h, "resolution_ns"));
		src = cohort_cpu(run, &cohort);
		json_object_set_new(o, "cohort_cpu_source", src ? json_string(src) : json_null());
		if (src) {
			outside = (double)json_integer_value(json_object_get(h, "busy_ns")) - cohort -
				  (double)json_integer_value(json_object_get(h, "recorder_cpu_ns"));
			/* the busy time is counted in ticks, the cohort's CPU more
			 * finely: below 0 is within the resolution, not negative load */
			if (outside < 0)
				outside = 0;
			vb[nbusy] = 100.0 * outside / cap;
			json_object_set_new(o, "outside_busy_ns", json_integer((json_int_t)outside));
			json_object_set_new(o, "outside_busy_percent", json_real(vb[nbusy++]));
		}
		json_array_append_new(runs, o);
	}
	if (nbusy)
		*busy = median_of(vb, nbusy);
	if (nsteal)
		*steal = median_of(vs, nsteal);
	out = json_pack("{s:I,s:I,s:o,s:o}", "repetitions", (json_int_t)nsteal, "repetitions_without",
			(json_int_t)without, "runs", runs, "without", reasons);
	if (nbusy)
		json_object_set_new(out, "outside_busy_percent_median", json_real(*busy));
	if (nsteal)
		json_object_set_new(out, "steal_percent_median", json_real(*steal));
	free(vb);
	free(vs);
	return out;
}

/*
 * The host load of both sides and the warnings it calls for, appended to
 * warnings.  Host-wide numbers: never the cohort's, and said so.
 */
static json_t *host_load(json_t *ra, json_t *rb, json_t *warnings)
{
	double ba, sa, bb, sb;
	json_t *o = json_pack("{s:s,s:b,s:s,s:o,s:o,s:{s:f,s:f,s:f,s:f}}", "scope", "system", "estimate", 1, "note",
			      "host-wide, from /proc/stat clock ticks: not the cohort's; busy outside the cohort is "
			      "the host's busy time minus the cohort's own CPU and the recorder's (where recorded)",
			      "a", host_side(ra, &ba, &sa), "b", host_side(rb, &bb, &sb), "levels", "steal_percent",
			      AN_STEAL_LEVEL, "steal_difference_points", AN_STEAL_DIFF, "outside_busy_percent",
			      AN_OUTSIDE_BUSY_LEVEL, "outside_busy_difference_points", AN_OUTSIDE_BUSY_DIFF);
	char w[600];

	if (isnan(sa) || isnan(sb)) {
		snprintf(w, sizeof(w), "host load %s: whether other load or steal differed between A and B is unknown",
			 isnan(sa) && isnan(sb) ? "recorded in neither A nor B" : isnan(sa) ? "not recorded in A"
										    : "not recorded in B");
		json_object_set_new(o, "status", json_string("unavailable"));
		json_object_set_new(o, "reason", json_string(w));
		return o;
	}
	json_object_set_new(o, "status", json_string("ok"));
	if (sa > AN_STEAL_LEVEL || sb > AN_STEAL_LEVEL || fabs(sa - sb) > AN_STEAL_DIFF) {
		snprintf(w, sizeof(w), "host steal time (system-wide, estimate) was %.1f%% of the host's CPU time in A "
			 "and %.1f%% in B (medians; warned above %g%% on a side or a gap of more than %g percentage "
			 "point%s): the hypervisor took CPU time from this machine, which lengthens the cohort's times%s",
			 sa, sb, AN_STEAL_LEVEL, AN_STEAL_DIFF, AN_STEAL_DIFF == 1 ? "" : "s",
			 fabs(sa - sb) > AN_STEAL_DIFF ? " unequally between A and B" : "");
		json_array_append_new(warnings, json_string(w));
	}
	/* NAN when a side's cohort CPU is unknown: then no busy share to judge */
	if (!isnan(ba) && !isnan(bb) &&
	    (ba > AN_OUTSIDE_BUSY_LEVEL || bb > AN_OUTSIDE_BUSY_LEVEL || fabs(ba - bb) > AN_OUTSIDE_BUSY_DIFF)) {
		snprintf(w, sizeof(w), "the host was busy outside the cohort for %.1f%% of its CPU time in A and %.1f%% "
			 "in B (system-wide estimate, the recorder's own CPU left out where recorded; medians; warned above %g%% on a side or a "
			 "gap of more than %g percentage point%s): other load competed with the command%s", ba, bb,
			 AN_OUTSIDE_BUSY_LEVEL, AN_OUTSIDE_BUSY_DIFF, AN_OUTSIDE_BUSY_DIFF == 1 ? "" : "s",
			 fabs(ba - bb) > AN_OUTSIDE_BUSY_DIFF ? " unequally between A and B" : "");
		json_array_append_new(warnings, json_string(w));
	}
	return o;
}

/*
 * One bundle's host load (an_host_load_one() in compare.h): the same
 * per-repetition shares as a comparison's side, and a warning appended to
 * warnings when a median passes the level a comparison warns at.
 */
json_t *an_host_load_one(json_t *rep, json_t *warnings)
{
	double busy, steal;
	json_t *o = host_side(rep, &busy, &steal);
	char w[600];

	json_object_set_new(o, "scope", json_string("system"));
	json_object_set_new(o, "estimate", json_true());
	json_object_set_new(o, "note", json_string("host-wide, from /proc/stat clock ticks: not the cohort's; busy "
						   "outside the cohort is the host's busy time minus the cohort's own "
						   "CPU and the recorder's (where recorded)"));
	json_object_set_new(o, "levels", json_pack("{s:f,s:f}", "steal_percent", AN_STEAL_LEVEL,
						   "outside_busy_percent", AN_OUTSIDE_BUSY_LEVEL));
	if (isnan(steal)) {
		json_object_set_new(o, "status", json_string("unavailable"));
		json_object_set_new(o, "reason", json_string(json_object_get(rep, "run") &&
							     !json_object_get(json_object_get(rep, "run"), "host_load")
							     ? "no host_load in run.json (recorded before spec 1.4)"
							     : "no repetition has a host load"));
		return o;
	}
	json_object_set_new(o, "status", json_string("ok"));
	if (steal > AN_STEAL_LEVEL) {
		snprintf(w, sizeof(w), "host steal time (system-wide, estimate) was %.1f%% of the host's CPU time "
			 "(median; warned above %g%%): the hypervisor took CPU time from this machine, which lengthens "
			 "the cohort's times", steal, AN_STEAL_LEVEL);
		json_array_append_new(warnings, json_string(w));
	}
	if (!isnan(busy) && busy > AN_OUTSIDE_BUSY_LEVEL) {
		snprintf(w, sizeof(w), "the host was busy outside the cohort for %.1f%% of its CPU time (system-wide "
			 "estimate, the recorder's own CPU left out where recorded; median; warned above %g%%): other load competed with the "
			 "command", busy, AN_OUTSIDE_BUSY_LEVEL);
		json_array_append_new(warnings, json_string(w));
	}
	return o;
}

/* The observer overhead: A the none-mode run, B a traced mode, of one
 * --ab campaign; with the run order taken from the bundles. */
static json_t *overhead(json_t *ra, json_t *rb, json_t *metrics)
{
	json_t *ca = json_object_get(json_object_get(ra, "run"), "campaign"),
	       *cb = json_object_get(json_object_get(rb, "run"), "campaign"), *o, *m, *order, *list;
	const char *ma = sget(json_object_get(ra, "run"), "mode"), *mb = sget(json_object_get(rb, "run"), "mode");
	size_t i;
	char st[400];

	if (!ca || !cb || strcmp(sget(ca, "id"), sget(cb, "id")) || strcmp(campaign_kind(ca), "modes") ||
	    strcmp(ma, "none") || !strcmp(mb, "none"))
		return json_pack("{s:b,s:s}", "applicable", 0, "why",
				 "an overhead needs A in mode none and B traced, from one pmurec --ab campaign");
	order = json_array();
	{
		/* positions of both bundles' runs, merged into the campaign's order */
		json_t *pos = json_object(), *run;
		json_t *rs[2] = { ra, rb };

		for (int s = 0; s < 2; s++)
			json_array_foreach(json_object_get(json_object_get(rs[s], "repetitions"), "runs"), i, run) {
				char key[32];

				snprintf(key, sizeof(key), "%08lld",
					 (long long)json_integer_value(json_object_get(run, "campaign_position")));
				json_object_set_new(pos, key, json_pack("{s:s,s:I,s:I}", "mode", s ? mb : ma, "repetition",
									json_integer_value(json_object_get(run, "repetition")),
									"position",
									json_integer_value(json_object_get(run, "campaign_position"))));
			}
		{
			const char *key;
			json_t *v;
			/* keys are zero-padded: sorted order is position order */
			const char **keys = calloc(json_object_size(pos) + 1, sizeof(*keys));
			size_t n = 0;

			json_object_foreach(pos, key, v)
				keys[n++] = key;
			qsort(keys, n, sizeof(*keys), cmp_str);
			for (size_t k = 0; k < n; k++)
				json_array_append(order, json_object_get(pos, keys[k]));
			free(keys);
		}
		json_decref(pos);
	}
	list = json_array();
	json_array_foreach(metrics, i, m) {
		const char *name = sget(m, "name");

		if (strcmp(sget(m, "status"), "ok"))
			continue;
		json_array_append_new(list, json_pack("{s:s,s:O,s:O,s:O}", "name", name, "overhead_percent",
						      json_object_get(m, "delta_percent"), "ci_low_percent",
						      json_object_get(m, "ci_low_percent"), "ci_high_percent",
						      json_object_get(m, "ci_high_percent")));
	}
	o = json_pack("{s:b,s:s,s:s,s:s,s:o,s:o}", "applicable", 1, "campaign", sget(ca, "id"), "a_mode", ma, "b_mode",
		      mb, "order", order, "metrics", list);
	{
		json_t *w = NULL;

		json_array_foreach(metrics, i, m)
			if (!strcmp(sget(m, "name"), "wall") && !strcmp(sget(m, "status"), "ok"))
				w = m;
		if (!w) {
			snprintf(st, sizeof(st), "the overhead on wall time cannot be stated (no interval: %s)",
				 "too few repetitions, or no wall time on a side");
			json_object_set_new(o, "interpretable", json_null());
			json_object_set_new(o, "verdict", json_string("undetermined"));
		} else {
			const char *v = an_overhead_sentence(mb, json_real_value(json_object_get(w, "delta_percent")),
							     json_real_value(json_object_get(w, "ci_low_percent")),
							     json_real_value(json_object_get(w, "ci_high_percent")),
							     AN_OVERHEAD_OK, st, sizeof(st));

			json_object_set_new(o, "interpretable", json_boolean(!strcmp(v, "below")));
			json_object_set_new(o, "verdict", json_string(v));
		}
		json_object_set_new(o, "level_percent", json_real(AN_OVERHEAD_OK));
		json_object_set_new(o, "statement", json_string(st));
	}
	return o;
}

/*
 * What makes the pair comparable, and how firmly: variants of one
 * interleaved campaign (their commands differ by design), two modes or two
 * runs of one interleaved campaign, or two recordings made one after the
 * other (the same command; the host may have drifted in between).
 */
static json_t *comparability(json_t *ra, json_t *rb, bool variants, bool same_campaign, bool same_argv,
			     bool comparable, json_t *warnings)
{
	json_t *ca = json_object_get(json_object_get(ra, "run"), "campaign"),
	       *cb = json_object_get(json_object_get(rb, "run"), "campaign"), *w = json_array(), *o;
	const char *basis;
	char st[600];

	if (variants) {
		basis = "variants";
		snprintf(st, sizeof(st), "variants of one interleaved campaign (%s): A is variant '%s', B variant '%s'; "
			 "their commands differ by design", sget(ca, "id"), sget(ca, "variant"), sget(cb, "variant"));
	} else if (same_campaign && same_argv) {
		basis = "campaign";
		snprintf(st, sizeof(st), "runs of one interleaved campaign (%s, A mode %s, B mode %s)", sget(ca, "id"),
			 sget(json_object_get(ra, "run"), "mode"), sget(json_object_get(rb, "run"), "mode"));
	} else if (same_argv) {
		basis = "sequential";
		snprintf(st, sizeof(st), "the same command recorded one after the other, not interleaved in one campaign");
		json_array_append_new(w, json_string("A and B were recorded one after the other, not interleaved in one "
						     "campaign: drift of the host between the recordings (other load, "
						     "steal, frequency, temperature) is not controlled and can look like a "
						     "difference; record both with pmurec --variants (or --ab) to "
						     "interleave them"));
	} else {
		basis = "different-commands";
		snprintf(st, sizeof(st), "different commands, not variants of one campaign: not comparable%s",
			 comparable ? "" : " (--force to compare anyway)");
	}
	o = json_pack("{s:s,s:b,s:s}", "basis", basis, "interleaved", variants || (same_campaign && same_argv),
		      "statement", st);
	if (same_campaign) {
		json_object_set_new(o, "campaign", json_string(sget(ca, "id")));
		json_object_set_new(o, "campaign_kind", json_string(campaign_kind(ca)));
	}
	json_object_set_new(o, "warnings", w);
	{
		size_t i;
		json_t *x;

		json_array_foreach(w, i, x)
			json_array_append(warnings, x);
	}
	return o;
}

/* ---- the profiles --------------------------------------------------------------- */

static void wilson95(double k, double n, double *lo, double *hi)
{
	const double z = 1.959963984540054;
	double p = n > 0 ? k / n : 0, d = 1 + z * z / n, c, h;

	if (n <= 0) {
		*lo = 0;
		*hi = 1;
		return;
	}
	c = (p + z * z / (2 * n)) / d;
	h = z * sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d;
	*lo = fmax(0, c - h);
	*hi = fmin(1, c + h);
}

/* A function's identity across bundles: its object's build-id (else its
 * path) and its symbol, never its name alone. */
static char *fn_key(json_t *r)
{
	char *k = NULL;
	const char *obj = json_object_get(r, "build_id") ? sget(r, "build_id") : sget(r, "object");
	const char *sym = json_is_string(json_object_get(r, "symbol")) ? sget(r, "symbol") : sget(r, "function");

	if (asprintf(&k, "%s\x1f%s\x1f%s", sget(r, "status"), obj, sym) < 0)
		return NULL;
	return k;
}

static json_t *find_program(json_t *rep, const char *name)
{
	json_t *pr;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(rep, "profile"), "programs"), i, pr)
		if (!strcmp(sget(pr, "program"), name))
			return pr;
	return NULL;
}

/* The row of the other side with the same symbol from another build-id. */
static json_t *other_build(json_t *rows, json_t *r)
{
	json_t *x;
	size_t i;

	if (!json_is_string(json_object_get(r, "symbol")))
		return NULL;
	json_array_foreach(rows, i, x)
		if (json_is_string(json_object_get(x, "symbol")) && !strcmp(sget(x, "symbol"), sget(r, "symbol")) &&
		    strcmp(json_object_get(x, "build_id") ? sget(x, "build_id") : "-",
			   json_object_get(r, "build_id") ? sget(r, "build_id") : "-"))
			return x;
	return NULL;
}

/* A function listed on one side only: a verdict, never a difference
 * against a 0 that was not measured (the other side may list only its
 * top functions). */
static json_t *one_side(json_t *r, double n, int side, json_t *other, json_t *oth_rows)
{
	char v[600];
	json_t *ob = other_build(json_object_get(other, "self"), r), *o;
	const char *s = side ? "B" : "A", *t = side ? "A" : "B";

	if (ob)
		snprintf(v, sizeof(v), "only in %s: %s has `%s` from another build (build-id %s), not compared", s, t,
			 sget(ob, "symbol"), json_object_get(ob, "build_id") ? sget(ob, "build_id") : "none");
	else if (json_is_true(json_object_get(other, "self_complete")))
		snprintf(v, sizeof(v), "only in %s: no self samples in %s", s, t);
	else
		snprintf(v, sizeof(v), "only in %s's listed functions: %s lists its top %zu only", s, t,
			 json_array_size(oth_rows));
	o = json_pack("{s:O,s:O,s:O?,s:O?,s:s,s:s}", "function", json_object_get(r, "function"), "symbol",
		      json_object_get(r, "symbol"), "object", json_object_get(r, "object"), "build_id",
		      json_object_get(r, "build_id"), "verdict", v, "verdict_code", side ? "only-b" : "only-a");
	json_object_set(o, side ? "b_samples" : "a_samples", json_object_get(r, "samples"));
	json_object_set_new(o, side ? "b_share_percent" : "a_share_percent",
			    json_real(n > 0 ? 100.0 * (double)json_integer_value(json_object_get(r, "samples")) / n : 0));
	return o;
}

/*
 * Per program (by name) that both profiles have: each function's self
 * share in A and in B, matched by build-id and symbol, and the difference
 * B - A in percentage points with its 95% interval by Newcombe's hybrid
 * score method (his method 10, from the two Wilson intervals); a verdict
 * from the interval.  Shares are estimates from samples.
 */
static json_t *profile_diff(json_t *ra, json_t *rb)
{
	json_t *pa = json_object_get(ra, "profile"), *pb = json_object_get(rb, "profile"), *progs = json_array(), *x;
	json_t *out;
	size_t i, k;

	if (strcmp(sget(pa, "status"), "ok") || strcmp(sget(pb, "status"), "ok")) {
		char why[600];

		snprintf(why, sizeof(why), "no profile to compare: A's profile is %s, B's %s", sget(pa, "status"),
			 sget(pb, "status"));
		json_decref(progs);
		return json_pack("{s:s,s:s}", "status", "unavailable", "reason", why);
	}
	json_array_foreach(json_object_get(pa, "programs"), i, x) {
		json_t *y = find_program(rb, sget(x, "program")), *fa = json_array(), *r;
		double na = (double)json_integer_value(json_object_get(x, "samples")), nb;
		json_t *seen = json_object();

		if (!y) {
			json_decref(fa);
			json_decref(seen);
			json_array_append_new(progs, json_pack("{s:O,s:s}", "program", json_object_get(x, "program"),
							       "verdict", "only in A"));
			continue;
		}
		nb = (double)json_integer_value(json_object_get(y, "samples"));
		json_array_foreach(json_object_get(x, "self"), k, r) {
			char *key = fn_key(r);
			json_t *m = NULL, *q;
			size_t j;

			json_array_foreach(json_object_get(y, "self"), j, q) {
				char *kq = fn_key(q);

				if (key && kq && !strcmp(key, kq))
					m = q;
				free(kq);
				if (m)
					break;
			}
			if (key)
				json_object_set_new(seen, key, json_true());
			free(key);
			if (!m) {
				json_array_append_new(fa, one_side(r, na, 0, y, json_object_get(y, "self")));
				continue;
			}
			{
				double ka = (double)json_integer_value(json_object_get(r, "samples")),
				       kb = (double)json_integer_value(json_object_get(m, "samples"));
				double p1 = ka / na, p2 = kb / nb, l1, u1, l2, u2, d, lo, hi;
				char v[200];
				const char *code;

				wilson95(ka, na, &l1, &u1);
				wilson95(kb, nb, &l2, &u2);
				d = p2 - p1;
				lo = d - sqrt((p2 - l2) * (p2 - l2) + (u1 - p1) * (u1 - p1));
				hi = d + sqrt((u2 - p2) * (u2 - p2) + (p1 - l1) * (p1 - l1));
				if (lo > 0) {
					code = "higher";
					snprintf(v, sizeof(v), "higher in B by %.1f to %.1f points", 100 * lo, 100 * hi);
				} else if (hi < 0) {
					code = "lower";
					snprintf(v, sizeof(v), "lower in B by %.1f to %.1f points", -100 * hi, -100 * lo);
				} else {
					code = "no-significant-difference";
					snprintf(v, sizeof(v), "no significant difference (%+.1f to %+.1f points)", 100 * lo,
						 100 * hi);
				}
				json_array_append_new(fa, json_pack("{s:O,s:O,s:O?,s:O?,s:I,s:f,s:I,s:f,s:f,s:f,s:f,s:s,s:s}",
					"function", json_object_get(r, "function"), "symbol", json_object_get(r, "symbol"),
					"object", json_object_get(r, "object"), "build_id", json_object_get(r, "build_id"),
					"a_samples", (json_int_t)ka, "a_share_percent", 100 * p1, "b_samples", (json_int_t)kb,
					"b_share_percent", 100 * p2, "delta_points", 100 * d, "ci_low_points", 100 * lo,
					"ci_high_points", 100 * hi, "verdict", v, "verdict_code", code));
			}
		}
		json_array_foreach(json_object_get(y, "self"), k, r) {
			char *key = fn_key(r);

			if (key && !json_object_get(seen, key))
				json_array_append_new(fa, one_side(r, nb, 1, x, json_object_get(x, "self")));
			free(key);
		}
		json_decref(seen);
		json_array_append_new(progs, json_pack("{s:O,s:I,s:I,s:o}", "program", json_object_get(x, "program"),
						       "a_samples", (json_int_t)na, "b_samples", (json_int_t)nb,
						       "functions", fa));
	}
	json_array_foreach(json_object_get(pb, "programs"), i, x)
		if (!find_program(ra, sget(x, "program")))
			json_array_append_new(progs, json_pack("{s:O,s:s}", "program", json_object_get(x, "program"),
							       "verdict", "only in B"));
	out = json_pack("{s:s,s:b,s:s,s:o}", "status", "ok", "estimate", true, "basis",
			"self shares of the listed functions per program, matched by build-id and symbol (never by "
			"name alone); B - A in percentage points with a 95% Newcombe hybrid score interval",
			"programs", progs);
	return out;
}

json_t *an_compare(json_t *ra, json_t *rb, const struct an_compare_opts *opts)
{
	json_t *d = json_array(), *metrics = json_array(), *warnings = json_array(), *names = json_object(), *s;
	json_t *run_a = json_object_get(ra, "run"), *run_b = json_object_get(rb, "run");
	json_t *ca = json_object_get(run_a, "campaign"), *cb = json_object_get(run_b, "campaign");
	bool same_campaign = ca && cb && !strcmp(sget(ca, "id"), sget(cb, "id"));
	/* variants of one campaign (pmurec --variants): different commands by
	 * design, run interleaved, so their difference is the program's */
	bool variants = same_campaign && !strcmp(campaign_kind(ca), "variants") &&
			!strcmp(campaign_kind(cb), "variants");
	bool comparable = true, same_argv;
	size_t i;
	const char *name;
	json_t *x, *ia, *ib, *cmpb, *hl;

	{
		char *sa = json_dumps(json_object_get(run_a, "argv"), JSON_COMPACT | JSON_ENCODE_ANY),
		     *sb = json_dumps(json_object_get(run_b, "argv"), JSON_COMPACT | JSON_ENCODE_ANY);

		same_argv = sa && sb && !strcmp(sa, sb);
		free(sa);
		free(sb);
	}
	diff(d, "command (argv)", json_object_get(run_a, "argv"), json_object_get(run_b, "argv"), !variants);
	if (variants)
		diff(d, "variant", json_object_get(ca, "variant"), json_object_get(cb, "variant"), false);
	diff(d, "mode", json_object_get(run_a, "mode"), json_object_get(run_b, "mode"), !same_campaign);
	if (json_object_get(ra, "counting") && json_object_get(rb, "counting")) {
		json_t *xa = counter_set(ra), *xb = counter_set(rb);

		diff(d, "counters", xa, xb, true);
		json_decref(xa);
		json_decref(xb);
	}
	diff(d, "host cpu", json_object_get(json_object_get(ra, "host"), "cpu"),
	     json_object_get(json_object_get(rb, "host"), "cpu"), true);
	diff(d, "host arch", json_object_get(json_object_get(ra, "host"), "arch"),
	     json_object_get(json_object_get(rb, "host"), "arch"), true);
	diff(d, "host kernel", json_object_get(json_object_get(ra, "host"), "kernel"),
	     json_object_get(json_object_get(rb, "host"), "kernel"), true);
	{
		/* the names of provenance.json's settings (backends/linux/probe.c) */
		static const char *const st[] = { "cpufreq-governor", "smt-active", "turbo-disabled", "clocksource" };

		for (size_t k = 0; k < PMU_ARRAY_SIZE(st); k++) {
			char what[64];

			snprintf(what, sizeof(what), "setting %s", st[k]);
			diff(d, what, setting(ra, st[k]), setting(rb, st[k]), true);
		}
	}
	diff(d, "seed", json_object_get(run_a, "seed"), json_object_get(run_b, "seed"), false);
	diff(d, "working directory", json_object_get(run_a, "cwd"), json_object_get(run_b, "cwd"), false);
	diff(d, "configuration hash", json_object_get(ra, "config_hash"), json_object_get(rb, "config_hash"), false);
	ia = images_by_path(ra);
	ib = images_by_path(rb);
	json_object_foreach(ia, name, x) {
		char what[600];

		snprintf(what, sizeof(what), "image %s", name);
		diff(d, what, x, json_object_get(ib, name), false);
	}
	json_object_foreach(ib, name, x)
		if (!json_object_get(ia, name)) {
			char what[600];

			snprintf(what, sizeof(what), "image %s", name);
			diff(d, what, NULL, x, false);
		}
	json_decref(ia);
	json_decref(ib);
	json_array_foreach(d, i, x)
		comparable &= !json_is_true(json_object_get(x, "refusing"));

	/* every metric either side has */
	{
		json_t *rs[2] = { ra, rb };

		for (int k = 0; k < 2; k++)
			json_array_foreach(json_object_get(json_object_get(rs[k], "repetitions"), "summary"), i, s)
				if (!json_object_get(names, sget(s, "name")))
					json_object_set_new(names, sget(s, "name"), json_string(sget(s, "unit")));
	}
	json_object_foreach(names, name, x)
		json_array_append_new(metrics, compare_metric(name, json_string_value(x), ra, rb, opts->min_effect));
	json_decref(names);
	{
		json_int_t na = json_integer_value(json_object_get(json_object_get(ra, "repetitions"), "n")),
			   nb = json_integer_value(json_object_get(json_object_get(rb, "repetitions"), "n"));
		char w[200];

		if (na < AN_MIN_REPS_FIRM || nb < AN_MIN_REPS_FIRM) {
			snprintf(w, sizeof(w), "fewer than %d repetitions per side (A %lld, B %lld): the statistics are weak",
				 AN_MIN_REPS_FIRM, (long long)na, (long long)nb);
			json_array_append_new(warnings, json_string(w));
		}
	}
	cmpb = comparability(ra, rb, variants, same_campaign, same_argv, comparable, warnings);
	{
		/* the host-load warnings are comparability warnings too */
		json_t *hw = json_array();

		hl = host_load(ra, rb, hw);
		json_array_foreach(hw, i, x) {
			json_array_append(json_object_get(cmpb, "warnings"), x);
			json_array_append(warnings, x);
		}
		json_decref(hw);
	}
	return json_pack("{s:b,s:b,s:o,s:o,s:f,s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "comparable", comparable, "same_campaign",
			 same_campaign, "comparability", cmpb, "differences", d, "min_effect_percent", opts->min_effect,
			 "min_effect_source", opts->min_effect_given ? "--min-effect" : "default", "metrics", metrics,
			 "overhead", overhead(ra, rb, metrics), "host_load", hl, "warnings", warnings, "profile",
			 profile_diff(ra, rb), "syscalls", an_oscall_compare(ra, rb), "runtime", an_runtime_compare(ra, rb));
}

int an_gate_parse(const char *expr, char *metric, size_t n, double *pct, char *why, size_t wn)
{
	const char *colon = strrchr(expr, ':');
	size_t ml;
	char *end;

	if (!colon || colon == expr) {
		snprintf(why, wn, "'%s' is not METRIC:+N%% (e.g. wall.median:+5%%)", expr);
		return -1;
	}
	ml = (size_t)(colon - expr);
	if (ml >= 7 && !strncmp(colon - 7, ".median", 7))
		ml -= 7;
	if (ml == 0 || ml >= n) {
		snprintf(why, wn, "'%s': no metric name", expr);
		return -1;
	}
	memcpy(metric, expr, ml);
	metric[ml] = '\0';
	if (colon[1] != '+' && colon[1] != '-') {
		snprintf(why, wn, "'%s': the threshold needs a sign, +N%% (an increase fails) or -N%% (a decrease fails)",
			 expr);
		return -1;
	}
	for (const char *c = colon + 2; *c && *c != '%'; c++)
		if ((*c < '0' || *c > '9') && *c != '.') {
			snprintf(why, wn, "'%s': the threshold must be a decimal percentage like +5%% or -2.5%%", expr);
			return -1;
		}
	*pct = strtod(colon + 1, &end);
	if (end == colon + 2 || strcmp(end, "%") || !isfinite(*pct) || *pct == 0) {
		snprintf(why, wn, "'%s': the threshold must be a non-zero percentage like +5%%", expr);
		return -1;
	}
	return 0;
}

json_t *an_gates(json_t *cmp, json_t *exprs, bool *regression, bool *unusable)
{
	json_t *out = json_array(), *e;
	size_t i;

	*regression = *unusable = false;
	json_array_foreach(exprs, i, e) {
		const char *expr = json_string_value(e);
		char metric[256], why[400], msg[600];
		double pct;
		json_t *m = NULL, *x, *v;
		size_t k;

		if (an_gate_parse(expr, metric, sizeof(metric), &pct, why, sizeof(why))) {
			json_array_append_new(out, json_pack("{s:s,s:s,s:s}", "expr", expr, "status", "unusable", "message",
							     why));
			*unusable = true;
			continue;
		}
		json_array_foreach(json_object_get(cmp, "metrics"), k, x)
			if (!strcmp(sget(x, "name"), metric))
				m = x;
		if (!m || strcmp(sget(m, "status"), "ok")) {
			if (!m) {
				char names[300] = "";
				size_t len = 0;

				json_array_foreach(json_object_get(cmp, "metrics"), k, x)
					if (!strcmp(sget(x, "status"), "ok") && len + strlen(sget(x, "name")) + 3 < sizeof(names))
						len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", len ? ", " : "",
									sget(x, "name"));
				snprintf(msg, sizeof(msg), "metric '%s' is not in these bundles (compared: %s)", metric, names);
			} else {
				snprintf(msg, sizeof(msg), "metric '%s' cannot be judged: %s", metric, sget(m, "reason"));
			}
			json_array_append_new(out, json_pack("{s:s,s:s,s:f,s:s,s:s}", "expr", expr, "metric", metric,
							     "threshold_percent", pct, "status", "unusable", "message", msg));
			*unusable = true;
			continue;
		}
		double lo = json_real_value(json_object_get(m, "ci_low_percent")),
		       hi = json_real_value(json_object_get(m, "ci_high_percent")),
		       d = json_real_value(json_object_get(m, "delta_percent"));
		/* crossed significantly: the whole 95% interval is beyond the threshold */
		bool crossed = json_is_true(json_object_get(m, "significant")) && (pct > 0 ? lo > pct : hi < pct);

		bool sig = json_is_true(json_object_get(m, "significant"));

		snprintf(msg, sizeof(msg), "%s: %+.2f%% (95%% CI %+.2f%% .. %+.2f%%, p %.3f) against a threshold of "
			 "%+.2f%%: %s", metric, d, lo, hi, json_real_value(json_object_get(m, "p_value")), pct,
			 crossed ? "crossed"
			 : !sig ? "not crossed: the change is not significant"
			 : (pct > 0 ? hi > pct : lo < pct) ? "not crossed significantly (the interval straddles the threshold)"
							     : "not crossed");
		v = json_pack("{s:s,s:s,s:f,s:s,s:f,s:f,s:f,s:s}", "expr", expr, "metric", metric, "threshold_percent", pct,
			      "status", crossed ? "fail" : "pass", "delta_percent", d, "ci_low_percent", lo,
			      "ci_high_percent", hi, "message", msg);
		{
			/* the gate is the user's threshold, honoured as given; a
			 * threshold inside the minimum effect is said to be */
			double me = json_real_value(json_object_get(cmp, "min_effect_percent"));

			if (fabs(pct) < me) {
				char more[700];

				snprintf(more, sizeof(more), "%s (the threshold is below the %g%% minimum effect: honoured as "
					 "given)", msg, me);
				json_object_set_new(v, "message", json_string(more));
				json_object_set_new(v, "below_min_effect", json_true());
			}
		}
		json_array_append_new(out, v);
		*regression |= crossed;
	}
	return out;
}
