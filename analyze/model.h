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
#include <stdint.h>

#include <jansson.h>

#include "bundle.h"
#include "spec.h"

enum { AN_EXIT_OK = 0, AN_EXIT_INVALID = 1, AN_EXIT_USAGE = 2, AN_EXIT_REGRESSION = 3,
       AN_EXIT_INCOMPARABLE = 4 };

/*
 * How many processes a report lists by default (--max-processes): the
 * root, then the most significant by CPU time with their ancestors.  The
 * rest are counted and summed, never dropped silently; totals and the
 * dominant cost are computed over every incarnation whatever the limit.
 */
#define AN_MAX_PROCESSES 200
/* The most --max-processes accepts: the most incarnations a repetition may
 * hold (spec 1.3), so "all of them" can always be asked for. */
#define AN_MAX_PROCESSES_LIMIT PMU_COHORT_MAX_INCARNATIONS

/*
 * Validate the bundle at path and load its report.  Returns a new object the
 * caller json_decref()s, or NULL with *code set: AN_EXIT_INVALID when it is
 * invalid and allow_invalid is false (the failed checks are printed on
 * stderr), AN_EXIT_USAGE when it cannot be read.  With trace_rep > 0 and
 * trace_out, the Chrome trace of that repetition is written too, while the
 * bundle is open.  The report lists at most max_processes incarnations
 * (>= 1); its memory is bounded by that, not by the size of the cohort.
 * The report's profile section is the first repetition's samples
 * (profile.h); with prof not NULL, *prof is that aggregated profile, for
 * the exports (the caller an_prof_free()s it), or NULL when the bundle has
 * no samples stream.  The report's oscall section is the first
 * repetition's OS events (oscall.h); with offcpu_folded not NULL its folded
 * off-CPU stacks are written there (a failure: NULL, AN_EXIT_USAGE).
 */
struct an_prof;
json_t *an_load(const char *path, bool allow_invalid, int trace_rep, const char *trace_path, size_t max_processes,
		const char *offcpu_folded, struct an_prof **prof, int *code);

/*
 * Call fn once per incarnation of repetition rep (1: data/, k:
 * data/repeats/<k>/) with the incarnation in the shape of a cohort.json
 * entry, whatever the bundle's form of the cohort, and seq, its 0-based
 * place in the cohort's order: pmu_bundle_cohort_each() (lib/bundle.h),
 * which holds only the incarnations being read.  The calls need not come
 * in seq order.  in is borrowed: fn must json_incref() or copy what it
 * keeps.  A nonzero return of fn stops the walk and is returned; else 0, or
 * a negative pmu_err when the cohort cannot be read.
 */
typedef pmu_cohort_fn an_inc_fn;
int an_cohort_each(const struct pmu_bundle *b, int rep, an_inc_fn fn, void *ctx);

/*
 * The incarnation ids of a cohort, each given a dense number 0, 1, ... in
 * the order first put: an open-addressing table over one string arena, a
 * few bytes an id, so that a cohort of any size is indexed without a JSON
 * object per incarnation.  Embedded: an_ids_init()/an_ids_release().
 */
struct an_ids {
	char *str;          /* the ids, NUL-terminated, back to back */
	size_t slen, scap;
	size_t *off;        /* number -> offset of its id in str */
	size_t n, cap;
	uint32_t *slot;     /* number + 1, or 0 for an empty slot */
	size_t nslot;       /* a power of two, at least twice n */
	uint64_t seed;      /* of the hash, per table */
};

void an_ids_init(struct an_ids *x);
void an_ids_release(struct an_ids *x);
/* The number of id, put first if new (*added true); -1 when out of memory. */
long an_ids_put(struct an_ids *x, const char *id, bool *added);
/* The number of id, or -1 when it was never put. */
long an_ids_find(const struct an_ids *x, const char *id);
/* The id of number i (< x->n); borrowed, valid until the next put. */
const char *an_ids_name(const struct an_ids *x, size_t i);

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
