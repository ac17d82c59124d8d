/*
 * The bundle report (model.h): validation, the documents of the first
 * repetition, and the metrics of every repetition.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checks.h"
#include "error.h"
#include "model.h"
#include "spec_json.h"
#include "stats.h"
#include "trace.h"
#include "util.h"
#include "validate.h"

static const char *sget(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "?";
}

void an_fmt_value(double v, const char *unit, char *out, size_t n)
{
	if (!strcmp(unit, "ns"))
		snprintf(out, n, "%.3f ms", v / 1e6);
	else if (!strcmp(unit, "bytes"))
		snprintf(out, n, "%.1f KiB", v / 1024.0);
	else if (!strcmp(unit, "ratio"))
		snprintf(out, n, "%.3f", v);
	else
		snprintf(out, n, "%.0f", v);
}

void an_fmt_count(json_t *r, char *out, size_t n)
{
	json_t *v = json_object_get(r, "value"), *vns = json_object_get(r, "value_ns");
	char num[64];

	if (strcmp(sget(r, "status"), "ok") || (!v && !vns)) {
		snprintf(out, n, "not counted");
		return;
	}
	if (vns)
		snprintf(num, sizeof(num), "%.3f ms", (double)json_integer_value(vns) / 1e6);
	else
		snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
	if (json_is_true(json_object_get(r, "estimate")))
		snprintf(out, n, "~%s (estimate, counted %.1f%% of the time)", num,
			 (double)json_integer_value(json_object_get(r, "running_ppm")) / 1e4);
	else if (json_is_true(json_object_get(r, "suspect_zero")))
		snprintf(out, n, "%s (suspect zero: a hardware counter that read 0)", num);
	else
		snprintf(out, n, "%s", num);
}

void an_fmt_compared(json_t *x, struct an_cells *c)
{
	const char *unit = sget(x, "unit"), *st = sget(x, "status");

	snprintf(c->va, sizeof(c->va), "n/a");
	snprintf(c->vb, sizeof(c->vb), "n/a");
	c->ch[0] = c->ci[0] = c->p[0] = '\0';
	c->verdict = !strcmp(st, "ok") ? sget(x, "verdict") : sget(x, "reason");
	if (json_object_get(x, "a_median"))
		an_fmt_value(json_real_value(json_object_get(x, "a_median")), unit, c->va, sizeof(c->va));
	if (json_object_get(x, "b_median"))
		an_fmt_value(json_real_value(json_object_get(x, "b_median")), unit, c->vb, sizeof(c->vb));
	if (json_object_get(x, "delta_percent"))
		snprintf(c->ch, sizeof(c->ch), "%+.1f%%", json_real_value(json_object_get(x, "delta_percent")));
	if (!strcmp(st, "ok"))
		snprintf(c->ci, sizeof(c->ci), "%+.1f%% .. %+.1f%%", json_real_value(json_object_get(x, "ci_low_percent")),
			 json_real_value(json_object_get(x, "ci_high_percent")));
	if (json_object_get(x, "p_value"))
		snprintf(c->p, sizeof(c->p), "%.3f", json_real_value(json_object_get(x, "p_value")));
}

/* ---- output files ------------------------------------------------------------ */

FILE *an_out_open(struct an_out *o, const char *path)
{
	struct stat st;

	memset(o, 0, sizeof(*o));
	o->path = strdup(path);
	if (!o->path)
		return NULL;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		o->f = fopen(path, "w");
		return o->f;
	}
	if (asprintf(&o->tmp, "%s.pmuanalyze-%d.tmp", path, (int)getpid()) < 0) {
		o->tmp = NULL;
		return NULL;
	}
	o->f = fopen(o->tmp, "wx");
	return o->f;
}

int an_out_close(struct an_out *o, bool ok)
{
	int err = 0;

	if (o->f && fclose(o->f)) {
		fprintf(stderr, "pmuanalyze: cannot write '%s': %s\n", o->path, strerror(errno));
		err = -1;
	}
	if (o->tmp) {
		if (ok && !err && rename(o->tmp, o->path)) {
			fprintf(stderr, "pmuanalyze: cannot write '%s': %s\n", o->path, strerror(errno));
			err = -1;
		}
		if (!ok || err)
			unlink(o->tmp);
	}
	free(o->path);
	free(o->tmp);
	memset(o, 0, sizeof(*o));
	return err;
}

/* ---- validation ------------------------------------------------------------ */

struct failures {
	json_t *list;
};

static void on_finding(void *ctx, const struct pmu_finding *f)
{
	struct failures *fl = ctx;
	char where[600];

	if (f->severity != PMU_SEV_ERROR)
		return;
	if (f->file && f->record)
		snprintf(where, sizeof(where), "%s:%llu", f->file, (unsigned long long)f->record);
	else
		snprintf(where, sizeof(where), "%s", f->file ? f->file : "");
	json_array_append_new(fl->list, json_pack("{s:s,s:s,s:s}", "check", pmu_checks[f->check].id, "where", where,
						  "message", f->message));
}

