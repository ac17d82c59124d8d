/*
 * pmuanalyze: reports on bundles.
 *
 * One bundle: the run header, where the wall time went and the dominant
 * cost of it, the largest programs, what could not be measured and why (by
 * cause), the collectors' fates and health, the process tree with exec
 * chains, argv and each incarnation's resources and counters (labelled
 * exact, estimate, suspect zero or not counted), the cohort's counters,
 * phases and the metrics across repetitions.
 *
 * Two bundles (A/B): comparability first (an incomparable pair is refused
 * with exit 4 unless --force), then per metric the change with its 95%
 * confidence interval, the observer overhead of an --ab campaign, and the
 * --fail-if gates (exit 3 when one is crossed significantly).
 *
 * The report is one JSON object (analyze/model.h); text, --json, --csv and
 * --html are renderings of it.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "compare.h"
#include "error.h"
#include "export.h"
#include "html.h"
#include "model.h"
#include "oscall.h"
#include "runtime.h"
#include "spec.h"
#include "util.h"

static const char usage[] =
	"usage: pmuanalyze [options] BUNDLE\n"
	"       pmuanalyze [options] A.bundle B.bundle\n"
	"\n"
	"One bundle: where the wall time went (the cohort on a CPU, and off it: a lower\n"
	"bound, what explains it and what would), the dominant cost of the wall time,\n"
	"the largest programs, what could not be measured and why (by cause), each\n"
	"collector's fate, the process tree with exec chains, argv, each incarnation's\n"
	"resources and counters, the cohort's counters and the metrics across\n"
	"repetitions (median, spread, outliers). An estimate is marked ~ with the share\n"
	"of the time it was counted; a count that was not taken is \"not counted\", never 0.\n"
	"\n"
	"Two bundles: check that A and B are comparable, then compare every metric:\n"
	"medians, the change B/A with a 95% confidence interval (bootstrap of the ratio\n"
	"of medians) and a Mann-Whitney U test; the observer overhead when A is the\n"
	"none-mode run of B's --ab campaign. Variants of one pmurec --variants\n"
	"campaign are comparable although their commands differ; bundles recorded\n"
	"one after the other are compared with a warning that host drift is not\n"
	"controlled.\n"
	"\n"
	"Every bundle is validated first; an invalid one is refused unless\n"
	"--allow-invalid is given, and then its failed checks head the report.\n"
	"\n"
	"  --json             print the report as JSON (bundle-spec/analysis/report.schema.json)\n"
	"  --csv              print the report's tables as CSV\n"
	"      --html FILE    also write the report as one self-contained HTML file\n"
	"      --trace FILE   also write a Chrome trace (Perfetto, chrome://tracing) of\n"
	"                     the incarnations, spans, marks, GC pauses, system calls and\n"
	"                     off-CPU intervals (of A when comparing)\n"
	"      --trace-rep K  trace repetition K (default 1)\n"
	"      --folded FILE, --speedscope FILE, --pprof FILE  also write the profile's\n"
	"                     samples (repetition 1) as folded stacks (flamegraph.pl),\n"
	"                     speedscope JSON, or gzip'd pprof (go tool pprof)\n"
	"      --offcpu-folded FILE  also write the off-CPU intervals (repetition 1) as\n"
	"                     folded stacks weighted by the ns waited: program, the user\n"
	"                     call chain when recorded (--call-graph fp), [syscall]\n"
	"      --max-processes N  list at most N processes (default 200): the root, then\n"
	"                     by CPU time with their ancestors; the rest are counted and\n"
	"                     summed, and every total covers all of them\n"
	"      --fail-if EXPR with two bundles: exit 3 when EXPR is crossed significantly,\n"
	"                     e.g. wall.median:+5% or cycles:+2% (repeatable)\n"
	"      --junit FILE   with two bundles: write the comparability and the gates as\n"
	"                     JUnit XML\n"
	"      --min-effect PCT  with two bundles: a change whose 95% interval lies\n"
	"                     within +-PCT% is \"no practical difference\" even when\n"
	"                     significant (default 2: the run-to-run noise of identical\n"
	"                     interleaved runs); gates keep their own thresholds\n"
	"      --force        compare bundles that are not comparable (the warning is in\n"
	"                     every output)\n"
	"      --allow-invalid  analyze invalid bundles anyway\n"
	"  -h, --help         show this help\n"
	"  -V, --version      show the version\n"
	"\n"
	"Exit status: 0 report written; 1 a bundle is invalid (refused); 2 usage or\n"
	"I/O error, or a gate that cannot be judged; 3 a --fail-if threshold was crossed\n"
	"significantly; 4 the bundles are not comparable (without --force).\n";

/* Rows per ranking in the text report (--json has more). */
#define PROF_TEXT_ROWS 10

static const char *sget(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "?";
}

static double ms(json_int_t ns)
{
	return (double)ns / 1e6;
}

static bool color;

/* Text from a bundle, for a terminal: control characters (an escape
 * sequence in a command line) are shown as '?', never sent raw. */
static void put_text(const char *t)
{
	for (const unsigned char *c = (const unsigned char *)(t ? t : "?"); *c; c++)
		putchar(*c < 0x20 || *c == 0x7f ? '?' : *c);
}

/* A verdict code (compare.h's an_effect_verdict()) or a gate's status. */
static const char *c_on(const char *code)
{
	if (!color)
		return "";
	if (!strcmp(code, "higher") || !strcmp(code, "fail"))
		return "\033[31m";
	if (!strcmp(code, "lower") || !strncmp(code, "higher-", 7) || !strncmp(code, "lower-", 6))
		return "\033[33m";
	if (!strcmp(code, "pass") || !strncmp(code, "no-", 3))
		return "\033[32m";
	return "";
}

static const char *c_off(void)
{
	return color ? "\033[0m" : "";
}

/* ---- text: one bundle ------------------------------------------------------- */

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

static const char *field_source(json_t *r, const char *key)
{
	const char *s = json_string_value(json_object_get(json_object_get(json_object_get(r, "fields"), key), "source"));

	return s ? s : "";
}

/*
 * CPU times as fine as their source: /proc/PID/stat's are whole 10 ms
 * clock ticks (left out beside an exact counted task-clock, else shown in
 * whole ms with their resolution); the eBPF follower's total is the exact
 * runtime with its user:system split taken from the ticks; others (wait4
 * rusage, a writer that does not say) as they are.
 */
static void print_cpu(json_t *r, bool exact_task_clock)
{
	json_t *u = json_object_get(r, "cpu_user_ns"), *sy = json_object_get(r, "cpu_system_ns");
	const char *src = field_source(r, "cpu_user_ns");

	if (u && sy && strstr(src, "clock ticks")) {
		if (!exact_task_clock)
			printf("  user %.0f ms  sys %.0f ms (10 ms clock ticks)", (double)json_integer_value(u) / 1e6,
			       (double)json_integer_value(sy) / 1e6);
	} else if (u && sy && strstr(src, "split by")) {
		printf("  cpu %.1f ms (user ~%.1f, sys ~%.1f: split by clock ticks)",
		       (double)(json_integer_value(u) + json_integer_value(sy)) / 1e6, (double)json_integer_value(u) / 1e6,
		       (double)json_integer_value(sy) / 1e6);
	} else {
		res_item(r, "cpu_user_ns", "user", 1e6, " ms");
		res_item(r, "cpu_system_ns", "sys", 1e6, " ms");
	}
}

static void print_resources(json_t *r, int depth, bool exact_task_clock)
{
	if (!r)
		return;
	printf("  %*s   ", 2 * depth, "");
	print_cpu(r, exact_task_clock);
	res_item(r, "max_rss_bytes", "rss", 1048576.0, " MiB");
	res_item(r, "minor_faults", "minflt", 1, "");
	res_item(r, "major_faults", "majflt", 1, "");
	res_item(r, "voluntary_switches", "vcsw", 1, "");
	res_item(r, "involuntary_switches", "ivcsw", 1, "");
	res_item(r, "read_bytes", "rchar", 1024, " KiB");
	res_item(r, "write_bytes", "wchar", 1024, " KiB");
	printf("\n");
}

static void print_inc_counts(json_t *counting, const char *inc, int depth)
{
	json_t *m = json_object_get(json_object_get(counting, "totals"), inc), *c, *d;
	size_t i;
	int col = 0;
	const char *key;

	if (!m)
		return;
	printf("  %*s   ", 2 * depth, "");
	json_array_foreach(json_object_get(counting, "counters"), i, c) {
		json_t *t = json_object_get(m, sget(c, "name"));
		char v[160];

		if (!t)
			continue;
		an_fmt_count(t, v, sizeof(v));
		printf("%s%s %s", col++ ? "  " : "", sget(c, "name"), v);
	}
	json_object_foreach(json_object_get(m, "derived"), key, d)
		printf("  %s %s%.3f", key, json_is_true(json_object_get(d, "estimate")) ? "~" : "",
		       json_real_value(json_object_get(d, "value")));
	printf("\n");
}

/* An argument as a shell would need it to read it back: bare when it is
 * plain, else in single quotes. */
static size_t arg_text(const char *a, char *out, size_t n)
{
	bool plain = *a != '\0';
	size_t o = 0;

	for (const char *c = a; *c; c++)
		plain &= !strchr(" \t'\"\\$`;&|<>(){}*?!#~", *c);
	if (plain)
		return (size_t)snprintf(out, n, "%s", a);
	o = (size_t)snprintf(out, n, "'");
	for (; *a && o < n; a++)
		o += *a == '\'' ? (size_t)snprintf(out + o, n - o, "'\\''") : (size_t)snprintf(out + o, n - o, "%c", *a);
	if (o < n)
		o += (size_t)snprintf(out + o, n - o, "'");
	return o;
}

/* The argv of an incarnation's last exec (spec 1.4), at most AN_ARGV_WIDTH
 * characters, the cut marked; nothing for an older bundle, which has none. */
#define AN_ARGV_WIDTH 160

