/* pmuvalidate: the strict, fail-closed bundle validator (see pmuvalidate(1)). */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "checks.h"
#include "cli.h"
#include "error.h"
#include "spec.h"
#include "validate.h"

static const char usage[] =
	"usage: pmuvalidate [--json] [--junit FILE] [-q] BUNDLE...\n"
	"       pmuvalidate --list-checks [--json | --markdown]\n"
	"\n"
	"Check pmu bundles (directories or .tar, .tar.gz, .tar.zst archives) against\n"
	"bundle spec " PMU_SPEC_VERSION " (or an older 1.x). A bundle is valid only if every\n"
	"check that applies to it was evaluated and passed; anything missing, failed,\n"
	"lost, truncated, malformed or tampered with makes it invalid.\n"
	"\n"
	"  --json          print one JSON report on standard output\n"
	"  --junit FILE    also write a JUnit XML report to FILE\n"
	"  -q, --quiet     print nothing; the exit status tells\n"
	"  --list-checks   list every check ID, its severity and what it requires\n"
	"  --markdown      with --list-checks: the table of bundle-spec/checks.md\n"
	"  -h, --help      show this help\n"
	"  -V, --version   show the version\n"
	"\n"
	"Exit status: 0 all bundles valid, 1 a bundle is invalid, 2 usage or I/O error.\n";

struct found {
	int check;
	enum pmu_severity sev;
	char *file;
	uint64_t record;
	char *message;
};

struct bundle_report {
	const char *path;
	struct found *f;
	size_t n, cap;
	struct pmu_validate_result res;
	int err;               /* could not be validated at all */
	char *err_msg;
};

static bool opt_json, opt_quiet;

static void on_finding(void *ctx, const struct pmu_finding *f)
{
	struct bundle_report *b = ctx;

	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 16;
		struct found *nf = realloc(b->f, cap * sizeof(*nf));

		if (!nf) {
			fprintf(stderr, "pmuvalidate: out of memory\n");
			exit(PMU_EXIT_USAGE);
		}
		b->f = nf;
		b->cap = cap;
	}
	b->f[b->n++] = (struct found){ f->check, f->severity, f->file ? strdup(f->file) : NULL, f->record,
				       strdup(f->message) };
}

static bool valid(const struct bundle_report *b)
{
	return !b->err && b->res.errors == 0;
}

static void print_text(const struct bundle_report *b)
{
	if (b->err) {
		fprintf(stderr, "pmuvalidate: %s\n", b->err_msg);
		return;
	}
	if (valid(b))
		printf("%s: valid (spec %s, %u payload files, %llu bytes%s)\n", b->path, b->res.spec,
		       b->res.files, (unsigned long long)b->res.payload_bytes,
		       b->res.warnings ? ", with warnings" : "");
	else
		printf("%s: INVALID (%u error%s)\n", b->path, b->res.errors, b->res.errors == 1 ? "" : "s");
	for (size_t i = 0; i < b->n; i++) {
		const struct found *f = &b->f[i];

		printf("  %-7s %-18s ", pmu_severity_name(f->sev), pmu_checks[f->check].id);
		if (f->file && f->record)
			printf("%s:%llu: ", f->file, (unsigned long long)f->record);
		else if (f->file)
			printf("%s: ", f->file);
		printf("%s\n", f->message);
	}
	for (int c = 0; c < PMU_CHECK_COUNT_; c++)
		if (b->res.suppressed[c])
			printf("  %-7s %-18s … and %u more\n", "", pmu_checks[c].id, b->res.suppressed[c]);
}

