/*
 * A/B comparison (compare.h).
 *
 * Comparability: two bundles are compared only when they measured the same
 * thing the same way: the same command, mode (unless they are two modes of
 * one --ab campaign: that is the observer-overhead comparison), counter
 * set, host (CPU, architecture, kernel) and timing settings (governor,
 * SMT, turbo, clocksource).  What an A/B comparison is for (other builds:
 * the images' build-ids and digests; the seed; the working directory) is
 * listed, never refused.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
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

/* One metric, A against B. */
static json_t *compare_metric(const char *name, const char *unit, json_t *ra, json_t *rb)
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
		json_object_set_new(o, "verdict", json_string(!sig ? "no significant difference"
							      : ci.low > 0 ? "higher in B" : "lower in B"));
	}
out:
	free(a);
	free(b);
	json_decref(va);
	json_decref(vb);
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

	if (!ca || !cb || strcmp(sget(ca, "id"), sget(cb, "id")) || strcmp(ma, "none") || !strcmp(mb, "none"))
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
		} else {
			double hi = json_real_value(json_object_get(w, "ci_high_percent")),
			       d = json_real_value(json_object_get(w, "delta_percent")),
			       lo = json_real_value(json_object_get(w, "ci_low_percent"));

			if (hi <= AN_OVERHEAD_OK)
				snprintf(st, sizeof(st), "mode %s adds %+.1f%% wall time (95%% CI %+.1f%% .. %+.1f%%): at most "
					 "%.0f%%, so its timings may be read as the program's own", mb, d, lo, hi, AN_OVERHEAD_OK);
			else
				snprintf(st, sizeof(st), "mode %s adds %+.1f%% wall time (95%% CI %+.1f%% .. %+.1f%%): more "
					 "than %.0f%%, so read its timings as relative, not as the program's own", mb, d, lo,
					 hi, AN_OVERHEAD_OK);
			json_object_set_new(o, "interpretable", json_boolean(hi <= AN_OVERHEAD_OK));
		}
		json_object_set_new(o, "statement", json_string(st));
	}
	return o;
}

json_t *an_compare(json_t *ra, json_t *rb)
{
	json_t *d = json_array(), *metrics = json_array(), *warnings = json_array(), *names = json_object(), *s;
	json_t *run_a = json_object_get(ra, "run"), *run_b = json_object_get(rb, "run");
	json_t *ca = json_object_get(run_a, "campaign"), *cb = json_object_get(run_b, "campaign");
	bool same_campaign = ca && cb && !strcmp(sget(ca, "id"), sget(cb, "id"));
	bool comparable = true;
	size_t i;
	const char *name;
	json_t *x, *ia, *ib;

	diff(d, "command (argv)", json_object_get(run_a, "argv"), json_object_get(run_b, "argv"), true);
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
		json_array_append_new(metrics, compare_metric(name, json_string_value(x), ra, rb));
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
	return json_pack("{s:b,s:b,s:o,s:o,s:o,s:o}", "comparable", comparable, "same_campaign", same_campaign,
			 "differences", d, "metrics", metrics, "overhead", overhead(ra, rb, metrics), "warnings",
			 warnings);
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
		json_array_append_new(out, v);
		*regression |= crossed;
	}
	return out;
}