static void print_argv(json_t *in, int depth)
{
	json_t *ex = json_object_get(in, "exec"), *last = json_array_get(ex, json_array_size(ex) - 1), *a, *x;
	char line[AN_ARGV_WIDTH * 4 + 64];
	size_t o = 0, i;
	bool cut = false;

	if (!last)
		return;
	line[0] = '\0';
	a = json_object_get(last, "argv");
	if (!a) {
		if (json_object_get(last, "argv_reason")) {
			printf("  %*s     argv not recorded: ", 2 * depth, "");
			put_text(sget(last, "argv_reason"));
			printf("\n");
		}
		return;
	}
	json_array_foreach(a, i, x) {
		char arg[AN_ARGV_WIDTH * 4 + 8];
		size_t n = arg_text(json_string_value(x) ? json_string_value(x) : "?", arg, sizeof(arg));

		if (o + (i ? 1 : 0) + n > AN_ARGV_WIDTH) {
			/* a first argument longer than the width: its start */
			if (!i) {
				memcpy(line, arg, AN_ARGV_WIDTH);
				line[AN_ARGV_WIDTH] = '\0';
			}
			cut = true;
			break;
		}
		o += (size_t)snprintf(line + o, sizeof(line) - o, "%s%s", i ? " " : "", arg);
	}
	printf("  %*s     argv ", 2 * depth, "");
	put_text(json_array_size(a) ? line : "(empty)");
	if (cut)
		printf(" ... (%zu of %zu arguments shown)", i, json_array_size(a));
	if (json_is_true(json_object_get(last, "argv_truncated")))
		printf(" [truncated by the recorder]");
	printf("\n");
}

/* The incarnation's counted task-clock is exact (no estimate). */
static bool exact_task_clock(json_t *counting, const char *inc)
{
	json_t *t = json_object_get(json_object_get(json_object_get(counting, "totals"), inc), "task-clock");

	return t && !strcmp(sget(t, "status"), "ok") && !json_is_true(json_object_get(t, "estimate")) &&
	       json_object_get(t, "value_ns");
}

/* The tree in the depth-first order the model computed (model.c). */
static void print_tree(json_t *rep, json_t *incs)
{
	size_t k;
	json_t *o;

	json_array_foreach(json_object_get(rep, "tree"), k, o) {
		json_t *in = json_array_get(incs, (size_t)json_integer_value(json_object_get(o, "index")));
		int depth = (int)json_integer_value(json_object_get(o, "depth"));
		json_t *exec = json_object_get(in, "exec");
		json_int_t s = json_integer_value(json_object_get(in, "start_ns"));
		json_t *end = json_object_get(in, "end_ns");

		if (!in)
			continue;
		printf("  %*s%s pid %lld ", 2 * depth, "", sget(in, "id"),
		       (long long)json_integer_value(json_object_get(in, "pid")));
		put_text(sget(in, "comm"));
		if (json_array_size(exec)) {
			printf(" (");
			put_text(sget(json_array_get(exec, json_array_size(exec) - 1), "path"));
			/* a shim that exec'd the program (env, a shell): its chain */
			if (json_array_size(exec) > 1 || json_object_get(in, "exec_omitted")) {
				printf("; exec chain ");
				put_text(sget(in, "exec_chain"));
			}
			printf(")");
		}
		if (json_is_true(json_object_get(in, "preexisting")))
			printf(", running before the recording (times from attach)");
		if (end)
			printf(", %.3f ms, ", ms(json_integer_value(end) - s));
		else
			printf(", alive at end, ");
		print_exit(json_object_get(in, "exit"));
		printf(", %lld thread%s\n", (long long)json_integer_value(json_object_get(in, "threads")),
		       json_integer_value(json_object_get(in, "threads")) == 1 ? "" : "s");
		print_argv(in, depth);
		print_resources(json_object_get(in, "resources"), depth,
				exact_task_clock(json_object_get(rep, "counting"), sget(in, "id")));
		print_inc_counts(json_object_get(rep, "counting"), sget(in, "id"), depth);
	}
}

static void print_header(json_t *rep, const char *label)
{
	json_t *run = json_object_get(rep, "run"), *x, *host = json_object_get(rep, "host");
	size_t i;
	json_int_t dur = json_integer_value(json_object_get(run, "end_ns")) -
			 json_integer_value(json_object_get(run, "start_ns"));
	long long nrep = (long long)json_integer_value(json_object_get(json_object_get(rep, "repetitions"), "n"));

	if (label)
		printf("%s        %s\n", label, sget(rep, "bundle"));
	printf("command  ");
	json_array_foreach(json_object_get(run, "argv"), i, x) {
		printf("%s", i ? " " : "");
		put_text(json_string_value(x));
	}
	printf("\nmode     %s\nresult   %s\nexit     ", sget(run, "mode"), sget(run, "result"));
	print_exit(json_object_get(run, "exit"));
	printf("\nwall     %.3f ms (run window", ms(dur));
	if (nrep > 1) {
		/* the header, the wall-time split and the tree are repetition 1's;
		 * the metrics section has every repetition's medians */
		json_t *s;

		printf(" of repetition 1 of %lld", nrep);
		json_array_foreach(json_object_get(json_object_get(rep, "repetitions"), "summary"), i, s)
			if (!strcmp(sget(s, "name"), "wall") && !strcmp(sget(s, "status"), "ok"))
				printf("; the root's lifetime, median of %lld: %.3f ms",
				       (long long)json_integer_value(json_object_get(s, "n")),
				       json_real_value(json_object_get(s, "median")) / 1e6);
	}
	printf(")\nhost     %s %s %s\nrecorder %s %s\n", sget(host, "os"), sget(host, "kernel"), sget(host, "arch"),
	       sget(json_object_get(run, "tool"), "name"), sget(json_object_get(run, "tool"), "version"));
	if (nrep > 1)
		printf("repeats  %lld\n", nrep);
}

static void print_failed(json_t *rep)
{
	json_t *x;
	size_t i;

	if (json_is_true(json_object_get(rep, "valid")))
		return;
	printf("INVALID BUNDLE (analyzed on request): %zu failed check(s) in %s\n",
	       json_array_size(json_object_get(rep, "failed_checks")), sget(rep, "bundle"));
	json_array_foreach(json_object_get(rep, "failed_checks"), i, x)
		printf("  %s %s: %s\n", sget(x, "check"), sget(x, "where"), sget(x, "message"));
	printf("\n");
}

/* One line per cause (not_measured_groups): a cause of one item as before,
 * "WHAT STATUS REASON; remedy: ...", a cause of several on two lines, the
 * list first. */
static void print_not_measured(json_t *rep)
{
	json_t *x, *g = json_object_get(rep, "not_measured_groups");
	size_t i, j;

	printf("not measured (%zu, %zu cause%s)\n", json_array_size(json_object_get(rep, "not_measured")),
	       json_array_size(g), json_array_size(g) == 1 ? "" : "s");
	json_array_foreach(g, i, x) {
		json_t *w = json_object_get(x, "what"), *y;
		bool counters = true;

		if (json_array_size(w) == 1) {
			printf("  %-20s %-12s %s%s%s\n", json_string_value(json_array_get(w, 0)), sget(x, "status"),
			       sget(x, "reason"), *sget(x, "remedy") ? "; remedy: " : "", sget(x, "remedy"));
			continue;
		}
		json_array_foreach(w, j, y)
			counters &= !strncmp(json_string_value(y), "counter ", 8);
		printf("  %s", counters ? "counters " : "");
		json_array_foreach(w, j, y)
			printf("%s%s", j ? ", " : "", json_string_value(y) + (counters ? 8 : 0));
		printf(" (%zu)\n  %-20s %-12s %s%s%s\n", json_array_size(w), "", sget(x, "status"), sget(x, "reason"),
		       *sget(x, "remedy") ? "; remedy: " : "", sget(x, "remedy"));
	}
}

static void fmt_ns(double ns, char *out, size_t n)
{
	if (ns >= 1e9)
		snprintf(out, n, "%.3f s", ns / 1e9);
	else
		snprintf(out, n, "%.3f ms", ns / 1e6);
}

/* Where the wall time went, before any cost is named (wall_time). */
static void print_wall_time(json_t *rep)
{
	json_t *w = json_object_get(rep, "wall_time"), *x;
	char a[32], b[32];
	size_t i, n = 0;

	if (!w)
		return;
	printf("\nwall time%s\n", json_integer_value(json_object_get(json_object_get(rep, "repetitions"), "n")) > 1
					 ? " (repetition 1)" : "");
	if (strcmp(sget(w, "status"), "ok")) {
		printf("  not decomposed: %s\n", sget(w, "reason"));
		return;
	}
	fmt_ns((double)json_integer_value(json_object_get(w, "wall_ns")), a, sizeof(a));
	printf("  wall         %s (the root's lifetime, fork to reap)\n", a);
	fmt_ns((double)json_integer_value(json_object_get(w, "on_cpu_ns")), a, sizeof(a));
	printf("  on CPU       %s%s, %.0f%% of wall, average parallelism %.2f (%s", 
	       json_is_true(json_object_get(w, "on_cpu_estimate")) ? "~" : "", a,
	       json_real_value(json_object_get(w, "on_cpu_percent")), json_real_value(json_object_get(w, "parallelism")),
	       sget(w, "on_cpu_source"));
	if (json_object_get(w, "on_cpu_resolution_ns"))
		printf("; resolution %.0f ms a value",
		       (double)json_integer_value(json_object_get(w, "on_cpu_resolution_ns")) / 1e6);
	else if (json_is_true(json_object_get(w, "on_cpu_estimate")))
		printf("; estimated");
	printf(")\n");
	if ((x = json_object_get(w, "on_cpu_by_code")) && json_array_size(json_object_get(x, "functions"))) {
		json_t *f;

		printf("  by code      ");
		json_array_foreach(json_object_get(x, "functions"), i, f) {
			double e = (double)json_integer_value(json_object_get(f, "est_ns"));

			/* an estimate within a few percent: no more digits than that */
			if (e >= 1e9)
				snprintf(a, sizeof(a), "%.2f s", e / 1e9);
			else if (e >= 1e6)
				snprintf(a, sizeof(a), "%.0f ms", e / 1e6);
			else
				snprintf(a, sizeof(a), "%.0f us", e / 1e3);
			printf("%s~%s %s in %s (%.0f%% [%.0f%%..%.0f%%])", i ? ", " : "", a, sget(f, "function"),
			       sget(f, "program"), json_real_value(json_object_get(f, "share_percent")),
			       json_real_value(json_object_get(f, "ci_low_percent")),
			       json_real_value(json_object_get(f, "ci_high_percent")));
		}
		printf("\n               estimates: %s\n", sget(x, "basis"));
	}
	fmt_ns((double)json_integer_value(json_object_get(w, "off_cpu_ns")), a, sizeof(a));
	printf("  off CPU      at least %s, %.0f%% of wall: no cohort task on a CPU (blocked, sleeping or runnable but "
	       "waiting)\n", a, json_real_value(json_object_get(w, "off_cpu_percent")));
	json_array_foreach(json_object_get(w, "attributed"), i, x) {
		fmt_ns((double)json_integer_value(json_object_get(x, "value_ns")), a, sizeof(a));
		printf("  %-12s %s%s, %.0f%% of wall, %s: %s\n", n++ ? "" : "attributed",
		       json_is_true(json_object_get(x, "estimate")) ? "~" : "", a, json_real_value(json_object_get(x, "percent")),
		       sget(x, "what"), sget(x, "source"));
	}
	fmt_ns((double)json_integer_value(json_object_get(w, "unattributed_ns")), b, sizeof(b));
	printf("  %-12s %s, %.0f%% of wall: %s\n", n ? "unattributed" : "attributed", n ? b : "none of it",
	       json_real_value(json_object_get(w, "unattributed_percent")), sget(w, "would_attribute"));
}