static json_t *bundle_json(const struct bundle_report *b)
{
	json_t *o = json_object(), *arr = json_array(), *ev = json_array(), *ne = json_array();

	json_object_set_new(o, "path", json_string(b->path));
	json_object_set_new(o, "valid", json_boolean(valid(b)));
	if (b->err) {
		json_object_set_new(o, "error", json_string(b->err_msg));
		json_decref(arr);
		json_decref(ev);
		json_decref(ne);
		return o;
	}
	json_object_set_new(o, "spec", json_string(b->res.spec));
	json_object_set_new(o, "errors", json_integer(b->res.errors));
	json_object_set_new(o, "warnings", json_integer(b->res.warnings));
	json_object_set_new(o, "payload_files", json_integer(b->res.files));
	json_object_set_new(o, "payload_bytes", json_integer((json_int_t)b->res.payload_bytes));
	for (size_t i = 0; i < b->n; i++) {
		const struct found *f = &b->f[i];
		json_t *x = json_object();

		json_object_set_new(x, "check", json_string(pmu_checks[f->check].id));
		json_object_set_new(x, "severity", json_string(pmu_severity_name(f->sev)));
		json_object_set_new(x, "file", f->file ? json_string(f->file) : json_null());
		json_object_set_new(x, "record", f->record ? json_integer((json_int_t)f->record) : json_null());
		json_object_set_new(x, "message", json_string(f->message));
		json_array_append_new(arr, x);
	}
	json_object_set_new(o, "findings", arr);
	for (int c = 0; c < PMU_CHECK_COUNT_; c++)
		json_array_append_new(b->res.evaluated[c] ? ev : ne, json_string(pmu_checks[c].id));
	json_object_set_new(o, "evaluated", ev);
	json_object_set_new(o, "not_evaluated", ne);
	{
		json_t *sup = json_object();

		for (int c = 0; c < PMU_CHECK_COUNT_; c++)
			if (b->res.suppressed[c])
				json_object_set_new(sup, pmu_checks[c].id, json_integer(b->res.suppressed[c]));
		json_object_set_new(o, "unreported", sup);
	}
	return o;
}

/* One testsuite per bundle, one testcase per check: failed, passed, or
 * skipped with the reason that it could not be evaluated. */
static int write_junit(const char *path, struct bundle_report *b, size_t nb)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "pmuvalidate: cannot write '%s': %m\n", path);
		return -1;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"pmuvalidate\">\n");
	for (size_t i = 0; i < nb; i++) {
		unsigned failures = 0, skipped = 0;

		for (int c = 0; c < PMU_CHECK_COUNT_; c++) {
			bool failed = false;

			for (size_t k = 0; k < b[i].n; k++)
				failed |= b[i].f[k].check == c && b[i].f[k].sev == PMU_SEV_ERROR;
			failures += failed || b[i].err;
			skipped += !failed && !b[i].err && !b[i].res.evaluated[c];
		}
		fprintf(f, "  <testsuite name=\"");
		pmu_xml_text(f, b[i].path);
		fprintf(f, "\" tests=\"%d\" failures=\"%u\" skipped=\"%u\">\n", PMU_CHECK_COUNT_, failures,
			skipped);
		for (int c = 0; c < PMU_CHECK_COUNT_; c++) {
			bool failed = false;

			fprintf(f, "    <testcase classname=\"pmuvalidate\" name=\"%s\">", pmu_checks[c].id);
			if (b[i].err) {
				fprintf(f, "<failure message=\"bundle could not be read\">");
				pmu_xml_text(f, b[i].err_msg);
				fprintf(f, "</failure>");
			}
			for (size_t k = 0; !b[i].err && k < b[i].n; k++) {
				const struct found *x = &b[i].f[k];

				if (x->check != c || x->sev != PMU_SEV_ERROR)
					continue;
				if (!failed)
					fprintf(f, "<failure message=\"%s\">", pmu_checks[c].id);
				failed = true;
				pmu_xml_text(f, x->file ? x->file : "");
				if (x->record)
					fprintf(f, ":%llu", (unsigned long long)x->record);
				fprintf(f, ": ");
				pmu_xml_text(f, x->message);
				fprintf(f, "\n");
			}
			if (failed)
				fprintf(f, "</failure>");
			else if (!b[i].err && !b[i].res.evaluated[c])
				fprintf(f, "<skipped message=\"not evaluated: its inputs were missing or invalid, "
					   "or it does not apply to this form\"/>");
			fprintf(f, "</testcase>\n");
		}
		fprintf(f, "  </testsuite>\n");
	}
	fprintf(f, "</testsuites>\n");
	if (fclose(f) != 0) {
		fprintf(stderr, "pmuvalidate: cannot write '%s': %m\n", path);
		return -1;
	}
	return 0;
}

