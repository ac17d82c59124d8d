/*
 * The report as one self-contained HTML file: inline CSS, inline SVG
 * charts, no script and no reference to anything outside the file, so that
 * it can be attached to a CI run or mailed and still open years later.
 *
 * Every number is formatted by the same helpers as the text report
 * (an_fmt_value for metrics, an_fmt_count for counts, the same "%.3f ms"
 * for lifetimes and the same resource units), so the two cannot disagree;
 * every string from the report is escaped, since bundles are untrusted and
 * a command line or a collector's reason may contain markup.
 *
 * Sections (stable ids, in this order): warnings, run, then for one bundle
 * not-measured, collectors, processes, counters, (phases), repetitions,
 * dominant-cost; for two, comparability, comparison, (overhead), gates.
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "html.h"
#include "model.h"
#include "util.h"

static const char *sget(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "?";
}

/* An optional string: "" when absent. */
static const char *opt(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

static json_int_t iget(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

/* ---- escaping ------------------------------------------------------------------ */

/* Text or attribute value: the five markup characters escaped, control
 * characters other than tab and newline shown as '?' (they are not allowed
 * in HTML and a terminal escape in a command line must not survive). */
static void esc(FILE *f, const char *s)
{
	pmu_xml_text(f, s);
}

/* Formatted text, escaped.  Only for short, bounded texts (numbers and
 * literals); strings from the report go through esc() whole. */
__attribute__((format(printf, 2, 3))) static void textf(FILE *f, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	esc(f, buf);
}

/* <TAG class="CLS">escaped text</TAG>; cls may be NULL. */
static void el(FILE *f, const char *tag, const char *cls, const char *s)
{
	fprintf(f, "<%s", tag);
	if (cls)
		fprintf(f, " class=\"%s\"", cls);
	fputc('>', f);
	esc(f, s);
	fprintf(f, "</%s>", tag);
}

/* ---- shared formats (the text report's) ---------------------------------------- */

static void fmt_exit(json_t *e, char *out, size_t n)
{
	const char *kind = sget(e, "kind");

	if (!strcmp(kind, "exited"))
		snprintf(out, n, "exit %lld", (long long)iget(e, "code"));
	else if (!strcmp(kind, "signaled"))
		snprintf(out, n, "signal %lld", (long long)iget(e, "signal"));
	else
		snprintf(out, n, "%s", kind);
}

/* The resource totals of an incarnation, in the text report's units. */
static const struct {
	const char *key, *label;
	double scale;
	const char *unit;
} resources[] = {
	{ "cpu_user_ns", "user", 1e6, " ms" },
	{ "cpu_system_ns", "sys", 1e6, " ms" },
	{ "max_rss_bytes", "rss", 1048576.0, " MiB" },
	{ "minor_faults", "minflt", 1, "" },
	{ "major_faults", "majflt", 1, "" },
	{ "voluntary_switches", "vcsw", 1, "" },
	{ "involuntary_switches", "ivcsw", 1, "" },
	{ "read_bytes", "read", 1024, " KiB" },
	{ "write_bytes", "written", 1024, " KiB" },
};

/* A metric's value as the text report writes it, "~" first for an estimate. */
static void fmt_metric(json_t *v, const char *unit, bool est, char *out, size_t n)
{
	char num[64];

	an_fmt_value(json_number_value(v), unit, num, sizeof(num));
	snprintf(out, n, "%s%s", est ? "~" : "", num);
}

/* ---- page ------------------------------------------------------------------------ */

static const char style[] =
	":root{color-scheme:light dark;--fg:#1f2328;--bg:#fff;--mut:#59636e;--line:#d1d9e0;--head:#f6f8fa;"
	"--warn:#b42318;--warnbg:#fff1f0;--est:#9a6700;--a:#0969da;--b:#cf4a0c;--ok:#1a7f37;--band:#d8e6f7}\n"
	"@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--mut:#9198a1;--line:#3d444d;"
	"--head:#151b23;--warn:#ff7b72;--warnbg:#2d1214;--est:#d29922;--a:#4493f8;--b:#f0883e;--ok:#3fb950;"
	"--band:#1c2d44}}\n"
	"body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:var(--fg);background:var(--bg);"
	"margin:0 auto;max-width:1280px;padding:1rem 1.5rem 3rem}\n"
	"h1{font-size:1.35rem;margin:.2rem 0}h2{font-size:1.1rem;margin:1.6rem 0 .5rem;padding-bottom:.2rem;"
	"border-bottom:1px solid var(--line)}h3{font-size:1rem;margin:1rem 0 .4rem}\n"
	"p{margin:.4rem 0}.mut{color:var(--mut)}code{font:13px/1.4 ui-monospace,'DejaVu Sans Mono',monospace;"
	"overflow-wrap:break-word}\n"
	".scroll{overflow-x:auto}table{border-collapse:collapse;font-variant-numeric:tabular-nums;margin:.2rem 0}\n"
	"th,td{padding:.25rem .6rem;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}\n"
	"th{background:var(--head);font-weight:600;white-space:nowrap}td.num,th.num{text-align:right;"
	"white-space:nowrap}\n"
	"table.kv{width:100%}table.kv th{background:none;width:9rem;color:var(--mut);font-weight:normal}\n"
	"td:first-child,#processes td,#collectors td{white-space:nowrap}#collectors td:last-child{white-space:normal}\n"
	"#warnings.on{border:2px solid var(--warn);background:var(--warnbg);border-radius:6px;padding:.5rem 1rem;"
	"margin:.8rem 0}#warnings.on h2{color:var(--warn);border:0;margin:.2rem 0}#warnings li{margin:.2rem 0;"
	"font-weight:600}\n"
	".est{color:var(--est)}.nc{color:var(--mut);font-style:italic}.sz,.bad{color:var(--warn)}"
	".good{color:var(--ok)}.hi{color:var(--warn);font-weight:600}.lo{color:var(--est);font-weight:600}\n"
	"svg{display:block}svg .axis{stroke:var(--line);stroke-width:1}svg .band{fill:var(--band)}"
	"svg .med{stroke:var(--fg);stroke-width:2}svg .dot{fill:var(--a);fill-opacity:.8}"
	"svg .out{fill:none;stroke:var(--warn);stroke-width:2}svg .da{fill:var(--a);fill-opacity:.8}"
	"svg .db{fill:var(--b);fill-opacity:.8}svg .ma{stroke:var(--a);stroke-width:2}"
	"svg .mb{stroke:var(--b);stroke-width:2}svg text{fill:var(--mut);font:11px system-ui,sans-serif}\n"
	".key{display:inline-block;width:.7em;height:.7em;border-radius:50%;vertical-align:baseline;margin:0 .2em}"
	".key.a{background:var(--a)}.key.b{background:var(--b)}.key.o{border:2px solid var(--warn);"
	"width:.5em;height:.5em}\n"
	"footer{margin-top:2rem;color:var(--mut);font-size:12px}\n";

static void page_begin(FILE *f, const char *title)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta name=\"generator\" content=\"pmuanalyze\">\n<title>pmuanalyze: ", f);
	esc(f, title);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", style);
}