/* ---- per-repetition documents ---------------------------------------------- */

static void rep_path(int rep, const char *name, char *out, size_t n)
{
	if (rep <= 1)
		snprintf(out, n, "%s", name);
	else
		snprintf(out, n, "repeats/%d/%s", rep, name);
}

/* Each collector's final status, evidence and drops, from its lifecycle. */
static json_t *collector_fates(const struct pmu_bundle *b, int rep, json_t *run)
{
	json_t *out = json_array(), *c;
	size_t i;

	json_array_foreach(json_object_get(run, "collectors"), i, c) {
		char rel[300], path[400], *txt = NULL, *last = NULL;
		json_t *fin = NULL;
		const char *evidence = NULL;
		json_int_t dropped = 0, malformed = 0;
		char ev[400] = "";

		snprintf(rel, sizeof(rel), "collectors/%s/lifecycle.jsonl", sget(c, "name"));
		rep_path(rep, rel, path + 5, sizeof(path) - 5);
		memcpy(path, "data/", 5);
		if (pmu_read_file(b->rootfd, path, 64u << 20, &txt, NULL) == 0) {
			for (char *line = strtok_r(txt, "\n", &last); line; line = strtok_r(NULL, "\n", &last)) {
				json_t *r = json_loads(line, 0, NULL);
				const char *e = sget(r, "event");

				if (!strcmp(e, "attached") && json_object_get(r, "evidence")) {
					evidence = sget(r, "evidence");
					snprintf(ev, sizeof(ev), "%s", evidence);
				} else if (!strcmp(e, "drop")) {
					dropped += json_integer_value(json_object_get(r, "count"));
				} else if (!strcmp(e, "malformed")) {
					malformed += json_integer_value(json_object_get(r, "count"));
				}
				if (r && !strcmp(e, "final")) {
					json_decref(fin);
					fin = r;
				} else {
					json_decref(r);
				}
			}
		}
		free(txt);
		json_array_append_new(out, json_pack("{s:s,s:b,s:s,s:s,s:s,s:s,s:I,s:I}", "name", sget(c, "name"),
						     "requested", json_is_true(json_object_get(c, "requested")),
						     "status", fin ? sget(fin, "status") : "missing", "reason",
						     fin && json_object_get(fin, "reason") ? sget(fin, "reason") : "",
						     "remedy", fin && json_object_get(fin, "remedy") ? sget(fin, "remedy") : "",
						     "evidence", ev, "dropped", dropped, "malformed", malformed));
		json_decref(fin);
	}
	return out;
}

/*
 * The counting collector's records of one repetition, less the per-thread
 * counts: counters, fallbacks, scope, per-incarnation totals (by inc, then
 * counter), cohort totals and cgroup statistics.  Read line by line: the
 * stream may be large.  NULL when the repetition has no counts stream.
 */