/* Another row has the program name of row k: the image tells them apart. */
static bool same_name(json_t *rows, size_t k)
{
	json_t *r;
	size_t i;

	json_array_foreach(rows, i, r)
		if (i != k && !strcmp(sget(r, "program"), sget(json_array_get(rows, k), "program")))
			return true;
	return false;
}

/* The largest programs (programs): processes and their share of the
 * cohort's CPU. */
static void print_programs(json_t *rep)
{
	json_t *p = json_object_get(rep, "programs"), *r;
	size_t i;
	bool task = !strcmp(sget(p, "metric"), "task-clock");

	if (!p || !json_array_size(json_object_get(p, "rows")))
		return;
	printf("\nprograms (%lld; by %s", (long long)json_integer_value(json_object_get(p, "count")),
	       task ? "counted task-clock" : "CPU time at exit");
	if (strcmp(sget(p, "status"), "ok"))
		printf(": not measured, %s", sget(p, "reason"));
	printf("; the largest 10)\n");
	json_array_foreach(json_object_get(p, "rows"), i, r) {
		char v[32] = "n/a", name[300];

		if (i >= 10)
			break;
		if (json_object_get(r, "value_ns"))
			fmt_ns((double)json_integer_value(json_object_get(r, "value_ns")), v, sizeof(v));
		if (json_is_string(json_object_get(r, "image")) &&
		    (strcmp(sget(r, "program"), strrchr(sget(r, "image"), '/') ? strrchr(sget(r, "image"), '/') + 1
										: sget(r, "image")) ||
		     same_name(json_object_get(p, "rows"), i)))
			snprintf(name, sizeof(name), "%s (%s)", sget(r, "program"), sget(r, "image"));
		else
			snprintf(name, sizeof(name), "%s", sget(r, "program"));
		printf("  ");
		put_text(name);
		printf("%*s %5lld process%s  %s%s", (int)(strlen(name) < 28 ? 28 - strlen(name) : 1), "",
		       (long long)json_integer_value(json_object_get(r, "processes")),
		       json_integer_value(json_object_get(r, "processes")) == 1 ? "  " : "es",
		       json_is_true(json_object_get(r, "estimate")) ? "~" : "", v);
		if (json_object_get(r, "share_percent"))
			printf(", %.0f%% of the cohort's", json_real_value(json_object_get(r, "share_percent")));
		printf("\n");
	}
	{
		size_t shown = json_array_size(json_object_get(p, "rows")) < 10 ? json_array_size(json_object_get(p, "rows")) : 10;
		json_int_t more = json_integer_value(json_object_get(p, "count")) - (json_int_t)shown,
			   unindexed = json_integer_value(json_object_get(p, "unindexed_processes"));

		if (more > 0)
			printf("  %lld more program%s not shown (--json lists 100)\n", (long long)more, more == 1 ? "" : "s");
		if (unindexed > 0)
			printf("  %lld process%s of programs past the first 4096 not told apart\n", (long long)unindexed,
			       unindexed == 1 ? "" : "es");
	}
}

/* ---- the profile ------------------------------------------------------------------ */

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');

	return b && b[1] ? b + 1 : p;
}

/* One ranked function: count, share and its interval, where it is. */
static void print_prof_row(json_t *r, int indent)
{
	char name[400], where[400] = "";

	snprintf(name, sizeof(name), "%s", sget(r, "function"));
	if (json_object_get(r, "file"))
		snprintf(where, sizeof(where), "  %s:%lld", base_name(sget(r, "file")),
			 (long long)json_integer_value(json_object_get(r, "line")));
	else if (json_object_get(r, "reason"))
		snprintf(where, sizeof(where), "  (%s%s%s)", sget(r, "reason"),
			 json_object_get(r, "build_id") && !strstr(sget(r, "reason"), sget(r, "build_id")) ? ", build-id " : "",
			 json_object_get(r, "build_id") && !strstr(sget(r, "reason"), sget(r, "build_id")) ? sget(r, "build_id")
													  : "");
	else if (json_object_get(r, "object") && strcmp(sget(r, "status"), "kernel"))
		snprintf(where, sizeof(where), "  [%s]", base_name(sget(r, "object")));
	printf("%*s", indent, "");
	put_text(name);
	printf("%*s %8lld %6.1f%% [%5.1f%% .. %5.1f%%]", (int)(strlen(name) < 36 ? 36 - strlen(name) : 1), "",
	       (long long)json_integer_value(json_object_get(r, "samples")),
	       json_real_value(json_object_get(r, "share_percent")), json_real_value(json_object_get(r, "ci_low_percent")),
	       json_real_value(json_object_get(r, "ci_high_percent")));
	put_text(where);
	printf("\n");
	if (json_object_get(r, "inline_chain")) {
		printf("%*s  inline: ", indent, "");
		put_text(sget(r, "inline_chain"));
		printf("\n");
	}
}

static void print_prof_edges(json_t *e, const char *label)
{
	json_t *x;
	size_t i;

	printf(" %s ", label);
	if (!json_array_size(e))
		printf("-");
	json_array_foreach(e, i, x) {
		printf("%s", i ? ", " : "");
		put_text(sget(x, "function"));
		printf(" %.0f%%", json_real_value(json_object_get(x, "percent_of_inclusive")));
	}
	printf(";");
}

/* A program's or an incarnation's rankings. */
static void print_prof_scope(json_t *sc, int indent, size_t top, bool details)
{
	json_t *r, *h = json_object_get(sc, "hottest_line");
	size_t i;

	printf("%*sself%*s  samples  share   95%% interval\n", indent, "", 33, "");
	json_array_foreach(json_object_get(sc, "self"), i, r) {
		if (i >= top)
			break;
		print_prof_row(r, indent + 2);
	}
	if (json_integer_value(json_object_get(sc, "functions_with_self")) > (json_int_t)top)
		printf("%*s%lld more functions with self samples (--json lists %zu)\n", indent + 2, "",
		       (long long)(json_integer_value(json_object_get(sc, "functions_with_self")) - (json_int_t)top),
		       json_array_size(json_object_get(sc, "self")));
	if (!details)
		return;
	printf("%*sinclusive (each function once per sample)\n", indent, "");
	json_array_foreach(json_object_get(sc, "inclusive"), i, r) {
		if (i >= top)
			break;
		print_prof_row(r, indent + 2);
	}
	if (json_array_size(json_object_get(sc, "callers_callees"))) {
		printf("%*scallers and callees (share of the function's inclusive samples)\n", indent, "");
		json_array_foreach(json_object_get(sc, "callers_callees"), i, r) {
			printf("%*s", indent + 2, "");
			put_text(sget(r, "function"));
			printf(":");
			print_prof_edges(json_object_get(r, "callers"), "called from");
			print_prof_edges(json_object_get(r, "callees"), "calls");
			printf("\n");
		}
	}
	if (h) {
		printf("%*shottest line: %s, %lld samples, %.1f%% [%.1f%% .. %.1f%%]: ", indent, "", sget(h, "where"),
		       (long long)json_integer_value(json_object_get(h, "samples")),
		       json_real_value(json_object_get(h, "share_percent")), json_real_value(json_object_get(h, "ci_low_percent")),
		       json_real_value(json_object_get(h, "ci_high_percent")));
		put_text(sget(h, "chain"));
		printf("\n");
	}
}