static void page_end(FILE *f, json_t *report)
{
	json_t *tool = json_object_get(report, "tool");

	fputs("<footer>written by ", f);
	esc(f, sget(tool, "name"));
	fputc(' ', f);
	esc(f, sget(tool, "version"));
	fputs(" (bundle spec ", f);
	esc(f, sget(tool, "spec"));
	fputs("); every number is the one the text report prints</footer>\n</body>\n</html>\n", f);
}

/* ---- warnings ------------------------------------------------------------------- */

static void failed_checks(FILE *f, json_t *rep, const char *label)
{
	json_t *x;
	size_t i;

	if (json_is_true(json_object_get(rep, "valid")))
		return;
	fputs("<p><strong>INVALID BUNDLE (analyzed on request)", f);
	if (label) {
		fputc(' ', f);
		esc(f, label);
	}
	textf(f, ": %zu failed check(s) in ", json_array_size(json_object_get(rep, "failed_checks")));
	esc(f, sget(rep, "bundle"));
	fputs("</strong></p>\n<div class=\"scroll\"><table><tr><th>check</th><th>where</th><th>message</th></tr>\n", f);
	json_array_foreach(json_object_get(rep, "failed_checks"), i, x) {
		fputs("<tr>", f);
		el(f, "td", NULL, sget(x, "check"));
		el(f, "td", NULL, sget(x, "where"));
		el(f, "td", NULL, sget(x, "message"));
		fputs("</tr>\n", f);
	}
	fputs("</table></div>\n", f);
}

/* First and impossible to miss: the report's warnings (a forced comparison,
 * an invalid bundle, weak statistics) and every failed check. */
static void warnings(FILE *f, json_t *report, json_t *a, json_t *b)
{
	json_t *w = json_object_get(report, "warnings"), *x;
	bool any = json_array_size(w) || !json_is_true(json_object_get(a, "valid")) ||
		   (b && !json_is_true(json_object_get(b, "valid")));
	size_t i;

	fprintf(f, "<section id=\"warnings\"%s>\n", any ? " class=\"on\"" : "");
	if (!any) {
		fputs("<p class=\"mut\">No warnings: every bundle is valid.</p>\n</section>\n", f);
		return;
	}
	fputs("<h2>Warnings</h2>\n", f);
	if (json_array_size(w)) {
		fputs("<ul>\n", f);
		json_array_foreach(w, i, x) {
			fputs("<li>WARNING: ", f);
			esc(f, json_string_value(x));
			fputs("</li>\n", f);
		}
		fputs("</ul>\n", f);
	}
	failed_checks(f, a, b ? "A" : NULL);
	if (b)
		failed_checks(f, b, "B");
	fputs("</section>\n", f);
}

/* ---- run header ------------------------------------------------------------------ */

static void kv_row(FILE *f, const char *key)
{
	fputs("<tr><th>", f);
	esc(f, key);
	fputs("</th>", f);
}

static void cmd_line(FILE *f, json_t *run)
{
	json_t *x;
	size_t i;

	fputs("<code>", f);
	json_array_foreach(json_object_get(run, "argv"), i, x) {
		if (i)
			fputc(' ', f);
		esc(f, json_string_value(x));
	}
	fputs("</code>", f);
}

/* The header facts of one bundle, by row; col is the cell for one side. */
enum hdr_row { H_BUNDLE, H_COMMAND, H_MODE, H_RESULT, H_EXIT, H_WALL, H_HOST, H_CPU, H_RECORDER, H_REPEATS,
	       H_CAMPAIGN, H_SETTINGS, H_COUNT };
static const char *const hdr_names[H_COUNT] = { "bundle", "command", "mode", "result", "exit", "wall", "host",
						"cpu", "recorder", "repetitions", "campaign", "settings" };