static json_t *counts_load(const struct pmu_bundle *b, int rep)
{
	char path[300];
	int fd;
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	json_t *k;

	rep_path(rep, "collectors/counting/counts.jsonl", path + 5, sizeof(path) - 5);
	memcpy(path, "data/", 5);
	fd = openat(b->rootfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	k = json_pack("{s:[],s:[],s:n,s:{},s:[],s:[]}", "counters", "fallbacks", "scope", "totals", "cohort",
		      "cgroup_stats");
	while (getline(&line, &cap, f) > 0) {
		json_t *r;
		const char *t;

		if (!strncmp(line, "{\"type\":\"count\",", 16))
			continue; /* per-thread counts: not in this report */
		r = json_loads(line, 0, NULL);
		t = sget(r, "type");
		if (!strcmp(t, "counter"))
			json_array_append(json_object_get(k, "counters"), r);
		else if (!strcmp(t, "fallback"))
			json_array_append(json_object_get(k, "fallbacks"), r);
		else if (!strcmp(t, "scope"))
			json_object_set(k, "scope", r);
		else if (!strcmp(t, "cohort"))
			json_array_append(json_object_get(k, "cohort"), r);
		else if (!strcmp(t, "cgstat"))
			json_array_append(json_object_get(k, "cgroup_stats"), r);
		else if (!strcmp(t, "total")) {
			json_t *tot = json_object_get(k, "totals"), *m = json_object_get(tot, sget(r, "inc"));

			if (!m) {
				m = json_object();
				json_object_set_new(tot, sget(r, "inc"), m);
			}
			json_object_set(m, sget(r, "counter"), r);
		}
		json_decref(r);
	}
	free(line);
	fclose(f);
	return k;
}

/* A counted value: true with *v and *est when the record has one. */
static bool count_value(json_t *r, double *v, bool *est)
{
	json_t *x = json_object_get(r, "value");

	if (!x)
		x = json_object_get(r, "value_ns");
	if (!r || strcmp(sget(r, "status"), "ok") || !x)
		return false;
	*v = (double)json_integer_value(x);
	*est = json_is_true(json_object_get(r, "estimate"));
	return true;
}

/* Ratios of two counts, only where both were counted (exact or labelled
 * estimates): IPC and miss ratios. */
static const struct {
	const char *name, *num, *den;
} ratios[] = {
	{ "ipc", "instructions", "cycles" },
	{ "branch-miss-ratio", "branch-misses", "branches" },
	{ "cache-miss-ratio", "cache-misses", "cache-references" },
};

static void add_derived(json_t *m, json_t *incs_totals)
{
	for (size_t i = 0; i < PMU_ARRAY_SIZE(ratios); i++) {
		double a, b;
		bool ea, eb;

		if (!count_value(json_object_get(incs_totals, ratios[i].num), &a, &ea) ||
		    !count_value(json_object_get(incs_totals, ratios[i].den), &b, &eb) || b == 0)
			continue;
		json_object_set_new(m, ratios[i].name, json_pack("{s:s,s:f,s:b}", "status", "ok", "value", a / b,
								  "estimate", ea || eb));
	}
}

/* ---- metrics: each section adds its own ------------------------------------ */

static void metric_ok(json_t *m, const char *name, const char *unit, double v, bool est, const char *source)
{
	json_object_set_new(m, name, json_pack("{s:s,s:f,s:s,s:b,s:s}", "status", "ok", "value", v, "unit", unit,
					       "estimate", est, "source", source));
}

static void metric_na(json_t *m, const char *name, const char *unit, const char *reason)
{
	json_object_set_new(m, name, json_pack("{s:s,s:s,s:s}", "status", "unavailable", "unit", unit, "reason",
					       reason));
}

/* Process tree: the root's wall time and the cohort's resource totals. */
static void section_tree(json_t *m, json_t *run, json_t *cohort)
{
	static const struct {
		const char *res, *name, *unit;
		bool max;
	} sums[] = {
		{ "cpu_user_ns", "cpu_user", "ns", false },   { "cpu_system_ns", "cpu_system", "ns", false },
		{ "max_rss_bytes", "max_rss", "bytes", true }, { "minor_faults", "minor_faults", "count", false },
		{ "major_faults", "major_faults", "count", false }, { "read_bytes", "read_bytes", "bytes", false },
		{ "write_bytes", "write_bytes", "bytes", false },
	};
	json_t *incs = json_object_get(cohort, "incarnations"), *root = NULL, *in;
	size_t i;
	bool none = !strcmp(sget(run, "mode"), "none");

	json_array_foreach(incs, i, in)
		if (!json_object_get(in, "parent"))
			root = in;
	if (root && json_object_get(root, "end_ns") && !json_is_true(json_object_get(root, "preexisting")))
		metric_ok(m, "wall", "ns",
			  (double)(json_integer_value(json_object_get(root, "end_ns")) -
				   json_integer_value(json_object_get(root, "start_ns"))),
			  false, "the root incarnation's lifetime (fork to reap)");
	else
		metric_na(m, "wall", "ns", root ? "the root was attached to, or still running at the end"
					       : "the cohort has no root");
	for (size_t s = 0; s < PMU_ARRAY_SIZE(sums); s++) {
		double acc = 0;
		const char *why = NULL;

		json_array_foreach(incs, i, in) {
			json_t *r = json_object_get(in, "resources"), *v = json_object_get(r, sums[s].res);

			if (!r) {
				why = "an incarnation has no resource totals";
				break;
			}
			if (!v) {
				why = json_string_value(json_object_get(
					json_object_get(json_object_get(r, "fields"), sums[s].res), "reason"));
				if (!why)
					why = "an incarnation's total is unavailable";
				break;
			}
			if (sums[s].max)
				acc = fmax(acc, (double)json_integer_value(v));
			else
				acc += (double)json_integer_value(v);
		}
		if (why)
			metric_na(m, sums[s].name, sums[s].unit, why);
		else
			metric_ok(m, sums[s].name, sums[s].unit, acc, false,
				  none ? "wait4 rusage of the command (with the descendants it waited for)"
				       : "per-incarnation totals, summed");
	}
	{
		json_t *u = json_object_get(m, "cpu_user"), *sy = json_object_get(m, "cpu_system");

		if (!strcmp(sget(u, "status"), "ok") && !strcmp(sget(sy, "status"), "ok")) {
			char src[300];

			/* the sum keeps its parts' source: two modes' cpu differ as theirs do */
			snprintf(src, sizeof(src), "%s (user + system)", sget(u, "source"));
			metric_ok(m, "cpu", "ns",
				  json_real_value(json_object_get(u, "value")) + json_real_value(json_object_get(sy, "value")),
				  false, src);
		}
		else
			metric_na(m, "cpu", "ns", "cpu_user or cpu_system is unavailable");
	}
}

/* The command's wait4 totals (run.json command_rusage): one source in every
 * mode, so the observer overhead on CPU can be stated. */
static void section_command(json_t *m, json_t *run)
{
	static const struct {
		const char *key, *name, *unit;
	} f[] = {
		{ "cpu_user_ns", "command.cpu_user", "ns" },   { "cpu_system_ns", "command.cpu_system", "ns" },
		{ "max_rss_bytes", "command.max_rss", "bytes" }, { "minor_faults", "command.minor_faults", "count" },
	};
	json_t *ru = json_object_get(run, "command_rusage");

	if (!ru)
		return;
	for (size_t i = 0; i < PMU_ARRAY_SIZE(f); i++)
		metric_ok(m, f[i].name, f[i].unit, (double)json_integer_value(json_object_get(ru, f[i].key)), false,
			  sget(ru, "source"));
	metric_ok(m, "command.cpu", "ns",
		  (double)(json_integer_value(json_object_get(ru, "cpu_user_ns")) +
			   json_integer_value(json_object_get(ru, "cpu_system_ns"))),
		  false, sget(ru, "source"));
}

/* Counters: the cohort's value of every counter (sum of the incarnations). */
static void section_counters(json_t *m, json_t *k)
{
	json_t *c, *tot;
	size_t i;

	if (!k)
		return;
	tot = json_object();
	json_array_foreach(json_object_get(k, "cohort"), i, c) {
		double v;
		bool est;
		const char *unit = "count";
		json_t *d;
		size_t j;

		json_array_foreach(json_object_get(k, "counters"), j, d)
			if (!strcmp(sget(d, "name"), sget(c, "counter")) && !strcmp(sget(d, "unit"), "ns"))
				unit = "ns";

		if (strcmp(sget(c, "scope"), "incarnations"))
			continue;
		json_object_set(tot, sget(c, "counter"), c);
		if (count_value(c, &v, &est))
			metric_ok(m, sget(c, "counter"), unit, v, est, "counting collector, sum of the incarnations");
		else
			metric_na(m, sget(c, "counter"), unit, sget(c, "reason"));
	}
	/* every counter that was declared but never counted is a metric too */
	json_array_foreach(json_object_get(k, "counters"), i, c)
		if (!json_object_get(m, sget(c, "name")))
			metric_na(m, sget(c, "name"), sget(c, "unit"), sget(c, "reason"));
	{
		json_t *d = json_object();
		const char *key;
		json_t *v;

		add_derived(d, tot);
		json_object_foreach(d, key, v) {
			json_object_set_new(v, "unit", json_string("ratio"));
			json_object_set_new(v, "source", json_string("ratio of two counted cohort totals"));
			json_object_set(m, key, v);
		}
		json_decref(d);
	}
	json_decref(tot);
}

/* Spans: the time of each span name, summed over its spans. */
static void section_spans(json_t *m, const struct pmu_bundle *b, int rep)
{
	char path[300];
	int fd;
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	json_t *acc = json_object();
	const char *name;
	json_t *v;

	rep_path(rep, "spans.jsonl", path + 5, sizeof(path) - 5);
	memcpy(path, "data/", 5);
	fd = openat(b->rootfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	f = fd >= 0 ? fdopen(fd, "r") : NULL;
	while (f && getline(&line, &cap, f) > 0) {
		json_t *r;

		if (strncmp(line, "{\"type\":\"span\",", 15))
			continue;
		r = json_loads(line, 0, NULL);
		if (r) {
			char key[300];
			json_int_t d = json_integer_value(json_object_get(r, "end_ns")) -
				       json_integer_value(json_object_get(r, "begin_ns"));

			snprintf(key, sizeof(key), "span.%s", sget(r, "name"));
			json_object_set_new(acc, key,
					    json_real(json_real_value(json_object_get(acc, key)) + (double)d));
		}
		json_decref(r);
	}
	free(line);
	if (f)
		fclose(f);
	else if (fd >= 0)
		close(fd);
	json_object_foreach(acc, name, v)
		metric_ok(m, name, "ns", json_real_value(v), false, "spans.jsonl: the span name's time, summed");
	json_decref(acc);
}

/* ---- the dominant cost ------------------------------------------------------ */

/*
 * Where the evidence names one: the incarnation with the largest share of
 * the cohort's task-clock (exact, or labelled estimate).  With repetitions
 * the share's spread across them is its uncertainty.
 */
static json_t *dominant_cost(json_t *cohort, json_t *k, json_t *shares)
{
	json_t *tot = NULL, *c, *best = NULL, *bin = NULL, *m;
	const char *inc;
	size_t i;
	json_int_t sum;

	json_array_foreach(json_object_get(k, "cohort"), i, c)
		if (!strcmp(sget(c, "counter"), "task-clock") && !strcmp(sget(c, "scope"), "incarnations"))
			tot = c;
	if (!tot || strcmp(sget(tot, "status"), "ok") || !(sum = json_integer_value(json_object_get(tot, "value_ns"))))
		return json_pack("{s:s}", "statement", "not determined (no counted task-clock in this bundle)");
	json_object_foreach(json_object_get(k, "totals"), inc, m) {
		json_t *t = json_object_get(m, "task-clock");

		if (t && !strcmp(sget(t, "status"), "ok") &&
		    (!best || json_integer_value(json_object_get(t, "value_ns")) >
				      json_integer_value(json_object_get(best, "value_ns"))))
			best = t;
	}
	if (!best)
		return json_pack("{s:s}", "statement", "not determined (no incarnation has a counted task-clock)");
	json_array_foreach(json_object_get(cohort, "incarnations"), i, c)
		if (!strcmp(sget(c, "id"), sget(best, "inc")))
			bin = c;
	double share = 100.0 * (double)json_integer_value(json_object_get(best, "value_ns")) / (double)sum;
	bool est = json_is_true(json_object_get(best, "estimate")) || json_is_true(json_object_get(tot, "estimate"));
	char st[600], spread[160] = "";

	if (json_array_size(shares) >= 3) {
		double v[4096];
		size_t n = 0;
		struct pmu_summary s;
		json_t *x;

		json_array_foreach(shares, i, x)
			if (n < 4096)
				v[n++] = json_real_value(x);
		if (pmu_summarize(v, n, &s) == 0)
			snprintf(spread, sizeof(spread), "; across %zu repetitions its share ranges %.0f%%-%.0f%% "
				 "(median %.0f%%)", n, s.min, s.max, s.median);
	}
	snprintf(st, sizeof(st), "process '%s' (pid %lld, incarnation %s) spent %.0f%% of the cohort's CPU "
		 "(task-clock %.3f of %.3f ms, %s)%s", bin ? sget(bin, "comm") : "?",
		 bin ? (long long)json_integer_value(json_object_get(bin, "pid")) : -1LL, sget(best, "inc"), share,
		 (double)json_integer_value(json_object_get(best, "value_ns")) / 1e6, (double)sum / 1e6,
		 est ? "estimated from multiplexed counts" : "exact counts", spread);
	return json_pack("{s:s,s:s,s:s,s:s,s:f,s:b}", "statement", st, "inc", sget(best, "inc"), "comm",
			 bin ? sget(bin, "comm") : "?", "metric", "task-clock", "share_percent", share, "estimate", est);
}

/* The largest incarnation's task-clock share in one repetition (for the
 * dominant cost's spread), matched by comm: pids differ between runs. */
static double share_of(json_t *cohort, json_t *k, const char *comm)
{
	json_t *c, *m, *tot = NULL;
	const char *inc;
	size_t i;
	double best = -1, sum;

	json_array_foreach(json_object_get(k, "cohort"), i, c)
		if (!strcmp(sget(c, "counter"), "task-clock") && !strcmp(sget(c, "scope"), "incarnations"))
			tot = c;
	if (!tot || strcmp(sget(tot, "status"), "ok") ||
	    !(sum = (double)json_integer_value(json_object_get(tot, "value_ns"))))
		return -1;
	json_t *byid = json_object();

	json_array_foreach(json_object_get(cohort, "incarnations"), i, c)
		json_object_set(byid, sget(c, "id"), c);
	json_object_foreach(json_object_get(k, "totals"), inc, m) {
		json_t *t = json_object_get(m, "task-clock"), *in = json_object_get(byid, inc);

		if (t && in && !strcmp(sget(in, "comm"), comm) && !strcmp(sget(t, "status"), "ok")) {
			double s = 100.0 * (double)json_integer_value(json_object_get(t, "value_ns")) / sum;

			if (s > best)
				best = s;
		}
	}
	json_decref(byid);
	return best;
}

/* ---- phases ------------------------------------------------------------------ */

/* Start-up and steady state, split at the --delay mark; kept apart, and
 * said plainly that the counters cover the whole run. */
static json_t *phases(const struct pmu_bundle *b, json_t *run, json_t *cohort)
{
	char *txt = NULL, *last = NULL;
	json_t *out = json_array(), *marks = json_array(), *root = NULL, *in;
	json_int_t start, end, split = -1;
	size_t i;

	json_array_foreach(json_object_get(cohort, "incarnations"), i, in)
		if (!json_object_get(in, "parent"))
			root = in;
	start = json_integer_value(json_object_get(root ? root : run, "start_ns"));
	end = json_integer_value(json_object_get(root && json_object_get(root, "end_ns") ? root : run, "end_ns"));
	if (pmu_read_file(b->rootfd, "data/spans.jsonl", 256u << 20, &txt, NULL) == 0)
		for (char *line = strtok_r(txt, "\n", &last); line; line = strtok_r(NULL, "\n", &last)) {
			json_t *r;

			if (strncmp(line, "{\"type\":\"mark\",", 15))
				continue;
			r = json_loads(line, 0, NULL);
			if (r) {
				json_array_append_new(marks, json_pack("{s:s,s:I}", "name", sget(r, "name"), "t_ns",
								       json_integer_value(json_object_get(r, "t_ns")) -
									       start));
				if (!strcmp(sget(r, "name"), "pmurec:delay-end"))
					split = json_integer_value(json_object_get(r, "t_ns"));
			}
			json_decref(r);
		}
	free(txt);
	if (split >= start && split <= end) {
		json_array_append_new(out, json_pack("{s:s,s:I,s:I}", "name", "startup", "from_ns", (json_int_t)0,
						     "to_ns", split - start));
		json_array_append_new(out, json_pack("{s:s,s:I,s:I}", "name", "steady", "from_ns", split - start,
						     "to_ns", end - start));
	}
	return json_pack("{s:o,s:o,s:s}", "phases", out, "marks", marks, "note",
			 json_array_size(out) ? "the counters and totals cover the whole run: this bundle has no "
						"time-resolved evidence to split them by phase"
					      : "no pmurec:delay-end mark (pmurec --delay): the run is one phase");
}

/* ---- the process tree's order ------------------------------------------------ */

/*
 * Depth-first order of the incarnations, as [{index, depth}], in O(n): the
 * renderers walk it instead of searching for children.  An incarnation
 * whose parent is not in the cohort, and any the walk cannot reach (ids
 * used twice, parent cycles: a corrupt bundle analyzed on request), come
 * last at depth 0, each once.
 */
static json_t *tree_order(json_t *incs)
{
	size_t n = json_array_size(incs), *stack, sp = 0, i;
	json_t *kids = json_object(), *ids = json_object(), *out = json_array(), *in;
	bool *seen = calloc(n + 1, sizeof(*seen));
	int *depth = calloc(n + 1, sizeof(*depth));

	stack = calloc(n + 1, sizeof(*stack));
	if (!seen || !depth || !stack)
		goto done;
	json_array_foreach(incs, i, in)
		if (!json_object_get(ids, sget(in, "id")))
			json_object_set_new(ids, sget(in, "id"), json_integer((json_int_t)i));
	json_array_foreach(incs, i, in) {
		const char *p = json_string_value(json_object_get(in, "parent"));
		json_t *a;

		if (!p || !json_object_get(ids, p))
			continue;
		if (!(a = json_object_get(kids, p))) {
			a = json_array();
			json_object_set_new(kids, p, a);
		}
		json_array_append_new(a, json_integer((json_int_t)i));
	}
	for (int pass = 0; pass < 2; pass++)
		json_array_foreach(incs, i, in) {
			const char *p = json_string_value(json_object_get(in, "parent"));

			/* roots first; then whatever the walks did not reach */
			if (seen[i] || (pass == 0 && p && json_object_get(ids, p)))
				continue;
			stack[sp++] = i;
			depth[i] = 0;
			seen[i] = true;
			while (sp) {
				size_t x = stack[--sp], k;
				json_t *a = json_object_get(kids, sget(json_array_get(incs, x), "id")), *c;

				json_array_append_new(out, json_pack("{s:I,s:i}", "index", (json_int_t)x, "depth", depth[x]));
				/* children pushed in reverse: walked in cohort order */
				for (k = json_array_size(a); k-- > 0;) {
					size_t y = (size_t)json_integer_value(json_array_get(a, k));

					(void)c;
					if (y < n && !seen[y] && sp < n) {
						seen[y] = true;
						depth[y] = depth[x] < 64 ? depth[x] + 1 : 64;
						stack[sp++] = y;
					}
				}
			}
		}
done:
	free(stack);
	free(seen);
	free(depth);
	json_decref(kids);
	json_decref(ids);
	return out;
}

/* ---- repetitions ----------------------------------------------------------- */

static json_t *summarize(json_t *runs)
{
	json_t *out = json_array(), *names = json_object(), *r, *m, *x;
	const char *name;
	size_t i;

	json_array_foreach(runs, i, r)
		json_object_foreach(json_object_get(r, "metrics"), name, m)
			if (!json_object_get(names, name))
				json_object_set_new(names, name, json_string(sget(m, "unit")));
	json_object_foreach(names, name, x) {
		double *v = calloc(json_array_size(runs) + 1, sizeof(double));
		size_t n = 0, idx[4096], no;
		json_t *reps = json_array(), *missing = json_array(), *o;
		bool est = false;
		struct pmu_summary s;

		json_array_foreach(runs, i, r) {
			m = json_object_get(json_object_get(r, "metrics"), name);
			if (m && !strcmp(sget(m, "status"), "ok")) {
				v[n++] = json_real_value(json_object_get(m, "value"));
				json_array_append(reps, json_object_get(r, "repetition"));
				est |= json_is_true(json_object_get(m, "estimate"));
			} else {
				json_array_append(missing, json_object_get(r, "repetition"));
			}
		}
		o = json_pack("{s:s,s:s,s:I,s:O}", "name", name, "unit", json_string_value(x), "n", (json_int_t)n,
			      "missing", missing);
		if (n && pmu_summarize(v, n, &s) == 0) {
			json_t *out_reps = json_array();

			no = pmu_outliers(v, n, &s, idx, 4096);
			if (no > 4096)
				no = 4096;
			for (size_t k = 0; k < no; k++)
				json_array_append(out_reps, json_array_get(reps, idx[k]));
			json_object_set_new(o, "status", json_string("ok"));
			json_object_set_new(o, "median", json_real(s.median));
			json_object_set_new(o, "min", json_real(s.min));
			json_object_set_new(o, "max", json_real(s.max));
			json_object_set_new(o, "q1", json_real(s.q1));
			json_object_set_new(o, "q3", json_real(s.q3));
			json_object_set_new(o, "mad", json_real(s.mad));
			json_object_set_new(o, "outliers", out_reps);
			json_object_set_new(o, "estimate", json_boolean(est));
		} else {
			json_t *m1 = json_object_get(json_object_get(json_array_get(runs, 0), "metrics"), name);

			json_object_set_new(o, "status", json_string("unavailable"));
			json_object_set_new(o, "reason", json_string(m1 && json_object_get(m1, "reason")
								    ? sget(m1, "reason") : "no repetition has a value"));
		}
		json_array_append_new(out, o);
		json_decref(reps);
		json_decref(missing);
		free(v);
	}
	json_decref(names);
	return out;
}

static json_t *repetition_metrics(const struct pmu_bundle *b, int rep, json_t *run, json_t *cohort, json_t *k)
{
	json_t *m = json_object();

	section_tree(m, run, cohort);
	section_command(m, run);
	section_counters(m, k);
	section_spans(m, b, rep);
	return m;
}

/* ---- the bundle report ------------------------------------------------------ */

json_t *an_load(const char *path, bool allow_invalid, int trace_rep, const char *trace_path, int *code)
{
	struct pmu_validate_opts vo;
	struct pmu_validate_result res;
	struct failures fl = { json_array() };
	struct pmu_bundle b;
	json_t *run = NULL, *caps = NULL, *cohort = NULL, *prov = NULL, *k, *fates, *missing, *x, *runs, *shares;
	int err, check, nrep;
	bool printed = false;
	size_t i;

	pmu_validate_default_opts(&vo);
	vo.max_per_check = 5;
	err = pmu_validate_path(path, &vo, on_finding, &fl, &res);
	if (err) {
		fprintf(stderr, "pmuanalyze: %s\n", pmu_error_detail());
		json_decref(fl.list);
		*code = AN_EXIT_USAGE;
		return NULL;
	}
	if (res.errors && !allow_invalid) {
		fprintf(stderr, "pmuanalyze: '%s' is invalid (%u errors); refusing to analyze it "
				"(--allow-invalid to override)\n", path, res.errors);
		json_array_foreach(fl.list, i, x)
			fprintf(stderr, "  %s %s: %s\n", sget(x, "check"), sget(x, "where"), sget(x, "message"));
		json_decref(fl.list);
		*code = AN_EXIT_INVALID;
		return NULL;
	}
	err = pmu_bundle_open(&b, path, NULL, NULL, &check);
	if (!err)
		err = pmu_bundle_read_doc(&b, "run.json", &run);
	if (!err)
		err = pmu_bundle_read_doc(&b, "capabilities.json", &caps);
	if (!err)
		err = pmu_bundle_read_cohort(&b, 1, &cohort);
	if (!err)
		err = pmu_bundle_read_doc(&b, "provenance.json", &prov);
	if (!err && trace_path) {
		struct an_out to;

		if (!an_out_open(&to, trace_path)) {
			fprintf(stderr, "pmuanalyze: cannot write '%s': %s\n", trace_path, strerror(errno));
			an_out_close(&to, false);
			err = -1;
		} else {
			err = pmu_export_chrome_trace(&b, trace_rep, to.f);
			if (err)
				fprintf(stderr, "pmuanalyze: --trace: %s\n", pmu_error_detail());
			if (an_out_close(&to, !err) && !err)
				err = -1;
		}
		printed = err != 0;
	}
	if (err) {
		if (!printed)
			fprintf(stderr, "pmuanalyze: %s\n", pmu_error_detail());
		if (b.rootfd >= 0 || b.tmpdir)
			pmu_bundle_close(&b);
		json_decref(run);
		json_decref(caps);
		json_decref(cohort);
		json_decref(prov);
		json_decref(fl.list);
		*code = AN_EXIT_USAGE;
		return NULL;
	}
	fates = collector_fates(&b, 1, run);
	k = counts_load(&b, 1);
	missing = json_array();
	json_array_foreach(json_object_get(caps, "capabilities"), i, x)
		if (strcmp(sget(x, "status"), "ok"))
			json_array_append_new(missing, json_pack("{s:s,s:s,s:s,s:s}", "what", sget(x, "name"), "status",
								 sget(x, "status"), "reason",
								 json_object_get(x, "reason") ? sget(x, "reason") : "",
								 "remedy",
								 json_object_get(x, "remedy") ? sget(x, "remedy") : ""));
	json_array_foreach(fates, i, x)
		if (strcmp(sget(x, "status"), "ok") && strcmp(sget(x, "status"), "not-requested"))
			json_array_append_new(missing, json_pack("{s:s,s:s,s:s,s:s}", "what", sget(x, "name"), "status",
								 sget(x, "status"), "reason", sget(x, "reason"), "remedy",
								 sget(x, "remedy")));
	/* every counter that was not counted, every fallback taken, a cgroup
	 * scope that was asked for and not had */
	json_array_foreach(json_object_get(k, "counters"), i, x)
		if (strcmp(sget(x, "status"), "ok")) {
			char what[300];

			snprintf(what, sizeof(what), "counter %s", sget(x, "name"));
			json_array_append_new(missing, json_pack("{s:s,s:s,s:s,s:s}", "what", what, "status",
								 sget(x, "status"), "reason", sget(x, "reason"), "remedy",
								 sget(x, "remedy")));
		}
	json_array_foreach(json_object_get(k, "fallbacks"), i, x)
		json_array_append_new(missing, json_pack("{s:s,s:s,s:s,s:s}", "what", sget(x, "what"), "status",
							 "degraded", "reason", sget(x, "reason"), "remedy", ""));
	x = json_object_get(k, "scope");
	if (x && !strcmp(sget(x, "status"), "unavailable"))
		json_array_append_new(missing, json_pack("{s:s,s:s,s:s,s:s}", "what", "cgroup cohort", "status",
							 "unavailable", "reason", sget(x, "reason"), "remedy",
							 sget(x, "remedy")));
	/* per-incarnation ratios where both counts exist */
	if (k) {
		const char *inc;
		json_t *m;

		json_object_foreach(json_object_get(k, "totals"), inc, m) {
			json_t *d = json_object();

			add_derived(d, m);
			if (json_object_size(d))
				json_object_set(m, "derived", d);
			json_decref(d);
		}
	}
	/* every repetition's metrics */
	nrep = json_integer_value(json_object_get(run, "repeat")) > 1
		       ? (int)json_integer_value(json_object_get(run, "repeat")) : 1;
	/* never more than the bundle holds (a corrupt "repeat" analyzed on
	 * request): stop at the first repetition that is not there */
	for (int r = 2; r <= nrep; r++) {
		char p[64];
		struct stat st;

		snprintf(p, sizeof(p), "data/repeats/%d/run.json", r);
		if (fstatat(b.rootfd, p, &st, 0)) {
			nrep = r - 1;
			break;
		}
	}
	runs = json_array();
	shares = json_array();
	/* one pass over the repetitions: their metrics, and the share of the
	 * first repetition's dominant process in each (its spread) */
	json_t *d0 = dominant_cost(cohort, k, NULL);
	const char *dcomm = json_string_value(json_object_get(d0, "comm"));

	for (int r = 1; r <= nrep; r++) {
		json_t *rr = r == 1 ? json_incref(run) : NULL, *rc = r == 1 ? json_incref(cohort) : NULL;
		json_t *rk = r == 1 ? json_incref(k) : counts_load(&b, r);
		char p[64];
		json_t *camp;

		if (r > 1) {
			snprintf(p, sizeof(p), "repeats/%d/run.json", r);
			pmu_bundle_read_doc(&b, p, &rr);
			pmu_bundle_read_cohort(&b, r, &rc);
		}
		if (rr && rc) {
			json_t *o = json_pack("{s:i,s:o}", "repetition", r, "metrics",
					      repetition_metrics(&b, r, rr, rc, rk));

			camp = json_object_get(rr, "campaign");
			if (camp)
				json_object_set(o, "campaign_position", json_object_get(camp, "position"));
			json_array_append_new(runs, o);
		}
		if (dcomm && rc && rk) {
			double sh = share_of(rc, rk, dcomm);

			if (sh >= 0)
				json_array_append_new(shares, json_real(sh));
		}
		json_decref(rr);
		json_decref(rc);
		json_decref(rk);
	}
	json_decref(d0);
	x = json_pack("{s:o,s:b,s:O,s:O,s:O?,s:O?,s:O?,s:O?,s:O,s:O,s:O?,s:o,s:o,s:o,s:{s:i,s:O,s:o}}", "bundle",
		      pmu_json_text(path), "valid", res.errors == 0, "failed_checks", fl.list, "run", run, "host",
		      json_object_get(caps, "host"), "settings", json_object_get(prov, "settings"), "images",
		      json_object_get(prov, "images"), "config_hash", json_object_get(prov, "config_hash"),
		      "not_measured", missing, "collectors", fates, "cohort", json_object_get(cohort, "incarnations"),
		      "tree", tree_order(json_object_get(cohort, "incarnations")), "dominant_cost",
		      dominant_cost(cohort, k, shares), "phases", phases(&b, run, cohort), "repetitions", "n", nrep, "runs",
		      runs, "summary", summarize(runs));
	if (!x) {
		/* a document without what the report needs (possible only in a
		 * bundle analyzed with --allow-invalid): say so, never exit 0 */
		fprintf(stderr, "pmuanalyze: '%s' lacks what a report needs (host, images, configuration hash "
				"or incarnations)\n", path);
	} else if (k) {
		json_object_set(x, "counting", k);
	}
	*code = x ? AN_EXIT_OK : AN_EXIT_USAGE;
	pmu_bundle_close(&b);
	json_decref(shares);
	json_decref(runs);
	json_decref(k);
	json_decref(run);
	json_decref(caps);
	json_decref(cohort);
	json_decref(prov);
	json_decref(fates);
	json_decref(missing);
	json_decref(fl.list);
	return x;
}