static void print_profile(json_t *rep)
{
	json_t *p = json_object_get(rep, "profile"), *c = json_object_get(p, "config"), *a = json_object_get(p, "accounting"),
	       *x, *pr;
	size_t i, k;

	if (!p)
		return;
	if (strcmp(sget(p, "status"), "ok")) {
		printf("\nprofile: %s: %s", sget(p, "status"), sget(p, "reason"));
		if (*sget(p, "remedy") && strcmp(sget(p, "remedy"), "?"))
			printf("; %s", sget(p, "remedy"));
		printf("\n");
		return;
	}
	printf("\nprofile (repetition %lld; %s", (long long)json_integer_value(json_object_get(p, "repetition")),
	       sget(c, "event"));
	if (json_object_get(c, "freq_hz"))
		printf(" at %lld Hz", (long long)json_integer_value(json_object_get(c, "freq_hz")));
	else if (json_object_get(c, "period"))
		printf(" every %lld events", (long long)json_integer_value(json_object_get(c, "period")));
	printf(", call chains %s; shares are estimates from samples, with 95%% Wilson intervals)\n", sget(c, "call_graph"));
	printf("  accounted: %lld samples of the cohort", (long long)json_integer_value(json_object_get(a, "samples")));
	if (json_is_integer(json_object_get(a, "unattributed")))
		printf(", %lld unattributed (of no cohort process, left out)",
		       (long long)json_integer_value(json_object_get(a, "unattributed")));
	else
		printf(", unattributed unknown (no summary record)");
	printf(", %lld lost (ring full), %lld lost samples, %lld throttles, %lld chains cut",
	       (long long)json_integer_value(json_object_get(a, "lost_records")),
	       (long long)json_integer_value(json_object_get(a, "lost_samples")),
	       (long long)json_integer_value(json_object_get(a, "throttles")),
	       (long long)json_integer_value(json_object_get(a, "chains_cut")));
	if (json_integer_value(json_object_get(a, "unwind_failed")))
		printf(", %lld not unwound (%s)", (long long)json_integer_value(json_object_get(a, "unwind_failed")),
		       sget(a, "unwind_reason"));
	if (json_integer_value(json_object_get(a, "malformed_records")))
		printf(", %lld malformed records skipped", (long long)json_integer_value(json_object_get(a, "malformed_records")));
	if (json_integer_value(json_object_get(a, "not_in_cohort")))
		printf(", %lld of incarnations not in the cohort skipped",
		       (long long)json_integer_value(json_object_get(a, "not_in_cohort")));
	printf("\n");
	if (strcmp(sget(c, "kernel"), "sampled") && json_object_get(c, "kernel"))
		printf("  kernel code not sampled%s%s\n", json_object_get(c, "kernel_reason") ? ": " : "",
		       json_object_get(c, "kernel_reason") ? sget(c, "kernel_reason") : "");
	else if (json_object_get(c, "kallsyms") && strcmp(sget(c, "kallsyms"), "recorded") &&
		 strcmp(sget(c, "kallsyms"), "not-needed"))
		printf("  kernel functions not named: kallsyms %s%s%s\n", sget(c, "kallsyms"),
		       json_object_get(c, "kallsyms_reason") ? ": " : "",
		       json_object_get(c, "kallsyms_reason") ? sget(c, "kallsyms_reason") : "");
	if (json_object_get(p, "symbolizer_reason"))
		printf("  %s\n", sget(p, "symbolizer_reason"));
	json_array_foreach(json_object_get(p, "unsymbolized"), i, x) {
		if (i >= PROF_TEXT_ROWS) {
			printf("  not symbolized: %zu more objects and reasons (--json lists them)\n",
			       json_array_size(json_object_get(p, "unsymbolized")) - PROF_TEXT_ROWS);
			break;
		}
		if (!strcmp(sget(x, "status"), "unmapped") && json_integer_value(json_object_get(a, "lost_records")))
			printf("  (records lost from the ring may have held the maps of the unmapped addresses below)\n");
		printf("  not symbolized: %lld samples through ", (long long)json_integer_value(json_object_get(x, "samples_through")));
		put_text(sget(x, "function"));
		printf(" (%lld innermost): ", (long long)json_integer_value(json_object_get(x, "self_samples")));
		put_text(sget(x, "reason"));
		if (json_object_get(x, "build_id") && !strstr(sget(x, "reason"), sget(x, "build_id")))
			printf(", build-id %s", sget(x, "build_id"));
		printf("\n");
	}
	if (json_array_size(json_object_get(p, "repetitions"))) {
		/* the top self function of each program in every repetition */
		printf("  top self function by repetition (share of the program's samples, 95%% interval):\n");
		json_array_foreach(json_object_get(p, "repetitions"), i, x) {
			json_t *g;

			printf("    %lld:", (long long)json_integer_value(json_object_get(x, "repetition")));
			if (strcmp(sget(x, "status"), "ok"))
				printf(" %s: %s", sget(x, "status"), sget(x, "reason"));
			json_array_foreach(json_object_get(x, "programs"), k, g) {
				if (k >= 3)
					break;
				printf("%s ", k ? ";" : "");
				put_text(sget(g, "program"));
				printf(" ");
				put_text(sget(g, "function"));
				printf(" %.1f%% [%.1f%% .. %.1f%%] of %lld", json_real_value(json_object_get(g, "share_percent")),
				       json_real_value(json_object_get(g, "ci_low_percent")),
				       json_real_value(json_object_get(g, "ci_high_percent")),
				       (long long)json_integer_value(json_object_get(g, "samples")));
			}
			printf("\n");
		}
	}
	json_array_foreach(json_object_get(p, "programs"), i, pr) {
		json_int_t np = json_integer_value(json_object_get(pr, "processes_with_samples"));

		if (i >= 5)
			break;
		printf("\n  program ");
		put_text(sget(pr, "program"));
		printf(": %lld samples, %lld process%s with samples\n", (long long)json_integer_value(json_object_get(pr, "samples")),
		       (long long)np, np == 1 ? "" : "es");
		print_prof_scope(pr, 4, PROF_TEXT_ROWS, true);
		if (np < 2)
			continue;
		json_array_foreach(json_object_get(pr, "incarnations"), k, x) {
			if (k >= 5) {
				printf("    %lld more processes with samples (--json lists %zu)\n", (long long)np - 5,
				       json_array_size(json_object_get(pr, "incarnations")));
				break;
			}
			printf("    process %s (pid %lld, ", sget(x, "inc"), (long long)json_integer_value(json_object_get(x, "pid")));
			put_text(sget(x, "comm"));
			printf("): %lld samples\n", (long long)json_integer_value(json_object_get(x, "samples")));
			print_prof_scope(x, 6, 3, false);
		}
	}
	if (json_integer_value(json_object_get(p, "programs_with_samples")) > 5)
		printf("\n  %lld more programs with samples (--json lists %zu)\n",
		       (long long)json_integer_value(json_object_get(p, "programs_with_samples")) - 5,
		       json_array_size(json_object_get(p, "programs")));
}

static void print_summary(json_t *rep)
{
	json_t *reps = json_object_get(rep, "repetitions"), *s, *o;
	size_t i, k;

	if (json_integer_value(json_object_get(reps, "n")) < 2)
		return;
	printf("\nmetrics across %lld repetitions (median [min .. max], IQR; outliers by Tukey's fences)\n",
	       (long long)json_integer_value(json_object_get(reps, "n")));
	json_array_foreach(json_object_get(reps, "summary"), i, s) {
		char med[48], lo[48], hi[48], q1[48], q3[48];
		const char *unit = sget(s, "unit");

		if (strcmp(sget(s, "status"), "ok")) {
			printf("  %-26s n/a: %s\n", sget(s, "name"), sget(s, "reason"));
			continue;
		}
		an_fmt_value(json_real_value(json_object_get(s, "median")), unit, med, sizeof(med));
		an_fmt_value(json_real_value(json_object_get(s, "min")), unit, lo, sizeof(lo));
		an_fmt_value(json_real_value(json_object_get(s, "max")), unit, hi, sizeof(hi));
		an_fmt_value(json_real_value(json_object_get(s, "q1")), unit, q1, sizeof(q1));
		an_fmt_value(json_real_value(json_object_get(s, "q3")), unit, q3, sizeof(q3));
		printf("  %-26s %s%s [%s .. %s], IQR %s .. %s, n %lld", sget(s, "name"),
		       json_is_true(json_object_get(s, "estimate")) ? "~" : "", med, lo, hi, q1, q3,
		       (long long)json_integer_value(json_object_get(s, "n")));
		if (json_array_size(json_object_get(s, "outliers"))) {
			printf(", outliers: repetition");
			json_array_foreach(json_object_get(s, "outliers"), k, o)
				printf(" %lld", (long long)json_integer_value(o));
		}
		if (json_array_size(json_object_get(s, "missing")))
			printf(", %zu without a value", json_array_size(json_object_get(s, "missing")));
		printf("\n");
	}
}

/* One bundle's host load: host-wide, and said so. */
static void print_host_load_one(json_t *hl)
{
	json_t *ob = json_object_get(hl, "outside_busy_percent_median");

	if (!hl)
		return;
	if (strcmp(sget(hl, "status"), "ok")) {
		printf("  host load    n/a: %s\n", sget(hl, "reason"));
		return;
	}
	printf("  host load    system-wide, not the cohort's (estimates from /proc/stat clock ticks%s): busy outside "
	       "the cohort ", json_integer_value(json_object_get(hl, "repetitions")) > 1 ? "; medians" : "");
	if (ob)
		printf("%.1f%% of the host's CPU time", json_real_value(ob));
	else
		printf("n/a (the cohort's own CPU time is not known)");
	printf(", steal %.1f%%\n", json_real_value(json_object_get(hl, "steal_percent_median")));
}