static void hdr_cell(FILE *f, json_t *rep, enum hdr_row r)
{
	json_t *run = json_object_get(rep, "run"), *host = json_object_get(rep, "host"), *x;
	json_t *camp = json_object_get(run, "campaign");
	char buf[96];
	size_t i;

	fputs("<td>", f);
	switch (r) {
	case H_BUNDLE:
		fputs("<code>", f);
		esc(f, sget(rep, "bundle"));
		fputs("</code>", f);
		break;
	case H_COMMAND:
		cmd_line(f, run);
		break;
	case H_MODE:
		esc(f, sget(run, "mode"));
		break;
	case H_RESULT:
		esc(f, sget(run, "result"));
		break;
	case H_EXIT:
		fmt_exit(json_object_get(run, "exit"), buf, sizeof(buf));
		esc(f, buf);
		break;
	case H_WALL:
		textf(f, "%.3f ms", (double)(iget(run, "end_ns") - iget(run, "start_ns")) / 1e6);
		break;
	case H_HOST:
		esc(f, sget(host, "os"));
		fputc(' ', f);
		esc(f, sget(host, "kernel"));
		fputc(' ', f);
		esc(f, sget(host, "arch"));
		break;
	case H_CPU:
		if (json_is_string(json_object_get(host, "cpu")))
			esc(f, sget(host, "cpu"));
		else
			fputs("<span class=\"mut\">not recorded</span>", f);
		break;
	case H_RECORDER:
		esc(f, sget(json_object_get(run, "tool"), "name"));
		fputc(' ', f);
		esc(f, sget(json_object_get(run, "tool"), "version"));
		break;
	case H_REPEATS:
		textf(f, "%lld", (long long)iget(json_object_get(rep, "repetitions"), "n"));
		break;
	case H_CAMPAIGN:
		if (!camp) {
			fputs("<span class=\"mut\">none</span>", f);
			break;
		}
		fputs("<code>", f);
		esc(f, sget(camp, "id"));
		fputs("</code> (modes", f);
		json_array_foreach(json_object_get(camp, "modes"), i, x) {
			fputc(' ', f);
			esc(f, json_string_value(x));
		}
		fputc(')', f);
		break;
	case H_SETTINGS:
		if (!json_array_size(json_object_get(rep, "settings")))
			fputs("<span class=\"mut\">not recorded</span>", f);
		json_array_foreach(json_object_get(rep, "settings"), i, x) {
			bool ok = !strcmp(sget(x, "status"), "ok");

			fprintf(f, "%s<span%s title=\"", i ? "; " : "", ok ? "" : " class=\"nc\"");
			esc(f, ok ? "" : sget(x, "reason"));
			fputs("\">", f);
			esc(f, sget(x, "name"));
			fputc(' ', f);
			esc(f, ok ? sget(x, "value") : sget(x, "status"));
			fputs("</span>", f);
		}
		break;
	case H_COUNT:
		break;
	}
	fputs("</td>", f);
}

static void run_header(FILE *f, json_t *a, json_t *b)
{
	fputs("<section id=\"run\">\n<h2>Run</h2>\n<div class=\"scroll\"><table class=\"kv\">\n", f);
	if (b)
		fputs("<tr><th></th><th>A</th><th>B</th></tr>\n", f);
	for (int r = 0; r < H_COUNT; r++) {
		kv_row(f, hdr_names[r]);
		hdr_cell(f, a, (enum hdr_row)r);
		if (b)
			hdr_cell(f, b, (enum hdr_row)r);
		fputs("</tr>\n", f);
	}
	fputs("</table></div>\n</section>\n", f);
}

/* ---- one bundle: what was not measured, collectors ----------------------------- */

static void not_measured(FILE *f, json_t *rep)
{
	json_t *nm = json_object_get(rep, "not_measured"), *x;
	size_t i;

	fputs("<section id=\"not-measured\">\n", f);
	fprintf(f, "<h2>Not measured (%zu)</h2>\n", json_array_size(nm));
	if (!json_array_size(nm)) {
		fputs("<p>Everything was measured.</p>\n</section>\n", f);
		return;
	}
	fputs("<div class=\"scroll\"><table><tr><th>what</th><th>status</th><th>reason</th><th>remedy</th></tr>\n", f);
	json_array_foreach(nm, i, x) {
		fputs("<tr>", f);
		el(f, "td", NULL, sget(x, "what"));
		el(f, "td", "bad", sget(x, "status"));
		el(f, "td", NULL, sget(x, "reason"));
		el(f, "td", NULL, opt(x, "remedy"));
		fputs("</tr>\n", f);
	}
	fputs("</table></div>\n</section>\n", f);
}

static void collectors(FILE *f, json_t *rep)
{
	static const struct {
		const char *key, *prefix;
	} notes[] = { { "evidence", "attached: " }, { "reason", "" }, { "remedy", "remedy: " } };
	json_t *x;
	size_t i;

	fputs("<section id=\"collectors\">\n<h2>Collectors</h2>\n<div class=\"scroll\"><table>"
	      "<tr><th>collector</th><th>status</th><th>requested</th><th class=\"num\">dropped</th>"
	      "<th class=\"num\">malformed</th><th>evidence / reason</th></tr>\n", f);
	json_array_foreach(json_object_get(rep, "collectors"), i, x) {
		const char *st = sget(x, "status");

		fputs("<tr>", f);
		el(f, "td", NULL, sget(x, "name"));
		el(f, "td", !strcmp(st, "ok") ? "good" : !strcmp(st, "not-requested") ? "mut" : "bad", st);
		el(f, "td", NULL, json_is_true(json_object_get(x, "requested")) ? "requested" : "not requested");
		fprintf(f, "<td class=\"num\">%lld</td><td class=\"num\">%lld</td><td>", (long long)iget(x, "dropped"),
			(long long)iget(x, "malformed"));
		for (size_t k = 0, n = 0; k < PMU_ARRAY_SIZE(notes); k++) {
			const char *v = opt(x, notes[k].key);

			if (!*v)
				continue;
			fputs(n++ ? "<br>" : "", f);
			fputs(notes[k].prefix, f);
			esc(f, v);
		}
		fputs("</td></tr>\n", f);
	}
	fputs("</table></div>\n</section>\n", f);
}

/* ---- one bundle: process tree ---------------------------------------------------- */

struct tree {
	json_t *incs, *totals, *cols, *derived;
	bool *seen;
};