static int list_checks(bool json, bool markdown)
{
	if (json) {
		json_t *a = json_array();

		for (int c = 0; c < PMU_CHECK_COUNT_; c++)
			json_array_append_new(a, json_pack("{s:s,s:s,s:s}", "id", pmu_checks[c].id, "severity",
							   pmu_severity_name(pmu_checks[c].severity),
							   "description", pmu_checks[c].description));
		json_dumpf(a, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(a);
		return 0;
	}
	if (markdown)
		printf("| ID | severity | requirement |\n|---|---|---|\n");
	for (int c = 0; c < PMU_CHECK_COUNT_; c++) {
		if (markdown)
			printf("| `%s` | %s | %s |\n", pmu_checks[c].id, pmu_severity_name(pmu_checks[c].severity),
			       pmu_checks[c].description);
		else
			printf("%-18s %-7s %s\n", pmu_checks[c].id, pmu_severity_name(pmu_checks[c].severity),
			       pmu_checks[c].description);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },       { "junit", required_argument, NULL, 'J' },
		{ "quiet", no_argument, NULL, 'q' },      { "list-checks", no_argument, NULL, 'L' },
		{ "markdown", no_argument, NULL, 'M' },   { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },    { NULL, 0, NULL, 0 },
	};
	const char *junit = NULL;
	bool list = false, markdown = false, any_invalid = false, any_error = false;
	struct pmu_validate_opts opts;
	struct bundle_report *reps;
	int c, nb;

	while ((c = getopt_long(argc, argv, "qhV", lo, NULL)) != -1) {
		switch (c) {
		case 'j': opt_json = true; break;
		case 'J': junit = optarg; break;
		case 'q': opt_quiet = true; break;
		case 'L': list = true; break;
		case 'M': markdown = true; break;
		case 'h':
			fputs(usage, stdout);
			return pmu_cli_finish("pmuvalidate", PMU_EXIT_OK);
		case 'V':
			printf("pmuvalidate %s (spec %s, revision %s)\n", PMU_VERSION, PMU_SPEC_VERSION, PMU_REVISION);
			return pmu_cli_finish("pmuvalidate", PMU_EXIT_OK);
		default:
			fputs(usage, stderr);
			return PMU_EXIT_USAGE;
		}
	}
	if (list)
		return pmu_cli_finish("pmuvalidate", list_checks(opt_json, markdown));
	if (optind >= argc) {
		fprintf(stderr, "pmuvalidate: no bundle given\n");
		fputs(usage, stderr);
		return PMU_EXIT_USAGE;
	}
	nb = argc - optind;
	reps = calloc((size_t)nb, sizeof(*reps));
	if (!reps) {
		fprintf(stderr, "pmuvalidate: out of memory\n");
		return PMU_EXIT_USAGE;
	}
	pmu_validate_default_opts(&opts);
	for (int i = 0; i < nb; i++) {
		reps[i].path = argv[optind + i];
		reps[i].err = pmu_validate_path(reps[i].path, &opts, on_finding, &reps[i], &reps[i].res);
		if (reps[i].err) {
			reps[i].err_msg = strdup(pmu_error_detail());
			any_error = true;
		} else if (!valid(&reps[i])) {
			any_invalid = true;
		}
		if (!opt_json && !opt_quiet)
			print_text(&reps[i]);
		else if (reps[i].err && !opt_json)
			fprintf(stderr, "pmuvalidate: %s\n", reps[i].err_msg);
	}
	if (opt_json && !opt_quiet) {
		json_t *o = json_object(), *arr = json_array();

		json_object_set_new(o, "tool", json_string("pmuvalidate " PMU_VERSION));
		json_object_set_new(o, "spec", json_string(PMU_SPEC_VERSION));
		for (int i = 0; i < nb; i++)
			json_array_append_new(arr, bundle_json(&reps[i]));
		json_object_set_new(o, "bundles", arr);
		json_object_set_new(o, "valid", json_boolean(!any_invalid && !any_error));
		json_dumpf(o, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(o);
	}
	if (junit && write_junit(junit, reps, (size_t)nb))
		any_error = true;
	for (int i = 0; i < nb; i++) {
		for (size_t k = 0; k < reps[i].n; k++) {
			free(reps[i].f[k].file);
			free(reps[i].f[k].message);
		}
		free(reps[i].f);
		free(reps[i].err_msg);
	}
	free(reps);
	return pmu_cli_finish("pmuvalidate", any_error ? PMU_EXIT_USAGE
					   : any_invalid ? PMU_EXIT_INVALID : PMU_EXIT_OK);
}
