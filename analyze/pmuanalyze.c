/*
 * pmuanalyze: reports on a bundle.  This version describes one bundle: the
 * run header, what could not be measured and why, collector health, the
 * process tree with each incarnation's counters (labelled exact, estimate,
 * suspect zero or not counted), the cohort's counters by scope, and the
 * dominant cost where task-clock names one.  A/B comparison, statistics and CI gates are not built
 * yet and are refused with exit status 2, never approximated.
 */
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "bundle.h"
#include "checks.h"
#include "cli.h"
#include "error.h"
#include "spec.h"
#include "util.h"
#include "validate.h"

static const char usage[] =
	"usage: pmuanalyze [--json] [--allow-invalid] BUNDLE\n"
	"\n"
	"Describe a pmu bundle: the run, what could not be measured and why, each\n"
	"collector's fate, the process tree of the cohort with each incarnation's\n"
	"counters, and the cohort's counters. An estimate is marked ~ with the share of\n"
	"time it was counted; a count that was not taken is \"not counted\", never 0.\n"
	"The bundle is validated\n"
	"first; an invalid bundle is refused unless --allow-invalid is given, and then\n"
	"its failed checks head the report.\n"
	"\n"
	"  --json            print the report as JSON\n"
	"  --allow-invalid   describe an invalid bundle anyway\n"
	"  -h, --help        show this help\n"
	"  -V, --version     show the version\n"
	"\n"
	"Comparing two bundles (A/B) is not available in version " PMU_VERSION ".\n"
	"\n"
	"Exit status: 0 report written, 1 bundle invalid (refused), 2 usage or I/O error.\n";

struct failures {
	json_t *list;
};

static void on_finding(void *ctx, const struct pmu_finding *f)
{
	struct failures *fl = ctx;
	char rec[32] = "";

	if (f->severity != PMU_SEV_ERROR)
		return;
	if (f->record)
		snprintf(rec, sizeof(rec), ":%llu", (unsigned long long)f->record);
	json_array_append_new(fl->list, json_pack("{s:s,s:s}", "check", pmu_checks[f->check].id, "where",
						  f->file ? f->file : "", "message", f->message));
	if (f->file) {
		char *w;

		if (asprintf(&w, "%s%s", f->file, rec) >= 0) {
			json_object_set_new(json_array_get(fl->list, json_array_size(fl->list) - 1), "where",
					    json_string(w));
			free(w);
		}
	}
}

static const char *sget(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "?";
}

static double ms(json_int_t ns)
{
	return (double)ns / 1e6;
}

static void print_exit(json_t *e)
{
	const char *kind = sget(e, "kind");

	if (!strcmp(kind, "exited"))
		printf("exit %lld", (long long)json_integer_value(json_object_get(e, "code")));
	else if (!strcmp(kind, "signaled"))
		printf("signal %lld", (long long)json_integer_value(json_object_get(e, "signal")));
	else
		printf("%s", kind);
}

/* One resource total: its value, or "n/a" (never 0) when it was not measured. */
static void res_item(json_t *r, const char *key, const char *label, double scale, const char *unit)
{
	json_t *v = json_object_get(r, key);

	if (v && scale == 1)
		printf("  %s %lld", label, (long long)json_integer_value(v));
	else if (v)
		printf("  %s %.1f%s", label, (double)json_integer_value(v) / scale, unit);
	else
		printf("  %s n/a", label);
}

static void print_resources(json_t *r, int depth)
{
	if (!r)
		return;
	printf("  %*s   ", 2 * depth, "");
	res_item(r, "cpu_user_ns", "user", 1e6, " ms");
	res_item(r, "cpu_system_ns", "sys", 1e6, " ms");
	res_item(r, "max_rss_bytes", "rss", 1048576.0, " MiB");
	res_item(r, "minor_faults", "minflt", 1, "");
	res_item(r, "major_faults", "majflt", 1, "");
	res_item(r, "voluntary_switches", "vcsw", 1, "");
	res_item(r, "involuntary_switches", "ivcsw", 1, "");
	res_item(r, "read_bytes", "read", 1024, " KiB");
	res_item(r, "write_bytes", "written", 1024, " KiB");
	printf("\n");
}

/*
 * The counting collector's records, less the per-thread counts: counters,
 * fallbacks, scope, per-incarnation totals (by inc, then counter), cohort
 * totals and cgroup statistics.  Read line by line: the stream may be large.
 */