static void print_single(json_t *rep)
{
	json_t *x, *counting = json_object_get(rep, "counting"), *ph = json_object_get(rep, "phases");
	size_t i;

	print_failed(rep);
	/* the invalid bundle's warning is print_failed()'s heading already */
	json_array_foreach(json_object_get(rep, "warnings"), i, x)
		if (i || json_is_true(json_object_get(rep, "valid")))
			printf("WARNING: %s\n", json_string_value(x));
	if (json_array_size(json_object_get(rep, "warnings")) > (json_is_true(json_object_get(rep, "valid")) ? 0u : 1u))
		printf("\n");
	print_header(rep, NULL);
	print_wall_time(rep);
	print_host_load_one(json_object_get(rep, "host_load"));
	printf("\ndominant cost: %s\n", sget(json_object_get(rep, "dominant_cost"), "statement"));
	print_programs(rep);
	print_profile(rep);
	an_oscall_print(json_object_get(rep, "oscall"), stdout);
	an_runtime_print(json_object_get(rep, "runtime"), stdout);
	printf("\n");
	print_not_measured(rep);
	printf("\ncollectors\n");
	json_array_foreach(json_object_get(rep, "collectors"), i, x) {
		printf("  %-20s %-14s %s", sget(x, "name"), sget(x, "status"),
		       json_is_true(json_object_get(x, "requested")) ? "requested" : "not requested");
		if (json_integer_value(json_object_get(x, "dropped")))
			printf(", %lld dropped", (long long)json_integer_value(json_object_get(x, "dropped")));
		if (json_integer_value(json_object_get(x, "malformed")))
			printf(", %lld malformed", (long long)json_integer_value(json_object_get(x, "malformed")));
		if (*sget(x, "evidence") && strcmp(sget(x, "evidence"), "?"))
			printf("\n  %-20s attached: %s", "", sget(x, "evidence"));
		printf("\n");
	}
	x = json_object_get(rep, "cohort_listing");
	if (json_integer_value(json_object_get(json_object_get(rep, "repetitions"), "n")) > 1)
		printf("\nprocess tree (repetition 1 of %lld; %lld incarnations)\n",
		       (long long)json_integer_value(json_object_get(json_object_get(rep, "repetitions"), "n")),
		       (long long)json_integer_value(json_object_get(x, "incarnations")));
	else
		printf("\nprocess tree (%lld incarnations)\n",
		       (long long)json_integer_value(json_object_get(x, "incarnations")));
	printf("  (rchar/wchar: bytes passed to read/write-like system calls, page cache included; not storage I/O)\n");
	print_tree(rep, json_object_get(rep, "cohort"));
	if (json_integer_value(json_object_get(x, "omitted")))
		printf("  %s\n", sget(x, "statement"));
	if (counting && json_array_size(json_object_get(counting, "cohort"))) {
		printf("\ncohort counters\n");
		json_array_foreach(json_object_get(counting, "cohort"), i, x) {
			char v[200];

			const char *why = json_string_value(json_object_get(x, "reason"));
			/* spec 1.5: how the processes' counts were made */
			const char *method = json_string_value(json_object_get(x, "method"));

			an_fmt_count(x, v, sizeof(v));
			/* a cohort value not counted says why (a hardware event
			 * left off the cgroup, parts not counted) */
			printf("  %-26s %-13s %s%s%s%s%s%s\n", sget(x, "counter"),
			       !strcmp(sget(x, "scope"), "cgroup") ? "cgroup" : "sum of procs", v, why ? ": " : "",
			       why ? why : "", method ? " [counted " : "", method ? method : "", method ? "]" : "");
		}
	}
	if (json_array_size(json_object_get(counting, "cgroup_stats"))) {
		printf("\ncgroup statistics (cohort's leaf cgroup; 'system' lines are the whole host, not the cohort)\n");
		json_array_foreach(json_object_get(counting, "cgroup_stats"), i, x) {
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
	if (json_array_size(json_object_get(ph, "phases"))) {
		printf("\nphases (%s)\n", sget(ph, "note"));
		json_array_foreach(json_object_get(ph, "phases"), i, x)
			printf("  %-10s %.3f .. %.3f ms\n", sget(x, "name"), ms(json_integer_value(json_object_get(x, "from_ns"))),
			       ms(json_integer_value(json_object_get(x, "to_ns"))));
	}
	print_summary(rep);
}

/* ---- text: two bundles ------------------------------------------------------- */

/* The host's load beside the cohort: host-wide, and said so on every line. */
static void print_host_load(json_t *hl)
{
	static const char *const side[] = { "a", "b" };

	if (strcmp(sget(hl, "status"), "ok")) {
		printf("  host load n/a: %s\n", sget(hl, "reason"));
		return;
	}
	printf("\nhost load (system-wide, not the cohort's; estimates from /proc/stat clock ticks; medians)\n");
	for (int k = 0; k < 2; k++) {
		json_t *s = json_object_get(hl, side[k]);

		json_t *ob = json_object_get(s, "outside_busy_percent_median");

		printf("  %s busy outside the cohort ", k ? "B" : "A");
		if (ob)
			printf("%.1f%% of the host's CPU time", json_real_value(ob));
		else
			printf("n/a (the cohort's own CPU time is not known)");
		printf(", steal %.1f%% (%lld repetition%s", json_real_value(json_object_get(s, "steal_percent_median")),
		       (long long)json_integer_value(json_object_get(s, "repetitions")),
		       json_integer_value(json_object_get(s, "repetitions")) == 1 ? "" : "s");
		if (json_integer_value(json_object_get(s, "repetitions_without")))
			printf(", %lld without", (long long)json_integer_value(json_object_get(s, "repetitions_without")));
		printf(")\n");
	}
}

static void print_compare(json_t *report)
{
	json_t *a = json_object_get(report, "a"), *b = json_object_get(report, "b"),
	       *cmp = json_object_get(report, "comparison"), *x, *ov = json_object_get(cmp, "overhead");
	size_t i;

	json_array_foreach(json_object_get(report, "warnings"), i, x)
		printf("WARNING: %s\n", json_string_value(x));
	if (json_array_size(json_object_get(report, "warnings")))
		printf("\n");
	print_failed(a);
	print_failed(b);
	printf("A %s (mode %s, %lld repetition%s)\nB %s (mode %s, %lld repetition%s)\n", sget(a, "bundle"),
	       sget(json_object_get(a, "run"), "mode"),
	       (long long)json_integer_value(json_object_get(json_object_get(a, "repetitions"), "n")),
	       json_integer_value(json_object_get(json_object_get(a, "repetitions"), "n")) == 1 ? "" : "s",
	       sget(b, "bundle"), sget(json_object_get(b, "run"), "mode"),
	       (long long)json_integer_value(json_object_get(json_object_get(b, "repetitions"), "n")),
	       json_integer_value(json_object_get(json_object_get(b, "repetitions"), "n")) == 1 ? "" : "s");
	printf("\ncomparability: %s\n", json_is_true(json_object_get(cmp, "comparable")) ? "comparable"
				      : json_is_true(json_object_get(report, "forced")) ? "NOT comparable (compared anyway: --force)"
											 : "NOT comparable");
	printf("  %s\n", sget(json_object_get(cmp, "comparability"), "statement"));
	json_array_foreach(json_object_get(cmp, "differences"), i, x)
		printf("  %-8s %s: A %s, B %s\n", json_is_true(json_object_get(x, "refusing")) ? "differs" : "note",
		       sget(x, "what"), sget(x, "a"), sget(x, "b"));
	if (!json_array_size(json_object_get(cmp, "differences")))
		printf("  no differences in command, mode, counters, host, settings or images\n");
	print_host_load(json_object_get(cmp, "host_load"));
	printf("\nminimum effect %g%% (%s): a change whose 95%% interval lies within it is no practical difference\n",
	       json_real_value(json_object_get(cmp, "min_effect_percent")), sget(cmp, "min_effect_source"));
	printf("\n%-26s %14s %14s %9s %21s %8s  %s\n", "metric", "A median", "B median", "change", "95% CI", "p",
	       "verdict");
	json_array_foreach(json_object_get(cmp, "metrics"), i, x) {
		struct an_cells cl;

		/* a metric neither or only one side has: listed once, below */
		if (!json_integer_value(json_object_get(x, "n_a")) || !json_integer_value(json_object_get(x, "n_b")))
			continue;
		an_fmt_compared(x, &cl);
		printf("%-26s %14s %14s %9s %21s %8s  %s%s%s%s\n", sget(x, "name"), cl.va, cl.vb, cl.ch, cl.ci, cl.p,
		       c_on(sget(x, "verdict_code")), cl.verdict, c_off(),
		       json_is_true(json_object_get(x, "estimate")) ? " (estimates)" : "");
	}
	{
		int n = 0;

		json_array_foreach(json_object_get(cmp, "metrics"), i, x)
			if (!json_integer_value(json_object_get(x, "n_a")) || !json_integer_value(json_object_get(x, "n_b")))
				printf("%s%s", n++ ? ", " : "\nnot compared (no value in A or in B): ", sget(x, "name"));
		if (n)
			printf("\n");
	}
	{
		json_t *sd = json_object_get(cmp, "syscalls"), *r;
		size_t k;

		if (strcmp(sget(sd, "status"), "ok")) {
			printf("\nsystem calls not compared: %s\n", sget(sd, "reason"));
		} else {
			printf("\nsystem calls: B - A per syscall (one run each: exact counts and times; p50 ~ estimates), "
			       "largest change in time first\n");
			json_array_foreach(json_object_get(sd, "rows"), k, r) {
				char ta[32], tb[32];

				if (k >= 10)
					break;
				fmt_ns((double)json_integer_value(json_object_get(r, "total_ns_a")), ta, sizeof(ta));
				fmt_ns((double)json_integer_value(json_object_get(r, "total_ns_b")), tb, sizeof(tb));
				printf("  %-18s calls %lld -> %lld (%+lld), time %s -> %s%s\n", sget(r, "syscall"),
				       (long long)json_integer_value(json_object_get(r, "count_a")),
				       (long long)json_integer_value(json_object_get(r, "count_b")),
				       (long long)json_integer_value(json_object_get(r, "count_delta")), ta, tb,
				       strcmp(sget(r, "presence"), "both") ? strcmp(sget(r, "presence"), "only-a") ? " (only in B)"
														     : " (only in A)" : "");
			}
		}
	}
	{
		/* spans and GC pauses side by side (runtime.h's an_runtime_compare()) */
		json_t *rd = json_object_get(cmp, "runtime"), *r;
		size_t k;

		if (strcmp(sget(rd, "status"), "ok")) {
			printf("\nruntime evidence not compared: %s\n", sget(rd, "reason"));
		} else {
			printf("\nspans and GC pauses: A -> B (one run each: exact counts, totals and p50)\n");
			json_array_foreach(json_object_get(rd, "spans"), k, r) {
				char ta[32], tb[32], pa[32], pb[32];

				if (k >= 10)
					break;
				fmt_ns((double)json_integer_value(json_object_get(r, "total_ns_a")), ta, sizeof(ta));
				fmt_ns((double)json_integer_value(json_object_get(r, "total_ns_b")), tb, sizeof(tb));
				fmt_ns((double)json_integer_value(json_object_get(r, "p50_ns_a")), pa, sizeof(pa));
				fmt_ns((double)json_integer_value(json_object_get(r, "p50_ns_b")), pb, sizeof(pb));
				printf("  span %-20s count %lld -> %lld, total %s -> %s, p50 %s -> %s%s\n", sget(r, "name"),
				       (long long)json_integer_value(json_object_get(r, "count_a")),
				       (long long)json_integer_value(json_object_get(r, "count_b")), ta, tb,
				       json_object_get(r, "p50_ns_a") ? pa : "-", json_object_get(r, "p50_ns_b") ? pb : "-",
				       strcmp(sget(r, "presence"), "both") ? strcmp(sget(r, "presence"), "only-a") ? " (only in B)"
														     : " (only in A)" : "");
			}
			json_array_foreach(json_object_get(rd, "gc"), k, r) {
				char ta[32], tb[32];

				if (k >= 10)
					break;
				fmt_ns((double)json_integer_value(json_object_get(r, "total_ns_a")), ta, sizeof(ta));
				fmt_ns((double)json_integer_value(json_object_get(r, "total_ns_b")), tb, sizeof(tb));
				printf("  GC %s %-16s pauses %lld -> %lld, total %s -> %s%s\n", sget(r, "runtime"), sget(r, "kind"),
				       (long long)json_integer_value(json_object_get(r, "count_a")),
				       (long long)json_integer_value(json_object_get(r, "count_b")), ta, tb,
				       strcmp(sget(r, "presence"), "both") ? strcmp(sget(r, "presence"), "only-a") ? " (only in B)"
														     : " (only in A)" : "");
			}
		}
	}
	{
		json_t *pd = json_object_get(cmp, "profile"), *pr, *f;
		size_t k;

		if (strcmp(sget(pd, "status"), "ok")) {
			printf("\nprofiles not compared: %s\n", sget(pd, "reason"));
		} else {
			printf("\nprofiles: self share per function, B - A in points (95%% Newcombe interval; functions "
			       "matched by build-id and symbol; estimates from samples)\n");
			json_array_foreach(json_object_get(pd, "programs"), i, pr) {
				printf("  program ");
				put_text(sget(pr, "program"));
				if (json_object_get(pr, "verdict")) {
					printf(": %s\n", sget(pr, "verdict"));
					continue;
				}
				printf(" (A %lld samples, B %lld)\n", (long long)json_integer_value(json_object_get(pr, "a_samples")),
				       (long long)json_integer_value(json_object_get(pr, "b_samples")));
				json_array_foreach(json_object_get(pr, "functions"), k, f) {
					char sa[32] = "-", sb[32] = "-";

					if (k >= 15)
						break;
					if (json_object_get(f, "a_share_percent"))
						snprintf(sa, sizeof(sa), "%.1f%%", json_real_value(json_object_get(f, "a_share_percent")));
					if (json_object_get(f, "b_share_percent"))
						snprintf(sb, sizeof(sb), "%.1f%%", json_real_value(json_object_get(f, "b_share_percent")));
					printf("    %-32s A %7s  B %7s  ", sget(f, "function"), sa, sb);
					put_text(sget(f, "verdict"));
					printf("\n");
				}
			}
		}
	}
	if (json_is_true(json_object_get(ov, "applicable"))) {
		printf("\nobserver overhead of mode %s (campaign %s; run order:", sget(ov, "b_mode"), sget(ov, "campaign"));
		json_array_foreach(json_object_get(ov, "order"), i, x)
			printf(" %s#%lld", sget(x, "mode"), (long long)json_integer_value(json_object_get(x, "repetition")));
		printf(")\n");
		json_array_foreach(json_object_get(ov, "metrics"), i, x)
			printf("  %-24s %+.1f%% (95%% CI %+.1f%% .. %+.1f%%)\n", sget(x, "name"),
			       json_real_value(json_object_get(x, "overhead_percent")),
			       json_real_value(json_object_get(x, "ci_low_percent")),
			       json_real_value(json_object_get(x, "ci_high_percent")));
		printf("  %s\n", sget(ov, "statement"));
	}
	if (json_array_size(json_object_get(report, "gates"))) {
		printf("\ngates\n");
		json_array_foreach(json_object_get(report, "gates"), i, x)
			printf("  %s%-8s%s %s: %s\n", c_on(sget(x, "status")), sget(x, "status"), c_off(), sget(x, "expr"),
			       sget(x, "message"));
	}
}

/* ---- CSV ---------------------------------------------------------------------- */

static void csv_field(const char *s)
{
	bool q = strpbrk(s, ",\"\n\r") != NULL;

	if (!q) {
		fputs(s, stdout);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

static void csv_num(json_t *v)
{
	if (json_is_integer(v))
		printf("%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		printf("%.17g", json_real_value(v));
}

/* ",v1,v2,...": the numbers of o named by keys, an empty cell for each absent */
static void csv_nums(json_t *o, const char *const *keys, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		putchar(',');
		csv_num(json_object_get(o, keys[k]));
	}
}

static void csv_prof_rows(json_t *sc, const char *program, const char *inc)
{
	static const char *const kinds[] = { "self", "inclusive" };
	static const char *const nums[] = { "samples", "share_percent", "ci_low_percent", "ci_high_percent" };
	json_t *r;
	size_t i;

	for (int k = 0; k < 2; k++)
		json_array_foreach(json_object_get(sc, kinds[k]), i, r) {
			printf("profile,");
			csv_field(program);
			printf(",%s,%s,%zu,", inc, kinds[k], i + 1);
			csv_field(sget(r, "function"));
			putchar(',');
			csv_field(json_is_string(json_object_get(r, "symbol")) ? sget(r, "symbol") : "");
			putchar(',');
			csv_field(json_object_get(r, "object") ? sget(r, "object") : "");
			printf(",%s,%s,", json_object_get(r, "build_id") ? sget(r, "build_id") : "", sget(r, "status"));
			csv_field(json_object_get(r, "reason") ? sget(r, "reason") : "");
			putchar(',');
			csv_field(json_object_get(r, "file") ? sget(r, "file") : "");
			putchar(',');
			csv_num(json_object_get(r, "line"));
			printf(",%lld", (long long)json_integer_value(json_object_get(sc, "samples")));
			csv_nums(r, nums, PMU_ARRAY_SIZE(nums));
			printf(",true\n");
		}
}

/* The profile: what was accounted, then the rankings of every listed
 * program and incarnation (shares are estimates). */
static void csv_profile(json_t *p)
{
	json_t *a = json_object_get(p, "accounting"), *pr, *x;
	size_t i, k;
	static const char *const an[] = { "samples", "unattributed", "lost_records", "lost_samples", "throttles",
					  "chains_cut", "unwind_failed" };

	if (!p)
		return;
	printf("\ntable,status,samples,unattributed,lost_records,lost_samples,throttles,chains_cut,unwind_failed,reason\n"
	       "profile_accounting,%s", sget(p, "status"));
	csv_nums(a, an, PMU_ARRAY_SIZE(an));
	putchar(',');
	csv_field(json_object_get(p, "reason") ? sget(p, "reason") : "");
	printf("\n");
	if (strcmp(sget(p, "status"), "ok"))
		return;
	printf("\ntable,program,inc,kind,rank,function,symbol,object,build_id,status,reason,file,line,scope_samples,"
	       "samples,share_percent,ci_low_percent,ci_high_percent,estimate\n");
	json_array_foreach(json_object_get(p, "programs"), i, pr) {
		csv_prof_rows(pr, sget(pr, "program"), "");
		json_array_foreach(json_object_get(pr, "incarnations"), k, x)
			csv_prof_rows(x, sget(pr, "program"), sget(x, "inc"));
	}
}

static void csv_single(json_t *rep)
{
	static const char *const res[] = { "cpu_user_ns", "cpu_system_ns", "max_rss_bytes", "minor_faults",
					    "major_faults", "read_bytes", "write_bytes" };
	json_t *in, *c, *counters = json_object_get(json_object_get(rep, "counting"), "counters"), *s;
	size_t i, k;

	printf("table,inc,pid,comm,parent,wall_ns,exit,exit_code,exit_signal");
	for (k = 0; k < PMU_ARRAY_SIZE(res); k++)
		printf(",%s", res[k]);
	json_array_foreach(counters, k, c) {
		putchar(',');
		csv_field(sget(c, "name"));
		printf(",");
		csv_field(sget(c, "name"));
		printf(" estimate");
	}
	printf("\n");
	json_array_foreach(json_object_get(rep, "cohort"), i, in) {
		json_t *r = json_object_get(in, "resources"),
		       *t = json_object_get(json_object_get(json_object_get(rep, "counting"), "totals"), sget(in, "id")),
		       *e = json_object_get(in, "exit");

		printf("processes,%s,%lld,", sget(in, "id"), (long long)json_integer_value(json_object_get(in, "pid")));
		csv_field(sget(in, "comm"));
		printf(",%s,", json_object_get(in, "parent") ? sget(in, "parent") : "");
		if (json_object_get(in, "end_ns"))
			printf("%lld", (long long)(json_integer_value(json_object_get(in, "end_ns")) -
						  json_integer_value(json_object_get(in, "start_ns"))));
		printf(",%s,", sget(e, "kind"));
		csv_num(json_object_get(e, "code"));
		putchar(',');
		csv_num(json_object_get(e, "signal"));
		for (k = 0; k < PMU_ARRAY_SIZE(res); k++) {
			putchar(',');
			csv_num(json_object_get(r, res[k]));
		}
		json_array_foreach(counters, k, c) {
			json_t *x = json_object_get(t, sget(c, "name"));

			putchar(',');
			csv_num(json_object_get(x, "value") ? json_object_get(x, "value") : json_object_get(x, "value_ns"));
			printf(",%s", json_is_true(json_object_get(x, "estimate")) ? "true" : x ? "false" : "");
		}
		printf("\n");
	}
	{
		json_t *l = json_object_get(rep, "cohort_listing"), *oc = json_object_get(l, "omitted_cpu");

		/* what the processes table leaves out, so that no row is silently missing */
		printf("\ntable,incarnations,listed,omitted,max_processes,omitted_cpu_ns,omitted_cpu_measured\n");
		printf("listing,%lld,%lld,%lld,%lld,", (long long)json_integer_value(json_object_get(l, "incarnations")),
		       (long long)json_integer_value(json_object_get(l, "listed")),
		       (long long)json_integer_value(json_object_get(l, "omitted")),
		       (long long)json_integer_value(json_object_get(l, "max_processes")));
		csv_num(json_object_get(oc, "value_ns"));
		putchar(',');
		csv_num(json_object_get(oc, "measured"));
		printf("\n");
	}
	{
		json_t *w = json_object_get(rep, "wall_time"), *p = json_object_get(rep, "programs"), *r;
		static const char *const wn[] = { "wall_ns", "on_cpu_ns", "off_cpu_ns", "off_cpu_percent",
						  "unattributed_ns" };

		/* off_cpu_ns is a lower bound (off_cpu_is_lower_bound in --json) */
		printf("\ntable,status,wall_ns,on_cpu_ns,off_cpu_ns,off_cpu_percent,unattributed_ns,on_cpu_estimate,"
		       "on_cpu_source\nwall_time,%s", sget(w, "status"));
		csv_nums(w, wn, PMU_ARRAY_SIZE(wn));
		printf(",%s,", json_is_true(json_object_get(w, "on_cpu_estimate")) ? "true" : "false");
		csv_field(json_object_get(w, "on_cpu_source") ? sget(w, "on_cpu_source") : sget(w, "reason"));
		printf("\n\ntable,program,image,argv0,processes,metric,value_ns,share_percent,estimate\n");
		json_array_foreach(json_object_get(p, "rows"), i, r) {
			static const char *const pn[] = { "value_ns", "share_percent" };

			printf("programs,");
			csv_field(sget(r, "program"));
			putchar(',');
			csv_field(json_is_string(json_object_get(r, "image")) ? sget(r, "image") : "");
			putchar(',');
			csv_field(json_is_string(json_object_get(r, "argv0")) ? sget(r, "argv0") : "");
			printf(",%lld,%s", (long long)json_integer_value(json_object_get(r, "processes")), sget(p, "metric"));
			csv_nums(r, pn, PMU_ARRAY_SIZE(pn));
			printf(",%s\n", json_is_true(json_object_get(r, "estimate")) ? "true" : "false");
		}
	}
	csv_profile(json_object_get(rep, "profile"));
	an_oscall_csv(json_object_get(rep, "oscall"), stdout);
	an_runtime_csv(json_object_get(rep, "runtime"), stdout);
	printf("\ntable,metric,unit,n,median,min,max,q1,q3,mad,estimate,status\n");
	json_array_foreach(json_object_get(json_object_get(rep, "repetitions"), "summary"), i, s) {
		printf("metrics,");
		csv_field(sget(s, "name"));
		static const char *const nums[] = { "median", "min", "max", "q1", "q3", "mad" };

		printf(",%s,%lld", sget(s, "unit"), (long long)json_integer_value(json_object_get(s, "n")));
		csv_nums(s, nums, PMU_ARRAY_SIZE(nums));
		printf(",%s,%s\n", json_is_true(json_object_get(s, "estimate")) ? "true" : "false", sget(s, "status"));
	}
}

static void csv_compare(json_t *report)
{
	json_t *x;
	size_t i;

	printf("table,metric,unit,n_a,n_b,a_median,b_median,delta_percent,ci_low_percent,ci_high_percent,p_value,"
	       "effect_size,estimate,status,verdict,verdict_code\n");
	json_array_foreach(json_object_get(json_object_get(report, "comparison"), "metrics"), i, x) {
		static const char *const nums[] = { "a_median", "b_median", "delta_percent", "ci_low_percent",
						    "ci_high_percent", "p_value", "effect_size" };

		printf("comparison,");
		csv_field(sget(x, "name"));
		printf(",%s,%lld,%lld", sget(x, "unit"), (long long)json_integer_value(json_object_get(x, "n_a")),
		       (long long)json_integer_value(json_object_get(x, "n_b")));
		csv_nums(x, nums, PMU_ARRAY_SIZE(nums));
		printf(",%s,%s,", json_is_true(json_object_get(x, "estimate")) ? "true" : "false", sget(x, "status"));
		csv_field(json_object_get(x, "verdict") ? sget(x, "verdict") : "");
		printf(",%s\n", json_object_get(x, "verdict_code") ? sget(x, "verdict_code") : "");
	}
	{
		json_t *pd = json_object_get(json_object_get(report, "comparison"), "profile"), *pr, *f;
		size_t k;
		static const char *const nums[] = { "a_samples", "a_share_percent", "b_samples", "b_share_percent",
						    "delta_points", "ci_low_points", "ci_high_points" };

		if (!strcmp(sget(pd, "status"), "ok")) {
			printf("\ntable,program,function,symbol,build_id,a_samples,a_share_percent,b_samples,b_share_percent,"
			       "delta_points,ci_low_points,ci_high_points,verdict_code,verdict,estimate\n");
			json_array_foreach(json_object_get(pd, "programs"), i, pr)
				json_array_foreach(json_object_get(pr, "functions"), k, f) {
					printf("profile_comparison,");
					csv_field(sget(pr, "program"));
					putchar(',');
					csv_field(sget(f, "function"));
					putchar(',');
					csv_field(json_is_string(json_object_get(f, "symbol")) ? sget(f, "symbol") : "");
					printf(",%s", json_object_get(f, "build_id") ? sget(f, "build_id") : "");
					csv_nums(f, nums, PMU_ARRAY_SIZE(nums));
					printf(",%s,", sget(f, "verdict_code"));
					csv_field(sget(f, "verdict"));
					printf(",true\n");
				}
		}
	}
	{
		/* per syscall, B - A (oscall.h's an_oscall_compare()) */
		json_t *sd = json_object_get(json_object_get(report, "comparison"), "syscalls"), *r;

		printf("\ntable,syscall,presence,count_a,count_b,count_delta,total_ns_a,total_ns_b,total_ns_delta,"
		       "p50_ns_a_estimate,p50_ns_b_estimate,errors_delta\n");
		if (strcmp(sget(sd, "status"), "ok")) {
			printf("syscall_comparison_status,%s,", sget(sd, "status"));
			csv_field(sget(sd, "reason"));
			printf("\n");
		}
		json_array_foreach(json_object_get(sd, "rows"), i, r) {
			printf("syscall_comparison,%s,%s,%lld,%lld,%lld,%lld,%lld,%lld,", sget(r, "syscall"),
			       sget(r, "presence"), (long long)json_integer_value(json_object_get(r, "count_a")),
			       (long long)json_integer_value(json_object_get(r, "count_b")),
			       (long long)json_integer_value(json_object_get(r, "count_delta")),
			       (long long)json_integer_value(json_object_get(r, "total_ns_a")),
			       (long long)json_integer_value(json_object_get(r, "total_ns_b")),
			       (long long)json_integer_value(json_object_get(r, "total_ns_delta")));
			csv_num(json_object_get(r, "p50_ns_a"));
			putchar(',');
			csv_num(json_object_get(r, "p50_ns_b"));
			printf(",%lld\n", (long long)json_integer_value(json_object_get(r, "errors_delta")));
		}
	}
	{
		json_t *cb = json_object_get(json_object_get(report, "comparison"), "comparability");

		printf("\ntable,basis,interleaved,min_effect_percent,statement\n");
		printf("comparability,%s,%s,", sget(cb, "basis"),
		       json_is_true(json_object_get(cb, "interleaved")) ? "true" : "false");
		csv_num(json_object_get(json_object_get(report, "comparison"), "min_effect_percent"));
		putchar(',');
		csv_field(sget(cb, "statement"));
		printf("\n");
	}
	{
		/* host-wide, per repetition: never the cohort's, and estimates */
		json_t *hl = json_object_get(json_object_get(report, "comparison"), "host_load");
		static const char *const side[] = { "a", "b" };

		printf("\ntable,side,repetition,outside_busy_percent,steal_percent,cohort_cpu_source,scope,estimate\n");
		for (int k = 0; k < 2; k++)
			json_array_foreach(json_object_get(json_object_get(hl, side[k]), "runs"), i, x) {
				static const char *const nums[] = { "repetition", "outside_busy_percent", "steal_percent" };

				printf("host_load,%s", k ? "B" : "A");
				csv_nums(x, nums, PMU_ARRAY_SIZE(nums));
				putchar(',');
				if (json_string_value(json_object_get(x, "cohort_cpu_source")))
					csv_field(sget(x, "cohort_cpu_source"));
				printf(",system,true\n");
			}
	}
	if (json_array_size(json_object_get(report, "gates"))) {
		printf("\ntable,expr,status,delta_percent,ci_low_percent,ci_high_percent,message\n");
		json_array_foreach(json_object_get(report, "gates"), i, x) {
			printf("gates,");
			csv_field(sget(x, "expr"));
			static const char *const nums[] = { "delta_percent", "ci_low_percent", "ci_high_percent" };

			printf(",%s", sget(x, "status"));
			csv_nums(x, nums, PMU_ARRAY_SIZE(nums));
			putchar(',');
			csv_field(sget(x, "message"));
			printf("\n");
		}
	}
}

/* ---- JUnit -------------------------------------------------------------------- */

static int write_junit(const char *path, json_t *report)
{
	struct an_out out;
	FILE *f = an_out_open(&out, path);
	json_t *g = json_object_get(report, "gates"), *x, *cmp = json_object_get(report, "comparison");
	size_t i, fails = 0, errs = 0;
	bool comparable = json_is_true(json_object_get(cmp, "comparable"));

	if (!f) {
		fprintf(stderr, "pmuanalyze: cannot write '%s': %m\n", path);
		an_out_close(&out, false);
		return -1;
	}
	json_array_foreach(g, i, x) {
		fails += !strcmp(sget(x, "status"), "fail");
		errs += !strcmp(sget(x, "status"), "unusable");
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
		   "<testsuite name=\"pmuanalyze\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\">\n",
		json_array_size(g) + 1, fails + !comparable, errs);
	fprintf(f, "<testcase classname=\"pmuanalyze\" name=\"comparability\">");
	if (!comparable) {
		fprintf(f, "<failure message=\"the bundles are not comparable\">");
		json_array_foreach(json_object_get(cmp, "differences"), i, x)
			if (json_is_true(json_object_get(x, "refusing"))) {
				pmu_xml_text(f, sget(x, "what"));
				fputs(": A ", f);
				pmu_xml_text(f, sget(x, "a"));
				fputs(", B ", f);
				pmu_xml_text(f, sget(x, "b"));
				fputc('\n', f);
			}
		fprintf(f, "</failure>");
	} else {
		json_t *cb = json_object_get(cmp, "comparability");

		fprintf(f, "<system-out>");
		pmu_xml_text(f, sget(cb, "statement"));
		json_array_foreach(json_object_get(cb, "warnings"), i, x) {
			fputs("\nwarning: ", f);
			pmu_xml_text(f, json_string_value(x));
		}
		fprintf(f, "</system-out>");
	}
	fprintf(f, "</testcase>\n");
	json_array_foreach(g, i, x) {
		fprintf(f, "<testcase classname=\"pmuanalyze.gates\" name=\"");
		pmu_xml_text(f, sget(x, "expr"));
		fprintf(f, "\">");
		if (strcmp(sget(x, "status"), "pass")) {
			fprintf(f, "<%s message=\"", !strcmp(sget(x, "status"), "fail") ? "failure" : "error");
			pmu_xml_text(f, sget(x, "message"));
			fprintf(f, "\"/>");
		} else {
			fprintf(f, "<system-out>");
			pmu_xml_text(f, sget(x, "message"));
			fprintf(f, "</system-out>");
		}
		fprintf(f, "</testcase>\n");
	}
	fprintf(f, "</testsuite>\n</testsuites>\n");
	return an_out_close(&out, !ferror(f));
}

/* ---- main --------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },          { "csv", no_argument, NULL, 'c' },
		{ "html", required_argument, NULL, 'H' },    { "trace", required_argument, NULL, 't' },
		{ "trace-rep", required_argument, NULL, 'r' }, { "fail-if", required_argument, NULL, 'F' },
		{ "junit", required_argument, NULL, 'J' },   { "force", no_argument, NULL, 'f' },
		{ "allow-invalid", no_argument, NULL, 'a' }, { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },       { "max-processes", required_argument, NULL, 'm' },
		{ "min-effect", required_argument, NULL, 'E' },
		{ "folded", required_argument, NULL, 3610 }, { "speedscope", required_argument, NULL, 3611 },
		{ "pprof", required_argument, NULL, 3612 }, { "offcpu-folded", required_argument, NULL, 3620 },
		{ NULL, 0, NULL, 0 },
	};
	bool json = false, csv = false, allow = false, force = false;
	struct an_export_req exq = { NULL, NULL, NULL };  /* the profile's exports (export.h) */
	struct an_prof *prof = NULL;
	json_t *flame = NULL;
	const char *html = NULL, *trace = NULL, *junit = NULL, *offcpu_folded = NULL;
	int c, code = AN_EXIT_OK, trace_rep = 1, nb;
	size_t max_proc = AN_MAX_PROCESSES;
	json_t *gates = json_array(), *report = NULL, *ra = NULL, *rb = NULL;
	struct an_compare_opts copts = { .min_effect = AN_MIN_EFFECT_DEFAULT, .min_effect_given = false };

	while ((c = getopt_long(argc, argv, "hV", lo, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'c': csv = true; break;
		case 'H': html = optarg; break;
		case 't': trace = optarg; break;
		case 'r': {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*end || end == optarg || v < 1 || v > 10000) {
				fprintf(stderr, "pmuanalyze: --trace-rep needs a repetition number from 1, not '%s'\n", optarg);
				goto usage;
			}
			trace_rep = (int)v;
			break;
		}
		case 'F': {
			char m[256], why[400];
			double p;

			if (an_gate_parse(optarg, m, sizeof(m), &p, why, sizeof(why))) {
				fprintf(stderr, "pmuanalyze: --fail-if %s\n", why);
				goto usage;
			}
			if (json_array_append_new(gates, json_string(optarg))) {
				fprintf(stderr, "pmuanalyze: --fail-if: the expression is not UTF-8 text\n");
				goto usage;
			}
			break;
		}
		case 'm': {
			char *end;
			long v;

			errno = 0;
			v = strtol(optarg, &end, 10);
			if (*end || end == optarg || errno || v < 1 || v > AN_MAX_PROCESSES_LIMIT) {
				fprintf(stderr, "pmuanalyze: --max-processes needs a number from 1 to %d, not '%s'\n",
					AN_MAX_PROCESSES_LIMIT, optarg);
				goto usage;
			}
			max_proc = (size_t)v;
			break;
		}
		case 'E': {
			char *end;
			double v;

			errno = 0;
			v = strtod(optarg, &end);
			if (*end == '%')
				end++;
			if (*end || end == optarg || errno || !isfinite(v) || v < 0 || v > AN_MIN_EFFECT_MAX) {
				fprintf(stderr, "pmuanalyze: --min-effect needs a percentage from 0 to %g, like 2 or 0.5%%, "
					"not '%s'\n", AN_MIN_EFFECT_MAX, optarg);
				goto usage;
			}
			copts.min_effect = v;
			copts.min_effect_given = true;
			break;
		}
		case 'J': junit = optarg; break;
		case 3610: exq.folded = optarg; break;
		case 3611: exq.speedscope = optarg; break;
		case 3612: exq.pprof = optarg; break;
		case 3620: offcpu_folded = optarg; break;
		case 'f': force = true; break;
		case 'a': allow = true; break;
		case 'h':
			fputs(usage, stdout);
			json_decref(gates);
			return pmu_cli_finish("pmuanalyze", AN_EXIT_OK);
		case 'V':
			printf("pmuanalyze %s (spec %s, revision %s)\n", PMU_VERSION, PMU_SPEC_VERSION, PMU_REVISION);
			json_decref(gates);
			return pmu_cli_finish("pmuanalyze", AN_EXIT_OK);
		default:
			goto usage;
		}
	}
	nb = argc - optind;
	if (nb < 1 || nb > 2) {
		fprintf(stderr, "pmuanalyze: give one bundle, or two to compare\n");
		goto usage;
	}
	if (json && csv) {
		fprintf(stderr, "pmuanalyze: --json and --csv are two formats of the same report; give one\n");
		goto usage;
	}
	if (nb == 1 && (json_array_size(gates) || junit || force || copts.min_effect_given)) {
		fprintf(stderr, "pmuanalyze: --fail-if, --junit, --force and --min-effect compare two bundles\n");
		goto usage;
	}
	if (nb == 2 && offcpu_folded) {
		fprintf(stderr, "pmuanalyze: --offcpu-folded exports one bundle's off-CPU intervals\n");
		goto usage;
	}
	if (nb == 2 && (exq.folded || exq.speedscope || exq.pprof)) {
		fprintf(stderr, "pmuanalyze: --folded, --speedscope and --pprof export one bundle's samples\n");
		goto usage;
	}
	color = !json && !csv && isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
	ra = an_load(argv[optind], allow, trace_rep, trace, max_proc, offcpu_folded, nb == 1 ? &prof : NULL, &code);
	if (!ra)
		goto out;
	if (nb == 2 && !(rb = an_load(argv[optind + 1], allow, 0, NULL, max_proc, NULL, NULL, &code)))
		goto out;
	if (nb == 1) {
		report = json_incref(ra);
		json_object_set_new(report, "kind", json_string("single"));
		json_object_set_new(report, "warnings", json_array());
		if (!json_is_true(json_object_get(ra, "valid")))
			json_array_append_new(json_object_get(report, "warnings"),
					      json_string("the bundle is invalid and was analyzed on request (--allow-invalid)"));
		json_object_set_new(report, "host_load", an_host_load_one(ra, json_object_get(report, "warnings")));
	} else {
		json_t *cmp = an_compare(ra, rb, &copts), *w = json_array(), *x, *gv;
		bool regression = false, unusable = false;
		size_t i;

		if (!json_is_true(json_object_get(cmp, "comparable"))) {
			if (!force) {
				fprintf(stderr, "pmuanalyze: '%s' and '%s' are not comparable (--force to compare anyway):\n",
					argv[optind], argv[optind + 1]);
				json_array_foreach(json_object_get(cmp, "differences"), i, x)
					if (json_is_true(json_object_get(x, "refusing")))
						fprintf(stderr, "  %s: A %s, B %s\n", sget(x, "what"), sget(x, "a"), sget(x, "b"));
				if (junit) {
					json_t *r0 = json_pack("{s:O,s:[]}", "comparison", cmp, "gates");

					write_junit(junit, r0);
					json_decref(r0);
				}
				json_decref(cmp);
				json_decref(w);
				code = AN_EXIT_INCOMPARABLE;
				goto out;
			}
			json_array_append_new(w, json_string("FORCED COMPARISON: the bundles are not comparable (see "
							     "differences); the numbers below may not mean what they seem"));
		}
		if (!json_is_true(json_object_get(ra, "valid")) || !json_is_true(json_object_get(rb, "valid")))
			json_array_append_new(w, json_string("an invalid bundle was analyzed on request (--allow-invalid)"));
		json_array_foreach(json_object_get(cmp, "warnings"), i, x)
			json_array_append(w, x);
		gv = an_gates(cmp, gates, &regression, &unusable);
		report = json_pack("{s:s,s:o,s:o,s:o,s:o,s:b,s:o}", "kind", "compare", "a", json_incref(ra), "b",
				   json_incref(rb), "comparison", cmp, "gates", gv, "forced", force &&
				   !json_is_true(json_object_get(cmp, "comparable")), "warnings", w);
		code = unusable ? AN_EXIT_USAGE : regression ? AN_EXIT_REGRESSION : AN_EXIT_OK;
		json_array_foreach(gv, i, x)
			if (!strcmp(sget(x, "status"), "unusable"))
				fprintf(stderr, "pmuanalyze: --fail-if %s\n", sget(x, "message"));
			else if (!strcmp(sget(x, "status"), "fail"))
				fprintf(stderr, "pmuanalyze: regression: %s\n", sget(x, "message"));
		if (junit && write_junit(junit, report))
			code = AN_EXIT_USAGE;
	}
	json_object_set_new(report, "tool", json_pack("{s:s,s:s,s:s}", "name", "pmuanalyze", "version", PMU_VERSION,
						      "spec", PMU_SPEC_VERSION));
	if (json) {
		json_dumpf(report, stdout, JSON_INDENT(2));
		putchar('\n');
	} else if (csv) {
		if (nb == 1)
			csv_single(report);
		else
			csv_compare(report);
	} else if (nb == 1) {
		print_single(report);
	} else {
		print_compare(report);
	}
	fflush(stdout);  /* the report before an export to /dev/stdout */
	if (nb == 1 && (exq.folded || exq.speedscope || exq.pprof || html) &&
	    an_exports(prof, &exq, html ? &flame : NULL))
		code = AN_EXIT_USAGE;
	if (html) {
		struct an_out ho;

		if (!an_out_open(&ho, html)) {
			fprintf(stderr, "pmuanalyze: cannot write '%s': %m\n", html);
			an_out_close(&ho, false);
			code = AN_EXIT_USAGE;
		} else {
			int hr = an_html(report, flame, ho.f);

			if (hr)
				fprintf(stderr, "pmuanalyze: cannot write '%s': %m\n", html);
			if (an_out_close(&ho, hr == 0) || hr)
				code = AN_EXIT_USAGE;
		}
	}
out:
	an_prof_free(prof);
	json_decref(flame);
	json_decref(report);
	json_decref(ra);
	json_decref(rb);
	json_decref(gates);
	return pmu_cli_finish("pmuanalyze", code);
usage:
	fputs("pmuanalyze: see 'pmuanalyze --help'\n", stderr);
	json_decref(gates);
	return AN_EXIT_USAGE;
}
