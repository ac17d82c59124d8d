#ifndef PMU_ANALYZE_MODEL_H
#define PMU_ANALYZE_MODEL_H
/*
 * pmuanalyze's model of a bundle, as JSON: the report is built once as a
 * JSON object and every output (text, --json, --csv, --html) is rendered
 * from it, so that they cannot disagree.
 *
 * A bundle report holds the run header, what could not be measured, the
 * collectors' fates, the first repetition's process tree and counters, the
 * dominant cost, and the metrics of every repetition with their summary.
 * Metrics come from sections: each section reads its own files of one
 * repetition and adds named metrics (wall, cpu_user, page-faults, ...);
 * adding a section touches no other.
 */
#include <stdbool.h>

#include <jansson.h>

#include "bundle.h"

enum { AN_EXIT_OK = 0, AN_EXIT_INVALID = 1, AN_EXIT_USAGE = 2, AN_EXIT_REGRESSION = 3,
       AN_EXIT_INCOMPARABLE = 4 };

/*
 * Validate the bundle at path and load its report.  Returns a new object the
 * caller json_decref()s, or NULL with *code set: AN_EXIT_INVALID when it is
 * invalid and allow_invalid is false (the failed checks are printed on
 * stderr), AN_EXIT_USAGE when it cannot be read.  With trace_rep > 0 and
 * trace_out, the Chrome trace of that repetition is written too, while the
 * bundle is open.
 */
json_t *an_load(const char *path, bool allow_invalid, int trace_rep, const char *trace_path, int *code);

/*
 * An output file written whole or not at all: a regular file (or a new
 * one) is written to a temporary sibling and renamed over path by
 * an_out_close(ok = true); anything else (a device, a pipe) is written in
 * place and never removed.  an_out_open() returns NULL with errno set.
 */
struct an_out {
	FILE *f;
	char *path, *tmp;
};

FILE *an_out_open(struct an_out *o, const char *path);
/* Returns 0, or -1 (message printed) when the file could not be finished. */
int an_out_close(struct an_out *o, bool ok);

/* The cells of a compared metric's row (comparison.metrics[]), as the text
 * and HTML reports show them; verdict is the verdict, or why there is none. */
struct an_cells {
	char va[64], vb[64], ch[32], ci[64], p[16];
	const char *verdict;
};

void an_fmt_compared(json_t *x, struct an_cells *c);

/* A metric's unit as text for a value: "12.345 ms", "1.2 MiB", "4711". */
void an_fmt_value(double v, const char *unit, char *out, size_t n);

/*
 * One counted value (a counting record: total, cohort) as text: exact,
 * "~N (estimate, counted P% of the time)", "N (suspect zero: ...)", or
 * "not counted" when r is NULL or has no value; never a 0 that was not
 * measured.
 */
void an_fmt_count(json_t *r, char *out, size_t n);

#endif