static void count_cell(FILE *f, json_t *r)
{
	char v[200];
	const char *cls = NULL;

	an_fmt_count(r, v, sizeof(v));
	if (!strcmp(v, "not counted"))
		cls = "nc";
	else if (json_is_true(json_object_get(r, "estimate")))
		cls = "est";
	else if (json_is_true(json_object_get(r, "suspect_zero")))
		cls = "sz";
	fprintf(f, "<td class=\"num%s%s\">", cls ? " " : "", cls ? cls : "");
	esc(f, v);
	fputs("</td>", f);
}

/* One incarnation: identity, lifetime, resources in the text report's units
 * ("n/a", never 0, when not measured), then each counter with its label. */
static void inc_row(FILE *f, const struct tree *t, json_t *in, int depth)
{
	json_t *exec = json_object_get(in, "exec"), *end = json_object_get(in, "end_ns");
	json_t *res = json_object_get(in, "resources"), *m = json_object_get(t->totals, sget(in, "id")), *c;
	char buf[96];
	size_t i;

	fprintf(f, "<tr><td style=\"padding-left:%.1fem\">", 0.6 + 1.2 * depth);
	esc(f, sget(in, "id"));
	fprintf(f, "</td><td class=\"num\">%lld</td>", (long long)iget(in, "pid"));
	el(f, "td", NULL, sget(in, "comm"));
	fputs("<td><code>", f);
	if (json_array_size(exec))
		esc(f, sget(json_array_get(exec, json_array_size(exec) - 1), "path"));
	fputs("</code></td><td class=\"num\">", f);
	if (end)
		textf(f, "%.3f ms", (double)(json_integer_value(end) - iget(in, "start_ns")) / 1e6);
	else
		fputs("alive at end", f);
	if (json_is_true(json_object_get(in, "preexisting")))
		fputs("<br><span class=\"mut\">running before the recording (times from attach)</span>", f);
	fmt_exit(json_object_get(in, "exit"), buf, sizeof(buf));
	fputs("</td>", f);
	el(f, "td", NULL, buf);
	fprintf(f, "<td class=\"num\">%lld</td>", (long long)iget(in, "threads"));
	for (i = 0; i < PMU_ARRAY_SIZE(resources); i++) {
		json_t *v = json_object_get(res, resources[i].key);
		json_t *why = json_object_get(json_object_get(json_object_get(res, "fields"), resources[i].key), "reason");

		if (!v) {
			fputs("<td class=\"num nc\" title=\"", f);
			esc(f, why ? json_string_value(why) : res ? "not measured" : "no resource totals");
			fputs("\">n/a</td>", f);
			continue;
		}
		fputs("<td class=\"num\">", f);
		if (resources[i].scale == 1)
			textf(f, "%lld", (long long)json_integer_value(v));
		else
			textf(f, "%.1f%s", (double)json_integer_value(v) / resources[i].scale, resources[i].unit);
		fputs("</td>", f);
	}
	json_array_foreach(t->cols, i, c)
		count_cell(f, json_object_get(m, json_string_value(c)));
	json_array_foreach(t->derived, i, c) {
		json_t *d = json_object_get(json_object_get(m, "derived"), json_string_value(c));

		if (!d) {
			fputs("<td class=\"num nc\">n/a</td>", f);
			continue;
		}
		fprintf(f, "<td class=\"num%s\">", json_is_true(json_object_get(d, "estimate")) ? " est" : "");
		textf(f, "%s%.3f", json_is_true(json_object_get(d, "estimate")) ? "~" : "",
		      json_real_value(json_object_get(d, "value")));
		fputs("</td>", f);
	}
	fputs("</tr>\n", f);
}

/* In the depth-first order the model computed, as the text report walks it. */
static void tree_rows(FILE *f, struct tree *t, json_t *order)
{
	size_t k;
	json_t *o;

	json_array_foreach(order, k, o) {
		size_t i = (size_t)json_integer_value(json_object_get(o, "index"));
		json_t *in = json_array_get(t->incs, i);

		if (!in)
			continue;
		if (t->seen)
			t->seen[i] = true;
		inc_row(f, t, in, (int)json_integer_value(json_object_get(o, "depth")));
	}
}

static bool in_array(json_t *arr, const char *s)
{
	json_t *x;
	size_t i;

	json_array_foreach(arr, i, x)
		if (!strcmp(json_string_value(x), s))
			return true;
	return false;
}

static void processes(FILE *f, json_t *rep)
{
	json_t *counting = json_object_get(rep, "counting"), *c, *m, *d;
	struct tree t = { .incs = json_object_get(rep, "cohort"),
			  .totals = json_object_get(counting, "totals"), .cols = json_array(), .derived = json_array() };
	const char *inc, *key;
	size_t i;

	/* a column per counter that some incarnation has a record of, in the
	 * counters' order, then per derived ratio */
	json_array_foreach(json_object_get(counting, "counters"), i, c)
		json_object_foreach(t.totals, inc, m)
			if (json_object_get(m, sget(c, "name")) && !in_array(t.cols, sget(c, "name"))) {
				json_array_append_new(t.cols, json_string(sget(c, "name")));
				break;
			}
	json_object_foreach(t.totals, inc, m)
		json_object_foreach(json_object_get(m, "derived"), key, d)
			if (!in_array(t.derived, key))
				json_array_append_new(t.derived, json_string(key));

	fprintf(f, "<section id=\"processes\">\n<h2>Process tree (%lld incarnations)</h2>\n",
		(long long)iget(json_object_get(rep, "cohort_listing"), "incarnations"));
	fputs("<p class=\"mut\">Resources are n/a, never 0, where they were not measured; a count marked ~ is an "
	      "estimate scaled from the share of the time it was counted.</p>\n", f);
	fputs("<div class=\"scroll\"><table>\n<tr><th>incarnation</th><th class=\"num\">pid</th><th>comm</th>"
	      "<th>image</th><th class=\"num\">wall</th><th>exit</th><th class=\"num\">threads</th>", f);
	for (i = 0; i < PMU_ARRAY_SIZE(resources); i++) {
		fputs("<th class=\"num\">", f);
		esc(f, resources[i].label);
		fputs("</th>", f);
	}
	json_array_foreach(t.cols, i, c)
		el(f, "th", "num", json_string_value(c));
	json_array_foreach(t.derived, i, c)
		el(f, "th", "num", json_string_value(c));
	fputs("</tr>\n", f);
	t.seen = calloc(json_array_size(t.incs) + 1, sizeof(*t.seen));
	tree_rows(f, &t, json_object_get(rep, "tree"));
	/* incarnations the walk did not reach (a parent that is not in the
	 * cohort): listed, not hidden */
	if (t.seen) {
		json_t *in;

		json_array_foreach(t.incs, i, in)
			if (!t.seen[i])
				inc_row(f, &t, in, 0);
	}
	free(t.seen);
	fputs("</table></div>\n", f);
	/* what the table leaves out, counted and summed: never dropped silently */
	if (iget(json_object_get(rep, "cohort_listing"), "omitted")) {
		fputs("<p class=\"omitted\"><strong>", f);
		esc(f, sget(json_object_get(rep, "cohort_listing"), "statement"));
		fputs("</strong></p>\n", f);
	}
	fputs("</section>\n", f);
	json_decref(t.cols);
	json_decref(t.derived);
}

