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
 * It leads with the answer: after the warnings, a summary (id summary)
 * holds what a reader needs first: for one bundle the dominant cost, the
 * wall time split into on-CPU and off-CPU time, the top programs and what
 * was not measured, one line per cause; for two, the verdicts and the
 * comparability warnings.  The detail follows, and every table fits a
 * 1280 px window (tests/cli/t3250-html-first-screen.bats measures it in
 * Chromium).  Fields a newer report adds (wall_time, programs,
 * not_measured_groups, exec_chain, argv) are shown when present; an older
 * report's page simply lacks them.
 *
 * Sections (stable ids, in this order): warnings, summary, run, then for
 * one bundle not-measured, collectors, processes, flamegraph, counters,
 * (phases), repetitions; for two, comparability, comparison, (overhead), gates.
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "html.h"
#include "oscall.h"
#include "runtime.h"
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

/*
 * The page fits 1280 px without a horizontal scroll: texts from the bundle
 * (reasons, paths, command lines) wrap, anywhere if they must, rather than
 * widen their table; numbers, headers and short words stay whole; a wide
 * set of per-process counters is split into tables of a few columns.  A
 * table that still cannot fit scrolls inside its own box, never the page.
 */
static const char style[] =
	":root{color-scheme:light dark;--fg:#1f2328;--bg:#fff;--mut:#59636e;--line:#d1d9e0;--head:#f6f8fa;"
	"--warn:#b42318;--warnbg:#fff1f0;--est:#9a6700;--a:#0969da;--b:#cf4a0c;--ok:#1a7f37;--band:#d8e6f7;"
	"--on:#0969da;--off:#e7ecf2;--sum:#f6f8fa}\n"
	"@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--mut:#9198a1;--line:#3d444d;"
	"--head:#151b23;--warn:#ff7b72;--warnbg:#2d1214;--est:#d29922;--a:#4493f8;--b:#f0883e;--ok:#3fb950;"
	"--band:#1c2d44;--on:#4493f8;--off:#262c36;--sum:#151b23}}\n"
	"*{box-sizing:border-box}\n"
	"body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:var(--fg);background:var(--bg);"
	"margin:0 auto;max-width:1280px;padding:.6rem 1.5rem 3rem;overflow-wrap:break-word}\n"
	"h1{font-size:1.3rem;margin:.1rem 0}h2{font-size:1.1rem;margin:1.4rem 0 .5rem;padding-bottom:.2rem;"
	"border-bottom:1px solid var(--line)}h3{font-size:1rem;margin:1rem 0 .4rem}\n"
	"p{margin:.4rem 0}.mut{color:var(--mut)}code{font:13px/1.4 ui-monospace,'DejaVu Sans Mono',monospace;"
	"overflow-wrap:anywhere}\n"
	".scroll{overflow-x:auto}table{border-collapse:collapse;font-variant-numeric:tabular-nums;margin:.2rem 0}\n"
	"th,td{padding:.25rem .5rem;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}\n"
	/* anywhere only where untrusted text may hold a token wider than the
	 * page: elsewhere it would let a table squeeze short words apart */
	"td.long,table.kv td,td.who,.chain,#summary li,#dominant-cost{overflow-wrap:anywhere}\n"
	"th{background:var(--head);font-weight:600;white-space:nowrap}td.num,th.num{text-align:right}"
	"td.num{white-space:nowrap}td.num.wrap{white-space:normal}td.nc.wrap{text-align:left;overflow-wrap:anywhere}"
	".nw{white-space:nowrap}small{font-size:11.5px}\n"
	"table.kv{width:100%}table.kv th{background:none;width:9rem;color:var(--mut);font-weight:normal}\n"
	"table.ab{table-layout:fixed;width:100%}table.ab td{overflow-wrap:anywhere}\n"
	"table.compact{font-size:12.5px}table.compact th,table.compact td{padding:.2rem .35rem}\n"
	"#processes td.who{min-width:14rem;max-width:26rem}.argv{color:var(--mut);font-size:12px}\n"
	"#warnings.on{border:2px solid var(--warn);background:var(--warnbg);border-radius:6px;padding:.5rem 1rem;"
	"margin:.8rem 0}#warnings.on h2{color:var(--warn);border:0;margin:.2rem 0}#warnings li{margin:.2rem 0;"
	"font-weight:600}#warnings p.mut{margin:.1rem 0;font-size:12.5px}\n"
	"#summary{background:var(--sum);border:1px solid var(--line);border-radius:8px;padding:.3rem 1rem .6rem;"
	"margin:.5rem 0}#summary h2{margin:.6rem 0 .3rem;font-size:1rem;border:0;padding:0}\n"
	"#dominant-cost p{font-size:1.05rem;font-weight:500;margin:.2rem 0}.level{display:inline-block;"
	"font-size:11px;font-weight:600;text-transform:uppercase;letter-spacing:.04em;border:1px solid var(--line);"
	"border-radius:4px;padding:0 .35rem;margin-right:.4rem;color:var(--mut);vertical-align:2px}\n"
	".cols{display:grid;grid-template-columns:repeat(auto-fit,minmax(26rem,1fr));gap:0 1.5rem}\n"
	"#summary ul{margin:.2rem 0;padding-left:0;list-style:none}#summary li{margin:.15rem 0}"
	"#summary li.plain{padding-left:1.1em}"
	"details>summary{cursor:pointer}#summary details p{margin:.1rem 0 .3rem;font-size:12.5px}\n"
	".share{display:inline-block;height:.6em;background:var(--on);vertical-align:baseline;margin-right:.3em}\n"
	".est{color:var(--est)}.nc{color:var(--mut);font-style:italic}.sz,.bad{color:var(--warn)}"
	".good{color:var(--ok)}.hi{color:var(--warn);font-weight:600}.lo{color:var(--est);font-weight:600}\n"
	"svg{display:block}svg .axis{stroke:var(--mut);stroke-width:1}svg .grid{stroke:var(--line);stroke-width:1}"
	"svg .band{fill:var(--band)}"
	"svg .med{stroke:var(--fg);stroke-width:2}svg .dot{fill:var(--a);fill-opacity:.8}"
	"svg .out{fill:none;stroke:var(--warn);stroke-width:2}svg .da{fill:var(--a);fill-opacity:.8}"
	"svg .db{fill:var(--b);fill-opacity:.8}svg .ma{stroke:var(--a);stroke-width:2}"
	"svg .mb{stroke:var(--b);stroke-width:2}svg text{fill:var(--mut);font:10.5px system-ui,sans-serif}"
	"svg .on{fill:var(--on)}svg .off{fill:var(--off);stroke:var(--mut);stroke-dasharray:4 3}"
	"svg text.in{fill:#fff;font-weight:600;font-size:12px}svg text.inoff{fill:var(--fg);font-size:12px}\n"
	"svg.wall{width:100%;max-width:900px;height:auto}\n"
	".key{display:inline-block;width:.7em;height:.7em;border-radius:50%;vertical-align:baseline;margin:0 .2em}"
	".key.a{background:var(--a)}.key.b{background:var(--b)}.key.o{border:2px solid var(--warn);"
	"width:.5em;height:.5em}.key.on{background:var(--on);border-radius:2px}.key.off{background:var(--off);"
	"border:1px dashed var(--mut);border-radius:2px}\n"
	"svg.flame{max-width:none;height:auto}svg.flame text{fill:#1f2328;font:11px ui-monospace,'DejaVu Sans Mono',"
	"monospace}svg.flame .axis{stroke:var(--mut)}svg.flame text.ax{fill:var(--mut)}"
	"svg.flame g.f:hover rect{stroke:var(--fg);stroke-width:1}\n"
	".fgk{display:inline-block;padding:0 .3em;border-radius:2px;color:#1f2328}.fgk.func{background:#e8703a}"
	".fgk.inline{background:#5ed0d0}.fgk.kernel{background:#cfa8e6}.fgk.unresolved{background:#b0b0b0}"
	".fgk.program{background:#8cb0e6}\n"
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
		el(f, "td", "long", sget(x, "message"));
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