struct counts {
	json_t *counters, *fallbacks, *scope, *totals, *cohort, *cgstat;
};

static void counts_load(const struct pmu_bundle *b, struct counts *k)
{
	int fd = openat(b->rootfd, "data/collectors/counting/counts.jsonl", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	char *line = NULL;
	size_t cap = 0;

	memset(k, 0, sizeof(*k));
	if (!f) {
		if (fd >= 0)
			close(fd);
		return;
	}
	k->counters = json_array();
	k->fallbacks = json_array();
	k->totals = json_object();
	k->cohort = json_array();
	k->cgstat = json_array();
	while (getline(&line, &cap, f) > 0) {
		json_t *r;
		const char *t;

		if (!strncmp(line, "{\"type\":\"count\"", 16))
			continue; /* per-thread counts: not in this report */
		r = json_loads(line, 0, NULL);
		t = sget(r, "type");
		if (!strcmp(t, "counter"))
			json_array_append(k->counters, r);
		else if (!strcmp(t, "fallback"))
			json_array_append(k->fallbacks, r);
		else if (!strcmp(t, "scope") && !k->scope)
			k->scope = json_incref(r);
		else if (!strcmp(t, "cohort"))
			json_array_append(k->cohort, r);
		else if (!strcmp(t, "cgstat"))
			json_array_append(k->cgstat, r);
		else if (!strcmp(t, "total")) {
			json_t *m = json_object_get(k->totals, sget(r, "inc"));

			if (!m) {
				m = json_object();
				json_object_set_new(k->totals, sget(r, "inc"), m);
			}
			json_object_set(m, sget(r, "counter"), r);
		}
		json_decref(r);
	}
	free(line);
	fclose(f);
}

static void counts_release(struct counts *k)
{
	json_decref(k->counters);
	json_decref(k->fallbacks);
	json_decref(k->scope);
	json_decref(k->totals);
	json_decref(k->cohort);
	json_decref(k->cgstat);
}

/* One counted value as text: exact, ~estimate (N% counted), suspect zero,
 * or "not counted"; never a 0 that was not measured. */
static void fmt_count(json_t *r, char *out, size_t n)
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

static const struct counts *g_counts;

static void print_inc_counts(const char *inc, int depth)
{
	json_t *m = g_counts ? json_object_get(g_counts->totals, inc) : NULL, *c;
	size_t i;
	int col = 0;

	if (!m)
		return;
	printf("  %*s   ", 2 * depth, "");
	json_array_foreach(g_counts->counters, i, c) {
		json_t *t = json_object_get(m, sget(c, "name"));
		char v[160];

		if (!t)
			continue;
		fmt_count(t, v, sizeof(v));
		printf("%s%s %s", col++ ? "  " : "", sget(c, "name"), v);
	}
	printf("\n");
}

static void print_tree(json_t *incs, const char *parent, int depth)
{
	size_t i;
	json_t *in;

	if (depth > 64)
		return;
	json_array_foreach(incs, i, in) {
		const char *p = json_string_value(json_object_get(in, "parent"));
		json_t *exec = json_object_get(in, "exec");
		json_int_t s = json_integer_value(json_object_get(in, "start_ns"));
		json_t *end = json_object_get(in, "end_ns");

		if ((parent == NULL) != (p == NULL) || (parent && strcmp(parent, p)))
			continue;
		printf("  %*s%s pid %lld %s", 2 * depth, "", sget(in, "id"),
		       (long long)json_integer_value(json_object_get(in, "pid")), sget(in, "comm"));
		if (json_array_size(exec))
			printf(" (%s)", sget(json_array_get(exec, json_array_size(exec) - 1), "path"));
		if (json_is_true(json_object_get(in, "preexisting")))
			printf(", running before the recording (times from attach)");
		if (end)
			printf(", %.3f ms, ", ms(json_integer_value(end) - s));
		else
			printf(", alive at end, ");
		print_exit(json_object_get(in, "exit"));
		printf(", %zu thread%s\n", json_array_size(json_object_get(in, "tids")),
		       json_array_size(json_object_get(in, "tids")) == 1 ? "" : "s");
		print_resources(json_object_get(in, "resources"), depth);
		print_inc_counts(sget(in, "id"), depth);
		print_tree(incs, sget(in, "id"), depth + 1);
	}
}

/* Each collector's final status, from its lifecycle. */
static json_t *collector_fates(const struct pmu_bundle *b, json_t *run)
{
	json_t *out = json_array(), *c;
	size_t i;

	json_array_foreach(json_object_get(run, "collectors"), i, c) {
		char path[512], *txt = NULL, *last = NULL;
		json_t *fin = NULL;

		snprintf(path, sizeof(path), "data/collectors/%s/lifecycle.jsonl", sget(c, "name"));
		if (pmu_read_file(b->rootfd, path, 64u << 20, &txt, NULL) == 0) {
			for (char *line = strtok_r(txt, "\n", &last); line; line = strtok_r(NULL, "\n", &last)) {
				json_t *r = json_loads(line, 0, NULL);

				if (r && !strcmp(sget(r, "event"), "final")) {
					json_decref(fin);
					fin = r;
				} else {
					json_decref(r);
				}
			}
		}
		free(txt);
		json_array_append_new(out, json_pack("{s:s,s:b,s:s,s:s,s:s}", "name", sget(c, "name"), "requested",
						     json_is_true(json_object_get(c, "requested")), "status",
						     fin ? sget(fin, "status") : "missing", "reason",
						     fin && json_object_get(fin, "reason") ? sget(fin, "reason") : "",
						     "remedy",
						     fin && json_object_get(fin, "remedy") ? sget(fin, "remedy") : ""));
		json_decref(fin);
	}
	return out;
}

/*
 * The dominant cost, where the evidence names one: the incarnation with the
 * largest share of the cohort's task-clock (exact, or labelled estimate).
 * Without an exact-or-estimated cohort task-clock there is no statement.
 */
static json_t *dominant_cost(json_t *cohort, const struct counts *k)
{
	json_t *tot = NULL, *c, *best = NULL, *bin = NULL, *m;
	const char *inc;
	size_t i;
	json_int_t sum;

	json_array_foreach(k->cohort, i, c)
		if (!strcmp(sget(c, "counter"), "task-clock") && !strcmp(sget(c, "scope"), "incarnations"))
			tot = c;
	if (!tot || strcmp(sget(tot, "status"), "ok") || !(sum = json_integer_value(json_object_get(tot, "value_ns"))))
		return json_pack("{s:s}", "statement", "not determined (no counted task-clock in this bundle)");
	json_object_foreach(k->totals, inc, m) {
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
	{
		double share = 100.0 * (double)json_integer_value(json_object_get(best, "value_ns")) / (double)sum;
		bool est = json_is_true(json_object_get(best, "estimate")) || json_is_true(json_object_get(tot, "estimate"));
		char st[400];

		snprintf(st, sizeof(st), "process '%s' (pid %lld, incarnation %s) spent %.0f%% of the cohort's CPU "
			 "(task-clock %.3f of %.3f ms, %s)", bin ? sget(bin, "comm") : "?",
			 bin ? (long long)json_integer_value(json_object_get(bin, "pid")) : -1LL, sget(best, "inc"),
			 share, (double)json_integer_value(json_object_get(best, "value_ns")) / 1e6, (double)sum / 1e6,
			 est ? "estimated from multiplexed counts" : "exact counts");
		return json_pack("{s:s,s:s,s:s,s:f,s:b}", "statement", st, "inc", sget(best, "inc"), "metric",
				 "task-clock", "share_percent", share, "estimate", est);
	}
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "allow-invalid", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	bool json = false, allow = false;
	struct pmu_validate_opts vo;
	struct pmu_validate_result res;
	struct failures fl = { NULL };
	struct pmu_bundle b;
	json_t *run = NULL, *caps = NULL, *cohort = NULL, *fates, *missing, *dominant;
	struct counts counts;
	int c, err, check, code = PMU_EXIT_OK;

	while ((c = getopt_long(argc, argv, "hV", lo, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'a': allow = true; break;
		case 'h':
			fputs(usage, stdout);
			return pmu_cli_finish("pmuanalyze", PMU_EXIT_OK);
		case 'V':
			printf("pmuanalyze %s (spec %s, revision %s)\n", PMU_VERSION, PMU_SPEC_VERSION, PMU_REVISION);
			return pmu_cli_finish("pmuanalyze", PMU_EXIT_OK);
		default:
			fputs(usage, stderr);
			return PMU_EXIT_USAGE;
		}
	}
	if (argc - optind == 2) {
		fprintf(stderr, "pmuanalyze: comparing two bundles is not available in version %s\n", PMU_VERSION);
		return PMU_EXIT_USAGE;
	}
	if (argc - optind != 1) {
		fputs(usage, stderr);
		return PMU_EXIT_USAGE;
	}
	pmu_validate_default_opts(&vo);
	vo.max_per_check = 5;
	fl.list = json_array();
	err = pmu_validate_path(argv[optind], &vo, on_finding, &fl, &res);
	if (err) {
		fprintf(stderr, "pmuanalyze: %s\n", pmu_error_detail());
		json_decref(fl.list);
		return PMU_EXIT_USAGE;
	}
	if (res.errors && !allow) {
		size_t i;
		json_t *f;

		fprintf(stderr, "pmuanalyze: '%s' is invalid (%u errors); refusing to analyze it "
				"(--allow-invalid to override)\n", argv[optind], res.errors);
		json_array_foreach(fl.list, i, f)
			fprintf(stderr, "  %s %s: %s\n", sget(f, "check"), sget(f, "where"), sget(f, "message"));
		json_decref(fl.list);
		return PMU_EXIT_INVALID;
	}
	err = pmu_bundle_open(&b, argv[optind], NULL, NULL, &check);
	if (!err)
		err = pmu_bundle_read_doc(&b, "run.json", &run);
	if (!err)
		err = pmu_bundle_read_doc(&b, "capabilities.json", &caps);
	if (!err)
		err = pmu_bundle_read_doc(&b, "cohort.json", &cohort);
	if (err) {
		fprintf(stderr, "pmuanalyze: %s\n", pmu_error_detail());
		if (b.rootfd >= 0 || b.tmpdir)
			pmu_bundle_close(&b);
		json_decref(run);
		json_decref(caps);
		json_decref(fl.list);
		return PMU_EXIT_USAGE;
	}
	fates = collector_fates(&b, run);
	counts_load(&b, &counts);
	g_counts = &counts;
	pmu_bundle_close(&b);
	missing = json_array();
	{
		size_t i;
		json_t *x;

		json_array_foreach(json_object_get(caps, "capabilities"), i, x)
			if (strcmp(sget(x, "status"), "ok"))
				json_array_append_new(missing, json_pack("{s:s,s:s,s:s,s:s}", "what",
					sget(x, "name"), "status", sget(x, "status"), "reason",
					json_object_get(x, "reason") ? sget(x, "reason") : "",
					"remedy", json_object_get(x, "remedy") ? sget(x, "remedy") : ""));
		json_array_foreach(fates, i, x)
			if (strcmp(sget(x, "status"), "ok") && strcmp(sget(x, "status"), "not-requested"))
				json_array_append_new(missing, json_pack("{s:s,s:s,s:s,s:s}", "what",
					sget(x, "name"), "status", sget(x, "status"), "reason", sget(x, "reason"),
					"remedy", sget(x, "remedy")));
		/* every counter that was not counted, every fallback taken, a
		 * cgroup scope that was asked for and not had */
		json_array_foreach(counts.counters, i, x)
			if (strcmp(sget(x, "status"), "ok")) {
				char what[300];

				snprintf(what, sizeof(what), "counter %s", sget(x, "name"));
				json_array_append_new(missing, json_pack("{s:s,s:s,s:s,s:s}", "what", what, "status",
					sget(x, "status"), "reason", sget(x, "reason"), "remedy", sget(x, "remedy")));
			}
		json_array_foreach(counts.fallbacks, i, x)
			json_array_append_new(missing, json_pack("{s:s,s:s,s:s,s:s}", "what", sget(x, "what"), "status",
				"degraded", "reason", sget(x, "reason"), "remedy", ""));
		if (counts.scope && !strcmp(sget(counts.scope, "status"), "unavailable"))
			json_array_append_new(missing, json_pack("{s:s,s:s,s:s,s:s}", "what", "cgroup cohort", "status",
				"unavailable", "reason", sget(counts.scope, "reason"), "remedy",
				sget(counts.scope, "remedy")));
	}
	dominant = dominant_cost(cohort, &counts);
	if (json) {
		json_t *o = json_pack("{s:s,s:b,s:O,s:O,s:O,s:O,s:O,s:O,s:O}", "bundle", argv[optind], "valid",
				      res.errors == 0, "failed_checks", fl.list, "run", run, "not_measured", missing,
				      "collectors", fates, "host", json_object_get(caps, "host"), "cohort",
				      json_object_get(cohort, "incarnations"), "dominant_cost", dominant);

		if (counts.counters)
			json_object_set_new(o, "counting",
					    json_pack("{s:O,s:O,s:O*,s:O,s:O,s:O}", "counters", counts.counters,
						      "fallbacks", counts.fallbacks, "scope", counts.scope, "totals",
						      counts.totals, "cohort", counts.cohort, "cgroup_stats", counts.cgstat));

		json_dumpf(o, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(o);
	} else {
		json_t *x, *argvj = json_object_get(run, "argv");
		json_int_t dur = json_integer_value(json_object_get(run, "end_ns")) -
				 json_integer_value(json_object_get(run, "start_ns"));
		size_t i;

		if (res.errors) {
			printf("INVALID BUNDLE (analyzed on request): %u failed check(s)\n", res.errors);
			json_array_foreach(fl.list, i, x)
				printf("  %s %s: %s\n", sget(x, "check"), sget(x, "where"), sget(x, "message"));
			printf("\n");
		}
		printf("command  ");
		json_array_foreach(argvj, i, x)
			printf("%s%s", i ? " " : "", json_string_value(x));
		printf("\nmode     %s\nresult   %s\nexit     ", sget(run, "mode"), sget(run, "result"));
		print_exit(json_object_get(run, "exit"));
		printf("\nwall     %.3f ms\nhost     %s %s %s\nrecorder %s %s\n\n", ms(dur),
		       sget(json_object_get(caps, "host"), "os"), sget(json_object_get(caps, "host"), "kernel"),
		       sget(json_object_get(caps, "host"), "arch"), sget(json_object_get(run, "tool"), "name"),
		       sget(json_object_get(run, "tool"), "version"));
		printf("not measured (%zu)\n", json_array_size(missing));
		json_array_foreach(missing, i, x)
			printf("  %-20s %-12s %s%s%s\n", sget(x, "what"), sget(x, "status"), sget(x, "reason"),
			       *sget(x, "remedy") ? "; remedy: " : "", sget(x, "remedy"));
		printf("\ncollectors\n");
		json_array_foreach(fates, i, x)
			printf("  %-20s %-14s %s\n", sget(x, "name"), sget(x, "status"),
			       json_is_true(json_object_get(x, "requested")) ? "requested" : "not requested");
		printf("\nprocess tree (%zu incarnations)\n", json_array_size(json_object_get(cohort, "incarnations")));
		print_tree(json_object_get(cohort, "incarnations"), NULL, 0);
		if (counts.counters && json_array_size(counts.cohort)) {
			printf("\ncohort counters\n");
			json_array_foreach(counts.cohort, i, x) {
				char v[200];

				fmt_count(x, v, sizeof(v));
				printf("  %-26s %-13s %s\n", sget(x, "counter"),
				       !strcmp(sget(x, "scope"), "cgroup") ? "cgroup" : "sum of procs", v);
			}
		}
		if (json_array_size(counts.cgstat)) {
			printf("\ncgroup statistics (cohort's leaf cgroup; 'system' lines are the whole host, not the cohort)\n");
			json_array_foreach(counts.cgstat, i, x) {
				json_t *v = json_object_get(x, "value"), *vn = json_object_get(x, "value_ns"),
				       *vb = json_object_get(x, "value_bytes");

				printf("  %-7s %-22s %-16s ", sget(x, "scope"), sget(x, "file"), sget(x, "key"));
				if (vn)
					printf("%.3f ms", (double)json_integer_value(vn) / 1e6);
				else if (vb)
					printf("%lld bytes", (long long)json_integer_value(vb));
				else if (v)
					printf("%lld", (long long)json_integer_value(v));
				else
					printf("n/a: %s", sget(x, "reason"));
				printf("%s\n", json_is_true(json_object_get(x, "gauge")) ? " (at the end)" : "");
			}
		}
		printf("\ndominant cost: %s\n", sget(dominant, "statement"));
	}
	json_decref(fl.list);
	json_decref(run);
	json_decref(caps);
	json_decref(cohort);
	json_decref(fates);
	json_decref(missing);
	json_decref(dominant);
	counts_release(&counts);
	return pmu_cli_finish("pmuanalyze", code);
}