/* ---- one bundle: cohort counters, cgroup statistics, phases -------------------- */

static void counters(FILE *f, json_t *rep)
{
	json_t *counting = json_object_get(rep, "counting"), *x;
	size_t i;

	fputs("<section id=\"counters\">\n<h2>Cohort counters</h2>\n", f);
	if (!counting || !json_array_size(json_object_get(counting, "cohort"))) {
		fputs("<p class=\"mut\">No cohort counts in this bundle (no counting collector).</p>\n", f);
	} else {
		fputs("<div class=\"scroll\"><table><tr><th>counter</th><th>scope</th><th class=\"num\">value</th>"
		      "</tr>\n", f);
		json_array_foreach(json_object_get(counting, "cohort"), i, x) {
			fputs("<tr>", f);
			el(f, "td", NULL, sget(x, "counter"));
			el(f, "td", NULL, !strcmp(sget(x, "scope"), "cgroup") ? "cgroup" : "sum of procs");
			count_cell(f, x);
			fputs("</tr>\n", f);
		}
		fputs("</table></div>\n", f);
	}
	if (json_array_size(json_object_get(counting, "cgroup_stats"))) {
		fputs("<h3>cgroup statistics</h3>\n<p class=\"mut\">The cohort's leaf cgroup; 'system' lines are the whole "
		      "host, not the cohort.</p>\n<div class=\"scroll\"><table><tr><th>scope</th><th>file</th><th>key</th>"
		      "<th class=\"num\">value</th></tr>\n", f);
		json_array_foreach(json_object_get(counting, "cgroup_stats"), i, x) {
			json_t *v = json_object_get(x, "value"), *vn = json_object_get(x, "value_ns"),
			       *vb = json_object_get(x, "value_bytes");

			fputs("<tr>", f);
			el(f, "td", NULL, sget(x, "scope"));
			el(f, "td", NULL, sget(x, "file"));
			el(f, "td", NULL, sget(x, "key"));
			fputs(v || vn || vb ? "<td class=\"num\">" : "<td class=\"num nc\">", f);
			if (vn)
				textf(f, "%.3f ms", (double)json_integer_value(vn) / 1e6);
			else if (vb)
				textf(f, "%lld bytes", (long long)json_integer_value(vb));
			else if (v)
				textf(f, "%lld", (long long)json_integer_value(v));
			else {
				fputs("n/a: ", f);
				esc(f, sget(x, "reason"));
			}
			if (json_is_true(json_object_get(x, "gauge")))
				fputs(" (at the end)", f);
			fputs("</td></tr>\n", f);
		}
		fputs("</table></div>\n", f);
	}
	fputs("</section>\n", f);
}

static void phases(FILE *f, json_t *rep)
{
	json_t *ph = json_object_get(rep, "phases"), *x;
	size_t i;

	if (!json_array_size(json_object_get(ph, "phases")))
		return;
	fputs("<section id=\"phases\">\n<h2>Phases</h2>\n<p class=\"mut\">", f);
	esc(f, sget(ph, "note"));
	fputs("</p>\n<table><tr><th>phase</th><th class=\"num\">from</th><th class=\"num\">to</th></tr>\n", f);
	json_array_foreach(json_object_get(ph, "phases"), i, x) {
		fputs("<tr>", f);
		el(f, "td", NULL, sget(x, "name"));
		fputs("<td class=\"num\">", f);
		textf(f, "%.3f ms", (double)iget(x, "from_ns") / 1e6);
		fputs("</td><td class=\"num\">", f);
		textf(f, "%.3f ms", (double)iget(x, "to_ns") / 1e6);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n</section>\n", f);
}

/* ---- charts ---------------------------------------------------------------------- */

#define CHART_W 280
#define CHART_L 22 /* room for the A/B labels */
#define CHART_R 10

struct scale {
	double lo, hi;
};

static void scale_add(struct scale *s, double v)
{
	if (!isfinite(v))
		return;
	if (v < s->lo)
		s->lo = v;
	if (v > s->hi)
		s->hi = v;
}

/* x of v; all values equal: the middle */
static double scale_x(const struct scale *s, double v)
{
	if (!(s->hi > s->lo))
		return (CHART_L + CHART_W - CHART_R) / 2.0;
	return CHART_L + (v - s->lo) / (s->hi - s->lo) * (CHART_W - CHART_L - CHART_R);
}

static void dot(FILE *f, double x, double y, const char *cls, const char *label)
{
	fprintf(f, "<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"%s\"><title>", cls, x, y,
		!strcmp(cls, "out") ? "5" : "3.5");
	esc(f, label);
	fputs("</title></circle>", f);
}

/* The values of one metric, one per repetition that has it. */
static json_t *rep_values(json_t *rep, const char *metric)
{
	json_t *out = json_array(), *run;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(rep, "repetitions"), "runs"), i, run) {
		json_t *m = json_object_get(json_object_get(run, "metrics"), metric);

		if (m && !strcmp(sget(m, "status"), "ok") && json_is_number(json_object_get(m, "value")))
			json_array_append_new(out, json_pack("{s:I,s:O}", "repetition", iget(run, "repetition"), "value",
							     json_object_get(m, "value")));
	}
	return out;
}