/* ---- charts ---------------------------------------------------------------------- */

#define CHART_W 280
#define CHART_L 22 /* room for the A/B labels */
#define CHART_R 18 /* room for half of the last tick's label */
#define CHART_TICKS 3

/*
 * A value axis: the data's range widened to round ticks, in a display unit
 * chosen by the magnitude (time in ns, µs, ms or s; bytes in KiB, MiB or
 * GiB), so that every tick label carries its unit.
 */
struct scale {
	double lo, hi;   /* the data, in the metric's own unit */
	double div;      /* display unit = value / div */
	const char *unit; /* display unit, "" for a count or ratio */
	double t0, t1, step; /* ticks, in display units */
	int dec;         /* decimals of a tick label */
	int x0, x1;      /* pixels of t0 and t1 */
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

static void scale_unit(struct scale *s, const char *unit, double mag)
{
	/* per unit, largest first: the first whose "from" the magnitude
	 * reaches; seconds only from 10 s, as 1500 ms reads better than 1.5 s
	 * beside the text report's milliseconds */
	static const struct {
		const char *unit;
		double div, from;
		const char *name;
	} units[] = {
		{ "ns", 1e9, 1e10, "s" },
		{ "ns", 1e6, 1e6, "ms" },
		{ "ns", 1e3, 1e3, "\xc2\xb5s" },
		{ "ns", 1, 0, "ns" },
		{ "bytes", 1073741824.0, 1073741824.0, "GiB" },
		{ "bytes", 1048576.0, 1048576.0, "MiB" },
		{ "bytes", 1024.0, 1024.0, "KiB" },
		{ "bytes", 1, 0, "B" },
	};

	s->div = 1;
	s->unit = "";
	for (size_t i = 0; i < PMU_ARRAY_SIZE(units); i++)
		if (!strcmp(units[i].unit, unit) && mag >= units[i].from) {
			s->div = units[i].div;
			s->unit = units[i].name;
			return;
		}
}

/* Fix the ticks of s (after scale_add) for pixels x0 .. x1: about nticks
 * steps of 1, 2 or 5 times a power of ten. */
static void scale_fix(struct scale *s, const char *unit, int x0, int x1, int nticks)
{
	double lo = s->lo, hi = s->hi, raw, mag, r;

	if (!(hi >= lo))
		lo = hi = 0;
	scale_unit(s, unit, fmax(fabs(lo), fabs(hi)));
	lo /= s->div;
	hi /= s->div;
	if (hi - lo < 1e-9 * fmax(1, fabs(hi))) {
		double pad = fabs(hi) * 0.05;

		if (pad == 0)
			pad = 1;
		lo -= pad;
		hi += pad;
		if (s->lo >= 0 && lo < 0)
			lo = 0;
	}
	raw = (hi - lo) / nticks;
	mag = pow(10, floor(log10(raw)));
	r = raw / mag;
	s->step = (r < 1.5 ? 1 : r < 3 ? 2 : r < 7 ? 5 : 10) * mag;
	/* a count has no fractions */
	if (!strcmp(unit, "count") && s->step < 1)
		s->step = 1;
	s->t0 = floor(lo / s->step + 1e-9) * s->step;
	s->t1 = ceil(hi / s->step - 1e-9) * s->step;
	if (s->t1 <= s->t0)
		s->t1 = s->t0 + s->step;
	s->dec = s->step >= 1 ? 0 : (int)ceil(-log10(s->step) - 1e-9);
	if (s->dec > 6)
		s->dec = 6;
	s->x0 = x0;
	s->x1 = x1;
}

/* x of v, a value in the metric's unit */
static double scale_x(const struct scale *s, double v)
{
	return s->x0 + (v / s->div - s->t0) / (s->t1 - s->t0) * (s->x1 - s->x0);
}

/* The axis line at y, its ticks and their labels (unit on each). */
static void scale_axis(FILE *f, const struct scale *s, int y, int grid_top)
{
	int n = (int)floor((s->t1 - s->t0) / s->step + 0.5);

	fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>", s->x0, y, s->x1, y);
	for (int k = 0; k <= n; k++) {
		double t = s->t0 + k * s->step, x = s->x0 + (double)k / n * (s->x1 - s->x0);

		if (fabs(t) < s->step * 1e-9)
			t = 0;
		if (grid_top >= 0)
			fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>", x, grid_top, x,
				y);
		fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>", x, y, x, y + 3);
		fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.*f%s%s</text>", x, y + 13,
			s->dec, t, *s->unit ? " " : "", s->unit);
	}
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
 * median, on a value axis with its unit; Tukey outliers ringed. */
static void strip_chart(FILE *f, json_t *rep, json_t *s)
{
	const char *unit = sget(s, "unit");
	json_t *vals = rep_values(rep, sget(s, "name")), *x;
	struct scale sc = { .lo = INFINITY, .hi = -INFINITY };
	size_t i, k;
	char num[64], label[128];
	const int h = 44, mid = 13, ax = 27;

	json_array_foreach(vals, i, x)
		scale_add(&sc, json_number_value(json_object_get(x, "value")));
	scale_fix(&sc, unit, CHART_R, CHART_W - CHART_R, CHART_TICKS);
	fprintf(f, "<svg class=\"strip\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"",
		CHART_W, h, CHART_W, h);
	esc(f, sget(s, "name"));
	fputs(" per repetition\">", f);
	scale_axis(f, &sc, ax, 2);
	if (json_object_get(s, "q1") && json_object_get(s, "q3")) {
		double x1 = scale_x(&sc, json_number_value(json_object_get(s, "q1"))),
		       x3 = scale_x(&sc, json_number_value(json_object_get(s, "q3")));

		fprintf(f, "<rect class=\"band\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\"/>", x1, mid - 7,
			x3 - x1 > 1 ? x3 - x1 : 1, 14);
	}
	if (json_object_get(s, "median")) {
		double xm = scale_x(&sc, json_number_value(json_object_get(s, "median")));

		an_fmt_value(json_number_value(json_object_get(s, "median")), unit, num, sizeof(num));
		fprintf(f, "<line class=\"med\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"><title>median ", xm, 2, xm,
			ax - 2);
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
		dot(f, scale_x(&sc, v), mid + ((int)(i % 3) - 1) * 4.0, out ? "out" : "dot", label);
	}
	fputs("</svg>", f);
	json_decref(vals);
}