/* A strip chart: each repetition's value as a dot over the IQR band and the
 * median; Tukey outliers ringed. */
static void strip_chart(FILE *f, json_t *rep, json_t *s)
{
	const char *unit = sget(s, "unit");
	json_t *vals = rep_values(rep, sget(s, "name")), *x;
	struct scale sc = { INFINITY, -INFINITY };
	size_t i, k;
	char num[64], label[128];
	const int h = 26;

	json_array_foreach(vals, i, x)
		scale_add(&sc, json_number_value(json_object_get(x, "value")));
	fprintf(f, "<svg class=\"strip\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"",
		CHART_W, h, CHART_W, h);
	esc(f, sget(s, "name"));
	fputs(" per repetition\">", f);
	fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>", CHART_L, h / 2,
		CHART_W - CHART_R, h / 2);
	if (json_object_get(s, "q1") && json_object_get(s, "q3")) {
		double x1 = scale_x(&sc, json_number_value(json_object_get(s, "q1"))),
		       x3 = scale_x(&sc, json_number_value(json_object_get(s, "q3")));

		fprintf(f, "<rect class=\"band\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\"/>", x1, h / 2 - 7,
			x3 - x1 > 1 ? x3 - x1 : 1, 14);
	}
	if (json_object_get(s, "median")) {
		double xm = scale_x(&sc, json_number_value(json_object_get(s, "median")));

		an_fmt_value(json_number_value(json_object_get(s, "median")), unit, num, sizeof(num));
		fprintf(f, "<line class=\"med\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"><title>median ", xm, 3, xm,
			h - 3);
		esc(f, num);
		fputs("</title></line>", f);
	}
	json_array_foreach(vals, i, x) {
		json_int_t r = iget(x, "repetition");
		double v = json_number_value(json_object_get(x, "value"));
		bool out = false;
		json_t *o;

		json_array_foreach(json_object_get(s, "outliers"), k, o)
			out |= json_integer_value(o) == r;
		an_fmt_value(v, unit, num, sizeof(num));
		snprintf(label, sizeof(label), "repetition %lld: %s%s", (long long)r, num, out ? " (outlier)" : "");
		/* a little vertical spread, so equal values stay countable */
		dot(f, scale_x(&sc, v), h / 2 + ((int)(i % 3) - 1) * 4.0, out ? "out" : "dot", label);
	}
	fputs("</svg>", f);
	json_decref(vals);
}

/* A's and B's repetition values on one scale, each with its median. */
static void ab_chart(FILE *f, json_t *m)
{
	const char *unit = sget(m, "unit");
	json_t *side[2] = { json_object_get(m, "a_values"), json_object_get(m, "b_values") }, *x;
	const char *med[2] = { "a_median", "b_median" }, *name[2] = { "A", "B" };
	const char *dcls[2] = { "da", "db" }, *mcls[2] = { "ma", "mb" };
	struct scale sc = { INFINITY, -INFINITY };
	char num[64], label[128];
	const int h = 44, y[2] = { 13, 31 };
	size_t i;

	for (int s = 0; s < 2; s++)
		json_array_foreach(side[s], i, x)
			scale_add(&sc, json_number_value(x));
	fprintf(f, "<svg class=\"ab\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"",
		CHART_W, h, CHART_W, h);
	esc(f, sget(m, "name"));
	fputs(": A and B per repetition\">", f);
	for (int s = 0; s < 2; s++) {
		fprintf(f, "<text x=\"4\" y=\"%d\">%s</text>", y[s] + 4, name[s]);
		fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>", CHART_L, y[s],
			CHART_W - CHART_R, y[s]);
		if (json_object_get(m, med[s])) {
			double xm = scale_x(&sc, json_number_value(json_object_get(m, med[s])));

			an_fmt_value(json_number_value(json_object_get(m, med[s])), unit, num, sizeof(num));
			fprintf(f, "<line class=\"%s\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"><title>%s median ", mcls[s],
				xm, y[s] - 8, xm, y[s] + 8, name[s]);
			esc(f, num);
			fputs("</title></line>", f);
		}
		json_array_foreach(side[s], i, x) {
			an_fmt_value(json_number_value(x), unit, num, sizeof(num));
			snprintf(label, sizeof(label), "%s: %s", name[s], num);
			dot(f, scale_x(&sc, json_number_value(x)), y[s] + ((int)(i % 3) - 1) * 3.0, dcls[s], label);
		}
	}
	fputs("</svg>", f);
}

/* ---- one bundle: metrics across repetitions, dominant cost ---------------------- */