/* A's and B's repetition values on one value axis, each with its median. */
static void ab_chart(FILE *f, json_t *m)
{
	const char *unit = sget(m, "unit");
	json_t *side[2] = { json_object_get(m, "a_values"), json_object_get(m, "b_values") }, *x;
	const char *med[2] = { "a_median", "b_median" }, *name[2] = { "A", "B" };
	const char *dcls[2] = { "da", "db" }, *mcls[2] = { "ma", "mb" };
	struct scale sc = { .lo = INFINITY, .hi = -INFINITY };
	char num[64], label[128];
	const int h = 58, y[2] = { 11, 29 }, ax = 41;
	size_t i;

	for (int s = 0; s < 2; s++)
		json_array_foreach(side[s], i, x)
			scale_add(&sc, json_number_value(x));
	scale_fix(&sc, unit, CHART_L + 8, CHART_W - CHART_R, CHART_TICKS);
	fprintf(f, "<svg class=\"ab\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"",
		CHART_W, h, CHART_W, h);
	esc(f, sget(m, "name"));
	fputs(": A and B per repetition\">", f);
	scale_axis(f, &sc, ax, 2);
	for (int s = 0; s < 2; s++) {
		fprintf(f, "<text x=\"4\" y=\"%d\">%s</text>", y[s] + 4, name[s]);
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

/* ---- one bundle: what was not measured, collectors ----------------------------- */

/*
 * A not-measured item's reason with its own name taken out, so that the
 * items one cause refuses (eight hardware counters on a host without a
 * PMU: "... that counts 'cycles'", "... 'instructions'") read as one
 * cause.  A new string the caller frees.
 */
static char *reason_without_name(const char *reason, const char *what)
{
	const char *name = strrchr(what, ' '), *hit;
	char quoted[160];
	size_t n;
	char *out;

	name = name ? name + 1 : what;
	snprintf(quoted, sizeof(quoted), "'%s'", name);
	if (!*name || !(hit = strstr(reason, quoted)))
		return strdup(reason);
	n = strlen(reason) - strlen(quoted) + strlen("them") + 1;
	out = malloc(n);
	if (out)
		snprintf(out, n, "%.*sthem%s", (int)(hit - reason), reason, hit + strlen(quoted));
	return out;
}

/*
 * The not-measured items grouped by cause: the report's own groups
 * (not_measured_groups) when it has them, else the items with the same
 * status and reason, in the order of their first item.  A new array of
 * {status, reason, remedy, what: [...]} the caller json_decref()s.
 */
static json_t *nm_groups(json_t *rep)
{
	json_t *g = json_object_get(rep, "not_measured_groups"), *out, *x, *y;
	size_t i, k;

	if (json_is_array(g))
		return json_incref(g);
	out = json_array();
	json_array_foreach(json_object_get(rep, "not_measured"), i, x) {
		char *why = reason_without_name(opt(x, "reason"), sget(x, "what"));
		char *fix = reason_without_name(opt(x, "remedy"), sget(x, "what"));
		json_t *to = NULL;

		json_array_foreach(out, k, y)
			if (!strcmp(sget(y, "status"), sget(x, "status")) && why && !strcmp(sget(y, "reason"), why)) {
				to = y;
				break;
			}
		if (!to) {
			to = json_pack("{s:s,s:s,s:s,s:[]}", "status", sget(x, "status"), "reason", why ? why : "",
				       "remedy", fix ? fix : "", "what");
			json_array_append_new(out, to);
		}
		json_array_append_new(json_object_get(to, "what"), json_string(sget(x, "what")));
		free(why);
		free(fix);
	}
	return out;
}

/* The names of a group: "counter cycles, instructions, branches" when they
 * share a first word. */
static void group_names(FILE *f, json_t *what)
{
	const char *first = json_string_value(json_array_get(what, 0)), *sp = first ? strchr(first, ' ') : NULL;
	size_t plen = sp ? (size_t)(sp - first) + 1 : 0, i;
	json_t *x;

	json_array_foreach(what, i, x)
		if (plen && strncmp(json_string_value(x), first, plen))
			plen = 0;
	if (json_array_size(what) < 2)
		plen = 0;
	json_array_foreach(what, i, x) {
		if (i)
			fputs(", ", f);
		esc(f, json_string_value(x) + (i ? plen : 0));
	}
}

/* The full list, below the summary: one row per item, folded, since the
 * summary already says each cause once. */
static void not_measured(FILE *f, json_t *rep)
{
	json_t *nm = json_object_get(rep, "not_measured"), *x;
	json_t *groups = nm_groups(rep);
	size_t i;

	fputs("<section id=\"not-measured\">\n", f);
	fprintf(f, "<h2>Not measured (%zu)</h2>\n", json_array_size(nm));
	if (!json_array_size(nm)) {
		fputs("<p>Everything was measured.</p>\n</section>\n", f);
		json_decref(groups);
		return;
	}
	fprintf(f, "<p class=\"mut\">%zu item%s, %zu cause%s (grouped in the summary above); never a 0 for what was "
		   "not measured.</p>\n",
		json_array_size(nm), json_array_size(nm) == 1 ? "" : "s", json_array_size(groups),
		json_array_size(groups) == 1 ? "" : "s");
	fputs("<details><summary>every item, with its reason and remedy</summary>\n"
	      "<table><tr><th>what</th><th>status</th><th>reason</th><th>remedy</th></tr>\n", f);
	json_array_foreach(nm, i, x) {
		fputs("<tr>", f);
		el(f, "td", "nw", sget(x, "what"));
		el(f, "td", "bad", sget(x, "status"));
		el(f, "td", "long", sget(x, "reason"));
		el(f, "td", "long", opt(x, "remedy"));
		fputs("</tr>\n", f);
	}
	fputs("</table></details>\n</section>\n", f);
	json_decref(groups);
}

/* ---- the summary: the answer first ----------------------------------------------- */

static double nget(json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

static void dominant_cost(FILE *f, json_t *rep)
{
	static const struct {
		const char *level, *label;
	} levels[] = { { "off-cpu", "off-CPU time" }, { "program", "a program" }, { "process", "one process" } };
	json_t *d = json_object_get(rep, "dominant_cost");
	const char *lvl = opt(d, "level");

	fputs("<div id=\"dominant-cost\">\n<h2>Dominant cost</h2>\n<p>", f);
	for (size_t i = 0; i < PMU_ARRAY_SIZE(levels); i++)
		if (!strcmp(lvl, levels[i].level)) {
			fputs("<span class=\"level\">", f);
			esc(f, levels[i].label);
			fputs("</span>", f);
		}
	esc(f, sget(d, "statement"));
	fputs("</p>\n</div>\n", f);
}

/*
 * The run's wall time split into the cohort's on-CPU time and the rest
 * (off-CPU: blocked, sleeping, waiting to run), a lower bound since
 * on-CPU time may overlap on several CPUs: a bar on a time axis, then
 * the same numbers as text.  Omitted when the report has no wall_time
 * (an older pmuanalyze's report).
 */
static void wall_time(FILE *f, json_t *rep)
{
	json_t *w = json_object_get(rep, "wall_time");
	double wall, on, off, onp, offp, xw, xon, xoff;
	bool est;
	struct scale sc = { .lo = 0, .hi = 0 };
	char num[64];

	if (!json_is_object(w))
		return;
	fputs("<div id=\"wall-time\">\n<h2>Wall time</h2>\n", f);
	if (strcmp(sget(w, "status"), "ok")) {
		fputs("<p class=\"nc\">not decomposed: ", f);
		esc(f, sget(w, "reason"));
		fputs("</p>\n</div>\n", f);
		return;
	}
	wall = nget(w, "wall_ns");
	on = nget(w, "on_cpu_ns");
	off = nget(w, "off_cpu_ns");
	onp = nget(w, "on_cpu_percent");
	offp = nget(w, "off_cpu_percent");
	est = json_is_true(json_object_get(w, "on_cpu_estimate"));
	scale_add(&sc, 0);
	scale_add(&sc, wall);
	sc.lo = 0;
	scale_fix(&sc, "ns", 14, 870, 8);
	xw = scale_x(&sc, wall);
	xon = scale_x(&sc, fmin(on, wall));
	xoff = scale_x(&sc, fmin(on + off, wall));
	fputs("<svg class=\"wall\" viewBox=\"0 0 900 56\" role=\"img\" aria-label=\"wall time: on-CPU and off-CPU\">",
	      f);
	scale_axis(f, &sc, 36, -1);
	fprintf(f, "<rect class=\"on\" x=\"%d\" y=\"4\" width=\"%.1f\" height=\"26\"><title>on-CPU</title></rect>", sc.x0,
		xon - sc.x0);
	if (xoff > xon)
		fprintf(f, "<rect class=\"off\" x=\"%.1f\" y=\"4.5\" width=\"%.1f\" height=\"25\"><title>off-CPU (lower "
			   "bound)</title></rect>", xon, xoff - xon);
	fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"2\" x2=\"%.1f\" y2=\"36\"/>", xw, xw);
	if (xon - sc.x0 > 170)
		fprintf(f, "<text class=\"in\" x=\"%d\" y=\"21\">on-CPU %.0f%%</text>", sc.x0 + 6, onp);
	if (xoff - xon > 170)
		fprintf(f, "<text class=\"inoff\" x=\"%.1f\" y=\"21\">off-CPU %.0f%% (at least)</text>", xon + 6, offp);
	fputs("</svg>\n<p>", f);
	an_fmt_value(wall, "ns", num, sizeof(num));
	fputs("wall <strong>", f);
	esc(f, num);
	fputs("</strong>: <span class=\"key on\"></span>on-CPU <strong", f);
	fputs(est ? " class=\"est\">~" : ">", f);
	an_fmt_value(on, "ns", num, sizeof(num));
	esc(f, num);
	fprintf(f, "</strong> (%.1f%%%s", onp, est ? ", estimate" : "");
	if (json_object_get(w, "on_cpu_resolution_ns")) {
		an_fmt_value(nget(w, "on_cpu_resolution_ns"), "ns", num, sizeof(num));
		fputs(", clock ticks of ", f);
		esc(f, num);
	}
	if (*opt(w, "on_cpu_source")) {
		fputs(", from ", f);
		esc(f, opt(w, "on_cpu_source"));
	}
	fputs(")", f);
	if (nget(w, "parallelism") > 1.05)
		textf(f, ", on %.2f CPUs on average", nget(w, "parallelism"));
	fputs("; <span class=\"key off\"></span>off-CPU ", f);
	if (json_is_true(json_object_get(w, "off_cpu_is_lower_bound")))
		fputs("at least ", f);
	an_fmt_value(off, "ns", num, sizeof(num));
	fputs("<strong>", f);
	esc(f, num);
	fprintf(f, "</strong> (%.1f%%): blocked, sleeping or waiting to run", offp);
	if (json_object_get(w, "unattributed_ns")) {
		an_fmt_value(nget(w, "unattributed_ns"), "ns", num, sizeof(num));
		fputs("; unattributed ", f);
		esc(f, num);
		textf(f, " (%.1f%%)", nget(w, "unattributed_percent"));
	}
	fputs("</p>\n", f);
	if (*opt(w, "would_attribute")) {
		fputs("<p class=\"mut\">", f);
		esc(f, opt(w, "would_attribute"));
		fputs("</p>\n", f);
	}
	fputs("</div>\n", f);
}

#define SUMMARY_PROGRAMS 5

/* The programs (image, plus argv[0] where it differs) with the most CPU
 * time, when the report aggregates them. */
static void top_programs(FILE *f, json_t *rep)
{
	json_t *p = json_object_get(rep, "programs"), *rows = json_object_get(p, "rows"), *x;
	size_t i, more;
	double rest;

	if (!json_array_size(rows))
		return;
	fputs("<div id=\"programs\">\n<h2>Top programs</h2>\n<table class=\"compact\"><tr><th>program</th>"
	      "<th class=\"num\">processes</th><th class=\"num\">", f);
	/* the metric the shares are of, as the reader knows it */
	if (!strcmp(sget(p, "metric"), "cpu_time"))
		fputs("CPU time (user + sys)", f);
	else
		esc(f, sget(p, "metric"));
	fputs("</th><th>share of the cohort's CPU</th></tr>\n", f);
	json_array_foreach(rows, i, x) {
		bool est = json_is_true(json_object_get(x, "estimate"));
		const char *a0 = json_string_value(json_object_get(x, "argv0"));
		char num[64];
		double share = nget(x, "share_percent");

		if (i == SUMMARY_PROGRAMS)
			break;
		fputs("<tr><td><strong>", f);
		esc(f, sget(x, "program"));
		fputs("</strong>", f);
		if (a0 && strcmp(a0, sget(x, "program"))) {
			fputs(" <span class=\"mut\">as ", f);
			esc(f, a0);
			fputs("</span>", f);
		}
		fputs("<br><code class=\"argv\">", f);
		esc(f, opt(x, "image"));
		fprintf(f, "</code></td><td class=\"num\">%lld</td>", (long long)iget(x, "processes"));
		an_fmt_value(nget(x, "value_ns"), "ns", num, sizeof(num));
		fprintf(f, "<td class=\"num%s\">%s", est ? " est" : "", est ? "~" : "");
		esc(f, num);
		fprintf(f, "</td><td class=\"nw\"><span class=\"share\" style=\"width:%.0fpx\"></span>",
			fmax(1, fmin(share, 100)) * 1.2);
		textf(f, "%.1f%%%s", share, est ? " (estimate)" : "");
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
	more = json_array_size(rows) > SUMMARY_PROGRAMS ? json_array_size(rows) - SUMMARY_PROGRAMS : 0;
	rest = nget(p, "omitted_value_ns");
	json_array_foreach(rows, i, x)
		if (i >= SUMMARY_PROGRAMS)
			rest += nget(x, "value_ns");
	more += (size_t)iget(p, "omitted");
	if (more) {
		char num[64];

		an_fmt_value(rest, "ns", num, sizeof(num));
		fprintf(f, "<p class=\"mut\">and %zu more program%s: ", more, more == 1 ? "" : "s");
		esc(f, num);
		fputs("</p>\n", f);
	}
	fputs("</div>\n", f);
}

/* One line per cause, the names it refused on it; the remedy folded. */
static void not_measured_summary(FILE *f, json_t *rep)
{
	json_t *groups = nm_groups(rep), *g;
	size_t i, items = 0;

	json_array_foreach(groups, i, g)
		items += json_array_size(json_object_get(g, "what"));
	fputs("<div id=\"not-measured-summary\">\n", f);
	if (!json_array_size(groups)) {
		fputs("<h2>Not measured</h2>\n<p>Everything was measured.</p>\n</div>\n", f);
		json_decref(groups);
		return;
	}
	fprintf(f, "<h2>Not measured (%zu item%s, %zu cause%s)</h2>\n<ul>\n", items, items == 1 ? "" : "s",
		json_array_size(groups), json_array_size(groups) == 1 ? "" : "s");
	json_array_foreach(groups, i, g) {
		bool fold = *opt(g, "remedy");

		fputs(fold ? "<li><details><summary>" : "<li class=\"plain\">", f);
		fputs("<strong>", f);
		group_names(f, json_object_get(g, "what"));
		fputs("</strong> <span class=\"bad\">", f);
		esc(f, sget(g, "status"));
		fputs("</span>", f);
		if (*opt(g, "reason")) {
			fputs(": ", f);
			esc(f, opt(g, "reason"));
		}
		if (fold) {
			fputs("</summary><p>remedy: ", f);
			esc(f, opt(g, "remedy"));
			fputs("</p></details>", f);
		}
		fputs("</li>\n", f);
	}
	fputs("</ul>\n</div>\n", f);
	json_decref(groups);
}

/*
 * The first screen: what cost the time (the dominant cost, then the wall
 * time it is a share of), the programs that spent the CPU, and what the
 * bundle could not see, each cause once.  Everything below is the detail.
 */
static void summary(FILE *f, json_t *rep)
{
	fputs("<section id=\"summary\">\n", f);
	dominant_cost(f, rep);
	wall_time(f, rep);
	fputs("<div class=\"cols\">\n", f);
	top_programs(f, rep);
	not_measured_summary(f, rep);
	fputs("</div>\n</section>\n", f);
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
		fprintf(f, "<td class=\"num\">%lld</td><td class=\"num\">%lld</td><td class=\"long\">",
			(long long)iget(x, "dropped"), (long long)iget(x, "malformed"));
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

/* ---- one bundle: the profile's flame graph ---------------------------------------- */

/*
 * The flame graph of the samples (export.h's an_flame_json tree), drawn at
 * analysis time as inline SVG: the root at the bottom, each frame a box as
 * wide as its share of the samples, its callees above it, siblings in name
 * order (flamegraph.pl's layout, so a reader who knows those reads this).
 * Every box has a <title> (the browser's tooltip: name, file, samples and
 * share) and its name when it fits.  No script: the page stays static.
 * Colours say the kind of frame: warm for functions, aqua for inlined
 * ones, lilac for the kernel's, grey for the ones that could not be
 * symbolized (their names say why), blue for programs.
 */
#define FG_W 1200.0   /* the drawing's width in user units */
#define FG_ROW 17     /* one frame's height */
#define FG_AXIS 34    /* the axis under the graph */

static int flame_depth(json_t *n, int d)
{
	int m = d;
	json_t *c;
	size_t i;

	json_array_foreach(json_array_get(n, 4), i, c) {
		int x = flame_depth(c, d + 1);

		if (x > m)
			m = x;
	}
	return m;
}

static void flame_fill(const char *name, const char *kind, char *out, size_t n)
{
	uint32_t h = 2166136261u;

	for (const char *c = name; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	if (!strcmp(kind, "inline"))
		snprintf(out, n, "#%02x%02x%02x", 80 + (h & 31), 190 + ((h >> 5) & 31), 190 + ((h >> 10) & 31));
	else if (!strcmp(kind, "kernel"))
		snprintf(out, n, "#%02x%02x%02x", 190 + (h & 31), 150 + ((h >> 5) & 31), 225 + ((h >> 10) & 15));
	else if (!strcmp(kind, "unresolved"))
		snprintf(out, n, "#%02x%02x%02x", 170 + (h & 15), 170 + (h & 15), 170 + (h & 15));
	else if (!strcmp(kind, "program") || !strcmp(kind, "root"))
		snprintf(out, n, "#%02x%02x%02x", 120 + (h & 31), 160 + ((h >> 5) & 31), 225 + ((h >> 10) & 15));
	else
		snprintf(out, n, "#%02x%02x%02x", 205 + (h % 50), (h >> 8) % 200, (h >> 16) % 55);
}

static void flame_node(FILE *f, json_t *n, double x, int depth, int top, double total, json_t *fl)
{
	const char *name = json_string_value(json_array_get(n, 0)), *kind = json_string_value(json_array_get(n, 2));
	const char *file = json_string_value(json_array_get(n, 3));
	double v = (double)json_integer_value(json_array_get(n, 1)), w = v / total * FG_W, cx = x;
	int y = top - (depth + 1) * FG_ROW;
	char fill[16];
	json_t *c;
	size_t i, fit;

	if (!name || !kind)
		return;
	flame_fill(name, kind, fill, sizeof(fill));
	fprintf(f, "<g class=\"f %s\"><title>", kind);
	esc(f, name);
	if (file) {
		fputs(" (", f);
		esc(f, file);
		fputc(')', f);
	}
	if (!strcmp(kind, "inline"))
		fputs(", inlined", f);
	textf(f, ": %.0f %s sample%s, %.2f%%", v, sget(fl, "event"), v == 1 ? "" : "s", v / total * 100);
	fprintf(f, "</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>", x, y, w,
		FG_ROW - 1, fill);
	/* about 6.6 units a character at 11px: the name, or its head and "..", or nothing */
	fit = w > 8 ? (size_t)((w - 6) / 6.6) : 0;
	if (fit >= 3) {
		size_t len = strlen(name);
		char buf[256];

		if (len <= fit) {
			snprintf(buf, sizeof(buf), "%s", name);
		} else {
			size_t k = fit - 2 < sizeof(buf) - 3 ? fit - 2 : sizeof(buf) - 3;

			/* never cut a UTF-8 sequence */
			while (k > 0 && ((unsigned char)name[k] & 0xc0) == 0x80)
				k--;
			snprintf(buf, sizeof(buf), "%.*s..", (int)k, name);
		}
		fprintf(f, "<text x=\"%.2f\" y=\"%d\">", x + 3, y + FG_ROW - 5);
		esc(f, buf);
		fputs("</text>", f);
	}
	fputs("</g>\n", f);
	json_array_foreach(json_array_get(n, 4), i, c) {
		flame_node(f, c, cx, depth + 1, top, total, fl);
		cx += (double)json_integer_value(json_array_get(c, 1)) / total * FG_W;
	}
}

static void flame_graph(FILE *f, json_t *rep, json_t *fl)
{
	json_t *root = json_object_get(fl, "root"), *c;
	double total = (double)iget(fl, "samples");
	int depth, top, h;
	size_t i;

	fputs("<section id=\"flamegraph\">\n<h2>Flame graph</h2>\n", f);
	if (!json_is_true(json_object_get(fl, "available")) || !root || total <= 0) {
		fputs("<p class=\"nc\">No flame graph: ", f);
		esc(f, json_object_get(fl, "reason") ? sget(fl, "reason") : "the bundle has no samples");
		json_array_foreach(json_object_get(rep, "collectors"), i, c)
			if (!strcmp(sget(c, "name"), "sampling") && strcmp(sget(c, "status"), "ok")) {
				fputs(" (the sampling collector's status: ", f);
				esc(f, sget(c, "status"));
				if (*opt(c, "reason")) {
					fputs(", ", f);
					esc(f, opt(c, "reason"));
				}
				if (*opt(c, "remedy")) {
					fputs("; remedy: ", f);
					esc(f, opt(c, "remedy"));
				}
				fputc(')', f);
			}
		fputs("</p>\n</section>\n", f);
		return;
	}
	fputs("<p class=\"mut\" id=\"flamegraph-legend\">", f);
	textf(f, "%lld samples of %s", (long long)iget(fl, "samples"), sget(fl, "event"));
	if (iget(json_object_get(rep, "repetitions"), "n") > 1)
		fputs(" in repetition 1", f);
	if (iget(fl, "freq_hz"))
		textf(f, " at %lld Hz", (long long)iget(fl, "freq_hz"));
	else if (iget(fl, "period"))
		textf(f, ", one every %lld events", (long long)iget(fl, "period"));
	textf(f, ", call chains %s. A box's width is its share of the samples; its callees stand on it. ",
	      sget(fl, "call_graph"));
	if (iget(fl, "lost_samples") || iget(fl, "lost_records") || iget(fl, "unattributed"))
		textf(f, "Not drawn: %lld lost samples (%lld lost records), %lld samples outside the cohort. ",
		      (long long)iget(fl, "lost_samples"), (long long)iget(fl, "lost_records"),
		      (long long)iget(fl, "unattributed"));
	if (iget(fl, "pruned"))
		textf(f, "%lld frames under 0.05%% of the samples are too narrow to draw. ", (long long)iget(fl, "pruned"));
	fputs("Hover a box for its name, file and samples. Colours: <span class=\"fgk func\">function</span> "
	      "<span class=\"fgk inline\">inlined</span> <span class=\"fgk kernel\">kernel</span> "
	      "<span class=\"fgk unresolved\">not symbolized (the name says why)</span> "
	      "<span class=\"fgk program\">program</span></p>\n", f);
	depth = flame_depth(root, 0) + 1;
	top = depth * FG_ROW;
	h = top + FG_AXIS;
	fprintf(f, "<div class=\"scroll\"><svg class=\"flame\" viewBox=\"0 0 %.0f %d\" width=\"%.0f\" height=\"%d\" "
		   "role=\"img\" aria-label=\"flame graph of ", FG_W, h, FG_W, h);
	textf(f, "%lld %s samples", (long long)iget(fl, "samples"), sget(fl, "event"));
	fputs("\">\n", f);
	flame_node(f, root, 0, 0, top, total, fl);
	/* the axis: the share of the samples, and their number */
	fprintf(f, "<line class=\"axis\" x1=\"0\" y1=\"%d\" x2=\"%.0f\" y2=\"%d\"/>\n", top + 2, FG_W, top + 2);
	for (int k = 0; k <= 4; k++) {
		double x = FG_W * k / 4;

		fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>", x ? x - (k == 4) : 1,
			top + 2, x ? x - (k == 4) : 1, top + 6);
		fprintf(f, "<text class=\"ax\" x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">", x, top + 17,
			k == 0 ? "start" : k == 4 ? "end" : "middle");
		textf(f, "%d%% (%.0f)", k * 25, total * k / 4);
		fputs("</text>\n", f);
	}
	fprintf(f, "<text class=\"ax\" x=\"%.0f\" y=\"%d\" text-anchor=\"middle\">", FG_W / 2, top + 31);
	textf(f, "share of the %lld %s samples", (long long)iget(fl, "samples"), sget(fl, "event"));
	fputs("</text>\n</svg></div>\n</section>\n", f);
}

/* ---- one bundle: process tree ---------------------------------------------------- */

struct tree {
	json_t *incs, *totals, *cols, *derived;
};

/* A counted value with its label; the label ("(estimate, counted 50.0% of
 * the time)") may wrap under the number, the number never. */
static void count_cell(FILE *f, json_t *r)
{
	char v[200];
	const char *cls = NULL, *label;

	an_fmt_count(r, v, sizeof(v));
	if (!strcmp(v, "not counted"))
		cls = "nc";
	else if (json_is_true(json_object_get(r, "estimate")))
		cls = "est";
	else if (json_is_true(json_object_get(r, "suspect_zero")))
		cls = "sz";
	label = strstr(v, " (");
	fprintf(f, "<td class=\"num%s%s%s\">", label ? " wrap" : "", cls ? " " : "", cls ? cls : "");
	if (label) {
		fputs("<span class=\"nw\">", f);
		fwrite(v, 1, (size_t)(label - v), f); /* a number: nothing to escape */
		fputs("</span> <small>", f);
		esc(f, label + 1);
		fputs("</small>", f);
	} else {
		esc(f, v);
	}
	fputs("</td>", f);
}

/* The indentation of a row at depth in the tree: capped, so that a deep
 * chain of shells cannot widen the table past the page. */
static void indent_cell(FILE *f, json_t *in, int depth)
{
	fprintf(f, "<td class=\"nw\" style=\"padding-left:%.1fem\">", 0.35 + 0.9 * (depth < 10 ? depth : 10));
	esc(f, sget(in, "id"));
	if (depth > 10)
		textf(f, " (depth %d)", depth);
	fputs("</td>", f);
}

/* One argument as a POSIX shell reads it back: as is when it has only
 * [A-Za-z0-9_@%+=:,./-], else in single quotes, a quote as '"'"' (the rule
 * of Python's shlex.quote, so that a test can rebuild the text). */
static void shell_word(FILE *f, const char *s)
{
	if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-") == strlen(s)) {
		esc(f, s);
		return;
	}
	fputc('\'', f);
	for (const char *q; (q = strchr(s, '\'')); s = q + 1) {
		char *part = strndup(s, (size_t)(q - s));

		if (part)
			esc(f, part);
		free(part);
		fputs("'\"'\"'", f);
	}
	esc(f, s);
	fputc('\'', f);
}

/*
 * Who the incarnation is: comm and the image of its last exec, then, when
 * the report has them, its exec chain (env → bash → python3.11) and the
 * argv of its last exec, wrapping in the cell.
 */
static void who_cell(FILE *f, json_t *in)
{
	json_t *exec = json_object_get(in, "exec"), *last = json_array_get(exec, json_array_size(exec) - 1), *x;
	const char *chain = opt(in, "exec_chain");
	size_t i;

	fputs("<td class=\"who\">", f);
	esc(f, sget(in, "comm"));
	fputs(" <code>", f);
	if (last)
		esc(f, sget(last, "path"));
	fputs("</code>", f);
	if (*chain && strstr(chain, "\xe2\x86\x92")) { /* more than one image: an arrow */
		fputs("<br><span class=\"chain mut\">exec chain: ", f);
		esc(f, chain);
		fputs("</span>", f);
	} else if (!*chain && json_array_size(exec) > 1) {
		fputs("<br><span class=\"chain mut\">exec chain: ", f);
		json_array_foreach(exec, i, x) {
			const char *path = sget(x, "path"), *base = strrchr(path, '/');

			if (i)
				fputs(" \xe2\x86\x92 ", f);
			esc(f, base ? base + 1 : path);
		}
		fputs("</span>", f);
	}
	if (json_is_array(json_object_get(last, "argv"))) {
		fputs("<br><code class=\"argv\">", f);
		json_array_foreach(json_object_get(last, "argv"), i, x) {
			if (i)
				fputc(' ', f);
			shell_word(f, json_string_value(x) ? json_string_value(x) : "");
		}
		if (json_is_true(json_object_get(last, "argv_truncated")))
			fputs(" <span class=\"nc\">… (truncated)</span>", f);
		fputs("</code>", f);
	} else if (*opt(last, "argv_reason")) {
		fputs("<br><span class=\"nc\">argv not recorded: ", f);
		esc(f, opt(last, "argv_reason"));
		fputs("</span>", f);
	}
	fputs("</td>", f);
}

/* One incarnation: identity, lifetime, resources in the text report's units
 * ("n/a", never 0, when not measured). */
static void inc_row(FILE *f, json_t *in, int depth)
{
	json_t *end = json_object_get(in, "end_ns"), *res = json_object_get(in, "resources");
	char buf[96];
	size_t i;

	fputs("<tr>", f);
	indent_cell(f, in, depth);
	fprintf(f, "<td class=\"num\">%lld</td>", (long long)iget(in, "pid"));
	who_cell(f, in);
	fputs("<td class=\"num\">", f);
	if (end)
		textf(f, "%.3f ms", (double)(json_integer_value(end) - iget(in, "start_ns")) / 1e6);
	else
		fputs("alive at end", f);
	if (json_is_true(json_object_get(in, "preexisting")))
		fputs("<br><span class=\"mut\">running before the recording (times from attach)</span>", f);
	fmt_exit(json_object_get(in, "exit"), buf, sizeof(buf));
	fputs("</td>", f);
	el(f, "td", "nw", buf);
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
	fputs("</tr>\n", f);
}

/* One incarnation's counters, each with its label, and derived ratios. */
static void counter_row(FILE *f, const struct tree *t, json_t *in, int depth, size_t from, size_t to)
{
	json_t *m = json_object_get(t->totals, sget(in, "id"));
	size_t i, ncols = json_array_size(t->cols);

	fputs("<tr>", f);
	indent_cell(f, in, depth);
	el(f, "td", NULL, sget(in, "comm"));
	for (i = from; i < to; i++) {
		json_t *d;
		const char *name;

		if (i < ncols) {
			count_cell(f, json_object_get(m, json_string_value(json_array_get(t->cols, i))));
			continue;
		}
		name = json_string_value(json_array_get(t->derived, i - ncols));
		d = json_object_get(json_object_get(m, "derived"), name);
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

/* The rows in the depth-first order the model computed (as the text report
 * walks it), then the incarnations the walk did not reach (a parent that
 * is not in the cohort): listed, not hidden.  An array of [index, depth]. */
static json_t *tree_order(json_t *rep)
{
	json_t *incs = json_object_get(rep, "cohort"), *out = json_array(), *o;
	bool *seen = calloc(json_array_size(incs) + 1, sizeof(*seen));
	size_t k;

	json_array_foreach(json_object_get(rep, "tree"), k, o) {
		size_t i = (size_t)json_integer_value(json_object_get(o, "index"));

		if (i >= json_array_size(incs))
			continue;
		if (seen)
			seen[i] = true;
		json_array_append_new(out, json_pack("[I,I]", (json_int_t)i, iget(o, "depth")));
	}
	if (seen)
		for (k = 0; k < json_array_size(incs); k++)
			if (!seen[k])
				json_array_append_new(out, json_pack("[I,i]", (json_int_t)k, 0));
	free(seen);
	return out;
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

/* So many counter columns to a table that it fits 1280 px: a wider set is
 * split into several tables, each with the incarnation again. */
#define COUNTER_COLS 7

static void processes(FILE *f, json_t *rep)
{
	json_t *counting = json_object_get(rep, "counting"), *c, *m, *d, *order = tree_order(rep), *o;
	struct tree t = { .incs = json_object_get(rep, "cohort"),
			  .totals = json_object_get(counting, "totals"), .cols = json_array(), .derived = json_array() };
	const char *inc, *key;
	size_t i, k, ncols;

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
	ncols = json_array_size(t.cols) + json_array_size(t.derived);

	fprintf(f, "<section id=\"processes\">\n<h2>Process tree (%lld incarnations)</h2>\n",
		(long long)iget(json_object_get(rep, "cohort_listing"), "incarnations"));
	fputs("<p class=\"mut\">Resources are n/a, never 0, where they were not measured; read and written are the "
	      "bytes passed to read and write calls (rchar, wchar), not storage I/O.</p>\n", f);
	fputs("<div class=\"scroll\"><table class=\"compact\" id=\"tree\">\n<tr><th>incarnation</th><th class=\"num\">pid"
	      "</th><th>process</th><th class=\"num\">wall</th><th>exit</th><th class=\"num\">threads</th>", f);
	for (i = 0; i < PMU_ARRAY_SIZE(resources); i++) {
		fputs("<th class=\"num\">", f);
		esc(f, resources[i].label);
		fputs("</th>", f);
	}
	fputs("</tr>\n", f);
	json_array_foreach(order, k, o)
		inc_row(f, json_array_get(t.incs, (size_t)json_integer_value(json_array_get(o, 0))),
			(int)json_integer_value(json_array_get(o, 1)));
	fputs("</table></div>\n", f);
	/* what the table leaves out, counted and summed: never dropped silently */
	if (iget(json_object_get(rep, "cohort_listing"), "omitted")) {
		fputs("<p class=\"omitted\"><strong>", f);
		esc(f, sget(json_object_get(rep, "cohort_listing"), "statement"));
		fputs("</strong></p>\n", f);
	}
	for (size_t from = 0; from < ncols; from += COUNTER_COLS) {
		size_t to = from + COUNTER_COLS < ncols ? from + COUNTER_COLS : ncols;

		if (!from)
			fputs("<h3>Counters per process</h3>\n<p class=\"mut\">A count marked ~ is an estimate scaled from "
			      "the share of the time it was counted.</p>\n", f);
		fputs("<div class=\"scroll\"><table class=\"compact counters\">\n<tr><th>incarnation</th><th>comm</th>",
		      f);
		for (i = from; i < to; i++)
			el(f, "th", "num",
			   json_string_value(i < json_array_size(t.cols) ? json_array_get(t.cols, i)
									: json_array_get(t.derived, i - json_array_size(t.cols))));
		fputs("</tr>\n", f);
		json_array_foreach(order, k, o)
			counter_row(f, &t, json_array_get(t.incs, (size_t)json_integer_value(json_array_get(o, 0))),
				    (int)json_integer_value(json_array_get(o, 1)), from, to);
		fputs("</table></div>\n", f);
	}
	fputs("</section>\n", f);
	json_decref(order);
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
			fputs(v || vn || vb ? "<td class=\"num\">" : "<td class=\"num wrap nc\">", f);
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
	/* A and B side by side, each half of the rest: a long value (a build
	 * id and digest) wraps in its half rather than squeeze the other */
	fputs("<div class=\"scroll\"><table class=\"ab\"><colgroup><col style=\"width:5rem\"><col style=\"width:12rem\">"
	      "<col><col></colgroup><tr><th></th><th>what</th><th>A</th><th>B</th></tr>\n", f);
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
		el(f, "td", "long", sget(x, "message"));
		fputs("</tr>\n", f);
	}
	fputs("</table></div>\n</section>\n", f);
}

/* The comparability warnings the compare step gives (comparability.warnings,
 * from 1.4's pmuanalyze, or the comparison's own warnings), less those the
 * warnings section above already shows.  A new array. */
static json_t *cmp_warnings(json_t *report)
{
	json_t *cmp = json_object_get(report, "comparison"), *out = json_array(), *x, *w;
	json_t *from[] = { json_object_get(json_object_get(report, "comparability"), "warnings"),
			   json_object_get(json_object_get(cmp, "comparability"), "warnings"),
			   json_object_get(cmp, "warnings") };
	size_t i;

	for (size_t k = 0; k < PMU_ARRAY_SIZE(from); k++)
		json_array_foreach(from[k], i, x) {
			const char *s = json_string_value(x);
			bool dup = !s;
			size_t j;

			json_array_foreach(json_object_get(report, "warnings"), j, w)
				dup |= s && json_string_value(w) && strstr(json_string_value(w), s);
			json_array_foreach(out, j, w)
				dup |= s && !strcmp(json_string_value(w), s);
			if (!dup)
				json_array_append_new(out, json_string(s));
		}
	return out;
}

/*
 * The comparison's answer first: comparable or not, then the metrics by
 * verdict (those that changed with their change and interval, the others
 * by name), the comparability warnings, and the overhead statement.
 */
static void compare_summary(FILE *f, json_t *report)
{
	json_t *cmp = json_object_get(report, "comparison"), *by = json_object(), *order = json_array(), *x, *ws;
	json_t *why = json_object(); /* no verdict: reason -> names */
	bool ok = json_is_true(json_object_get(cmp, "comparable"));
	size_t i, n = 0;

	json_array_foreach(json_object_get(cmp, "metrics"), i, x) {
		struct an_cells cl;
		json_t *list;
		const char *v = json_string_value(json_object_get(x, "verdict"));

		if (!iget(x, "n_a") || !iget(x, "n_b"))
			continue;
		an_fmt_compared(x, &cl);
		/* a verdict with a reason (undetermined: too few repetitions) or
		 * none at all (measured differently): the reason, folded below */
		if (!v || strcmp(v, cl.verdict)) {
			if (!(list = json_object_get(why, cl.verdict)))
				json_object_set_new(why, cl.verdict, list = json_array());
			json_array_append_new(list, json_string(sget(x, "name")));
		}
		if (!v)
			v = "no verdict";
		if (!(list = json_object_get(by, v))) {
			json_object_set_new(by, v, list = json_array());
			json_array_append_new(order, json_string(v));
		}
		json_array_append_new(list, json_pack("{s:s,s:s,s:s}", "name", sget(x, "name"), "change", cl.ch, "ci",
						      cl.ci));
		n++;
	}
	fputs("<section id=\"summary\">\n<div id=\"verdict\">\n<h2>Verdict</h2>\n<p>", f);
	el(f, "strong", ok ? "good" : "bad",
	   ok ? "comparable"
	      : json_is_true(json_object_get(report, "forced")) ? "NOT comparable (compared anyway: --force)"
								   : "NOT comparable");
	fprintf(f, "; %zu metric%s compared", n, n == 1 ? "" : "s");
	json_array_foreach(order, i, x) {
		fprintf(f, "%s%zu ", i ? ", " : ": ", json_array_size(json_object_get(by, json_string_value(x))));
		esc(f, json_string_value(x));
	}
	fputs("</p>\n<ul>\n", f);
	/* the verdicts that say something changed first, each metric with its
	 * change and interval; "no ..." verdicts and undetermined ones by name
	 * only: a change without a verdict is not a finding */
	for (int pass = 0; pass < 2; pass++)
		json_array_foreach(order, i, x) {
			const char *v = json_string_value(x);
			bool quiet = !strncmp(v, "no ", 3) || !strcmp(v, "undetermined");
			json_t *m;
			size_t k;

			if (quiet != (pass == 1))
				continue;
			fprintf(f, "<li><span class=\"%s\">", verdict_class(v));
			esc(f, v);
			fputs("</span>: ", f);
			json_array_foreach(json_object_get(by, v), k, m) {
				if (k)
					fputs(", ", f);
				fputs(quiet ? "" : "<strong>", f);
				esc(f, sget(m, "name"));
				fputs(quiet ? "" : "</strong>", f);
				if (!quiet && *sget(m, "change")) {
					fputc(' ', f);
					esc(f, sget(m, "change"));
					if (*sget(m, "ci")) {
						fputs(" (95% CI ", f);
						esc(f, sget(m, "ci"));
						fputc(')', f);
					}
				}
			}
			fputs("</li>\n", f);
		}
	fputs("</ul>\n", f);
	if (json_object_size(why)) {
		const char *reason;
		json_t *names, *nm;
		size_t j;

		fputs("<details><summary>why some metrics have no verdict</summary><ul>\n", f);
		json_object_foreach(why, reason, names) {
			fputs("<li>", f);
			json_array_foreach(names, j, nm) {
				fputs(j ? ", " : "", f);
				esc(f, json_string_value(nm));
			}
			fputs(": ", f);
			esc(f, reason);
			fputs("</li>\n", f);
		}
		fputs("</ul></details>\n", f);
	}
	{
		json_t *ov = json_object_get(cmp, "overhead");

		if (json_is_true(json_object_get(ov, "applicable")) && *opt(ov, "statement")) {
			fputs("<p><strong>", f);
			esc(f, opt(ov, "statement"));
			fputs("</strong></p>\n", f);
		}
	}
	fputs("</div>\n", f);
	ws = cmp_warnings(report);
	if (json_array_size(ws)) {
		fputs("<div id=\"comparability-warnings\">\n<h2>Comparability warnings</h2>\n<ul>\n", f);
		json_array_foreach(ws, i, x) {
			fputs("<li class=\"bad\">", f);
			esc(f, json_string_value(x));
			fputs("</li>\n", f);
		}
		fputs("</ul>\n</div>\n", f);
	}
	fputs("</section>\n", f);
	json_decref(ws);
	json_decref(by);
	json_decref(why);
	json_decref(order);
}

/* ---- entry ------------------------------------------------------------------------ */

int an_html(json_t *report, json_t *flame, FILE *out)
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
		compare_summary(out, report);
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
		summary(out, report);
		run_header(out, report, NULL);
		not_measured(out, report);
		collectors(out, report);
		processes(out, report);
		if (flame)
			flame_graph(out, report, flame);
		/* a bundle without any OS-event stream: its absence is in the
		 * collectors' table and in the text and JSON reports */
		if (!strcmp(sget(json_object_get(report, "oscall"), "status"), "ok"))
			an_oscall_html(json_object_get(report, "oscall"), out);
		/* likewise the runtime evidence: shown where it has spans, marks
		 * or a runtime stream */
		if (!strcmp(sget(json_object_get(report, "runtime"), "status"), "ok"))
			an_runtime_html(json_object_get(report, "runtime"), out);
		counters(out, report);
		phases(out, report);
		repetitions(out, report);
	}
	page_end(out, report);
	if (fflush(out) || ferror(out))
		return -1;
	return 0;
}