static void repetitions(FILE *f, json_t *rep)
{
	json_t *reps = json_object_get(rep, "repetitions"), *s, *o;
	long long n = (long long)iget(reps, "n");
	size_t i, k;

	fprintf(f, "<section id=\"repetitions\">\n<h2>Metrics across %lld repetition%s</h2>\n", n, n == 1 ? "" : "s");
	fputs("<p class=\"mut\">Median [min .. max] and IQR; outliers by Tukey's fences. Each dot is one "
	      "repetition (<span class=\"key a\"></span>), an outlier is ringed (<span class=\"key o\"></span>), the "
	      "band is the IQR and the bar the median.</p>\n", f);
	fputs("<div class=\"scroll\"><table>\n<tr><th>metric</th><th class=\"num\">median</th><th class=\"num\">min</th>"
	      "<th class=\"num\">max</th><th class=\"num\">IQR</th><th class=\"num\">n</th><th>outliers</th>"
	      "<th>per repetition</th></tr>\n", f);
	json_array_foreach(json_object_get(reps, "summary"), i, s) {
		const char *unit = sget(s, "unit");
		bool est = json_is_true(json_object_get(s, "estimate"));
		char med[80], lo[80], hi[80], q1[80], q3[80];

		fputs("<tr>", f);
		el(f, "td", NULL, sget(s, "name"));
		if (strcmp(sget(s, "status"), "ok")) {
			fputs("<td colspan=\"7\" class=\"nc\">n/a: ", f);
			esc(f, sget(s, "reason"));
			fputs("</td></tr>\n", f);
			continue;
		}
		fmt_metric(json_object_get(s, "median"), unit, est, med, sizeof(med));
		fmt_metric(json_object_get(s, "min"), unit, false, lo, sizeof(lo));
		fmt_metric(json_object_get(s, "max"), unit, false, hi, sizeof(hi));
		fmt_metric(json_object_get(s, "q1"), unit, false, q1, sizeof(q1));
		fmt_metric(json_object_get(s, "q3"), unit, false, q3, sizeof(q3));
		el(f, "td", est ? "num est" : "num", med);
		el(f, "td", "num", lo);
		el(f, "td", "num", hi);
		fputs("<td class=\"num\">", f);
		esc(f, q1);
		fputs(" .. ", f);
		esc(f, q3);
		fprintf(f, "</td><td class=\"num\">%lld", (long long)iget(s, "n"));
		if (json_array_size(json_object_get(s, "missing")))
			fprintf(f, ", %zu without a value", json_array_size(json_object_get(s, "missing")));
		fputs("</td><td>", f);
		if (json_array_size(json_object_get(s, "outliers"))) {
			fputs("repetition", f);
			json_array_foreach(json_object_get(s, "outliers"), k, o)
				fprintf(f, " %lld", (long long)json_integer_value(o));
		} else {
			fputs("<span class=\"mut\">none</span>", f);
		}
		fputs("</td><td>", f);
		strip_chart(f, rep, s);
		fputs("</td></tr>\n", f);
	}
	fputs("</table></div>\n</section>\n", f);
}

static void dominant_cost(FILE *f, json_t *rep)
{
	fputs("<section id=\"dominant-cost\">\n<h2>Dominant cost</h2>\n<p>", f);
	esc(f, sget(json_object_get(rep, "dominant_cost"), "statement"));
	fputs("</p>\n</section>\n", f);
}

/* ---- two bundles ---------------------------------------------------------------- */

static void comparability(FILE *f, json_t *report)
{
	json_t *cmp = json_object_get(report, "comparison"), *x;
	bool ok = json_is_true(json_object_get(cmp, "comparable"));
	size_t i;

	fputs("<section id=\"comparability\">\n<h2>Comparability</h2>\n<p>comparability: ", f);
	el(f, "strong", ok ? "good" : "bad",
	   ok ? "comparable"
	      : json_is_true(json_object_get(report, "forced")) ? "NOT comparable (compared anyway: --force)"
								   : "NOT comparable");
	if (json_is_true(json_object_get(cmp, "same_campaign")))
		fputs(" <span class=\"mut\">(one pmurec --ab campaign)</span>", f);
	fputs("</p>\n", f);
	if (!json_array_size(json_object_get(cmp, "differences"))) {
		fputs("<p>no differences in command, mode, counters, host, settings or images</p>\n</section>\n", f);
		return;
	}
	fputs("<div class=\"scroll\"><table><tr><th></th><th>what</th><th>A</th><th>B</th></tr>\n", f);
	json_array_foreach(json_object_get(cmp, "differences"), i, x) {
		bool refusing = json_is_true(json_object_get(x, "refusing"));

		fputs("<tr>", f);
		el(f, "td", refusing ? "bad" : "mut", refusing ? "differs" : "note");
		el(f, "td", NULL, sget(x, "what"));
		fputs("<td><code>", f);
		esc(f, sget(x, "a"));
		fputs("</code></td><td><code>", f);
		esc(f, sget(x, "b"));
		fputs("</code></td></tr>\n", f);
	}
	fputs("</table></div>\n</section>\n", f);
}

static const char *verdict_class(const char *v)
{
	if (!strcmp(v, "higher in B") || !strcmp(v, "fail"))
		return "hi";
	if (!strcmp(v, "lower in B"))
		return "lo";
	if (!strcmp(v, "no significant difference") || !strcmp(v, "pass"))
		return "good";
	return "mut";
}

static void comparison(FILE *f, json_t *report)
{
	json_t *cmp = json_object_get(report, "comparison"), *x;
	size_t i;
	int skipped = 0;

	fputs("<section id=\"comparison\">\n<h2>Metrics, A against B</h2>\n<p class=\"mut\">Change is B's median over "
	      "A's; the 95% CI is a bootstrap of the ratio of medians, p a Mann-Whitney U test. Dots: each repetition "
	      "of A (<span class=\"key a\"></span>) and B (<span class=\"key b\"></span>), bars: the medians.</p>\n", f);
	fputs("<div class=\"scroll\"><table>\n<tr><th>metric</th><th class=\"num\">A median</th>"
	      "<th class=\"num\">B median</th><th class=\"num\">change</th><th class=\"num\">95% CI</th>"
	      "<th class=\"num\">p</th><th>verdict</th><th>A and B per repetition</th></tr>\n", f);
	json_array_foreach(json_object_get(cmp, "metrics"), i, x) {
		struct an_cells cl;

		/* a metric neither or only one side has: listed once, below */
		if (!iget(x, "n_a") || !iget(x, "n_b")) {
			skipped++;
			continue;
		}
		an_fmt_compared(x, &cl);
		char *va = cl.va, *vb = cl.vb, *ch = cl.ch, *ci = cl.ci, *p = cl.p;
		const char *verdict = cl.verdict;
		fputs("<tr>", f);
		el(f, "td", NULL, sget(x, "name"));
		el(f, "td", "num", va);
		el(f, "td", "num", vb);
		el(f, "td", "num", ch);
		el(f, "td", "num", ci);
		el(f, "td", "num", p);
		fprintf(f, "<td class=\"%s\">", verdict_class(verdict));
		esc(f, verdict);
		if (json_is_true(json_object_get(x, "estimate")))
			fputs(" (estimates)", f);
		fputs("</td><td>", f);
		ab_chart(f, x);
		fputs("</td></tr>\n", f);
	}
	fputs("</table></div>\n", f);
	if (skipped) {
		int n = 0;

		fputs("<p>not compared (no value in A or in B): ", f);
		json_array_foreach(json_object_get(cmp, "metrics"), i, x)
			if (!iget(x, "n_a") || !iget(x, "n_b")) {
				if (n++)
					fputs(", ", f);
				esc(f, sget(x, "name"));
			}
		fputs("</p>\n", f);
	}
	fputs("</section>\n", f);
}

static void overhead(FILE *f, json_t *report)
{
	json_t *ov = json_object_get(json_object_get(report, "comparison"), "overhead"), *x;
	size_t i;

	if (!json_is_true(json_object_get(ov, "applicable")))
		return;
	fputs("<section id=\"overhead\">\n<h2>Observer overhead of mode ", f);
	esc(f, sget(ov, "b_mode"));
	fputs("</h2>\n<p class=\"", f);
	fputs(json_is_true(json_object_get(ov, "interpretable")) ? "good" : "bad", f);
	fputs("\"><strong>", f);
	esc(f, sget(ov, "statement"));
	fputs("</strong></p>\n<p class=\"mut\">campaign <code>", f);
	esc(f, sget(ov, "campaign"));
	fputs("</code>; run order:", f);
	json_array_foreach(json_object_get(ov, "order"), i, x) {
		fputc(' ', f);
		esc(f, sget(x, "mode"));
		fprintf(f, "#%lld", (long long)iget(x, "repetition"));
	}
	fputs("</p>\n<table><tr><th>metric</th><th class=\"num\">overhead</th><th class=\"num\">95% CI</th></tr>\n", f);
	json_array_foreach(json_object_get(ov, "metrics"), i, x) {
		fputs("<tr>", f);
		el(f, "td", NULL, sget(x, "name"));
		fputs("<td class=\"num\">", f);
		textf(f, "%+.1f%%", json_real_value(json_object_get(x, "overhead_percent")));
		fputs("</td><td class=\"num\">", f);
		textf(f, "%+.1f%% .. %+.1f%%", json_real_value(json_object_get(x, "ci_low_percent")),
		      json_real_value(json_object_get(x, "ci_high_percent")));
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n</section>\n", f);
}

static void gates(FILE *f, json_t *report)
{
	json_t *g = json_object_get(report, "gates"), *x;
	size_t i;

	fputs("<section id=\"gates\">\n<h2>Gates</h2>\n", f);
	if (!json_array_size(g)) {
		fputs("<p class=\"mut\">No --fail-if gates were given.</p>\n</section>\n", f);
		return;
	}
	fputs("<div class=\"scroll\"><table><tr><th>status</th><th>gate</th><th>verdict</th></tr>\n", f);
	json_array_foreach(g, i, x) {
		fputs("<tr>", f);
		el(f, "td", verdict_class(sget(x, "status")), sget(x, "status"));
		fputs("<td><code>", f);
		esc(f, sget(x, "expr"));
		fputs("</code></td>", f);
		el(f, "td", NULL, sget(x, "message"));
		fputs("</tr>\n", f);
	}
	fputs("</table></div>\n</section>\n", f);
}

/* ---- entry ------------------------------------------------------------------------ */

int an_html(json_t *report, FILE *out)
{
	bool compare = !strcmp(sget(report, "kind"), "compare");

	if (compare) {
		json_t *a = json_object_get(report, "a"), *b = json_object_get(report, "b");

		page_begin(out, "A/B comparison");
		fputs("<header><h1>pmuanalyze: A/B comparison</h1>\n<p class=\"mut\">A <code>", out);
		esc(out, sget(a, "bundle"));
		fputs("</code> (mode ", out);
		esc(out, sget(json_object_get(a, "run"), "mode"));
		fputs(") against B <code>", out);
		esc(out, sget(b, "bundle"));
		fputs("</code> (mode ", out);
		esc(out, sget(json_object_get(b, "run"), "mode"));
		fputs(")</p></header>\n", out);
		warnings(out, report, a, b);
		run_header(out, a, b);
		comparability(out, report);
		comparison(out, report);
		overhead(out, report);
		gates(out, report);
	} else {
		page_begin(out, sget(report, "bundle"));
		fputs("<header><h1>pmuanalyze: <code>", out);
		esc(out, sget(report, "bundle"));
		fputs("</code></h1></header>\n", out);
		warnings(out, report, report, NULL);
		run_header(out, report, NULL);
		not_measured(out, report);
		collectors(out, report);
		processes(out, report);
		counters(out, report);
		phases(out, report);
		repetitions(out, report);
		dominant_cost(out, report);
	}
	page_end(out, report);
	if (fflush(out) || ferror(out))
		return -1;
	return 0;
}
