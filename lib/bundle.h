#ifndef PMU_BUNDLE_H
#define PMU_BUNDLE_H

#include <jansson.h>

#include "bundle_archive.h"

/*
 * Reading a bundle through one interface, whatever its form: a directory
 * is opened in place; an archive is extracted, under the archive-safety
 * limits, into a private temporary directory (mode 0700) that
 * pmu_bundle_close() removes.  Nothing is ever written outside it.
 */
struct pmu_bundle {
	int rootfd;         /* the bag's top directory */
	char *tmpdir;       /* extraction directory, or NULL for a directory bundle */
	bool archive;
};

/*
 * On success fills b (release with pmu_bundle_close()).  An archive that
 * breaks a safety rule returns PMU_ERR_CORRUPT with *check set to the
 * ARCHIVE-* check index (else -1).  tmpbase NULL means $TMPDIR or /tmp.
 */
int pmu_bundle_open(struct pmu_bundle *b, const char *path, const char *tmpbase,
		    const struct pmu_archive_limits *limits, int *check);
void pmu_bundle_close(struct pmu_bundle *b);

/* Load data/<name> as a JSON object; the caller owns *out (json_decref). */
int pmu_bundle_read_doc(const struct pmu_bundle *b, const char *name, json_t **out);

/*
 * The cohort of repetition rep (1-based), whatever the bundle's version:
 * data/[repeats/<rep>/]cohort.jsonl where it exists (spec 1.3), else
 * cohort.json (1.0-1.2).  fn is called once per incarnation, with the
 * incarnation as an object of the 1.0-1.2 document shape (lib/cohort.h),
 * borrowed for the call (json_incref() to keep it), and seq, its 0-based
 * place in the cohort (the document's array order, or the order of the
 * stream's incarnation records).  A stream hands each incarnation over at
 * its end record, so not in seq order, and memory holds only the open
 * ones.  A non-zero return of fn stops the walk and is returned.  When root
 * is not NULL, *root is the root's id (malloc'd: the caller frees it), or
 * NULL when the cohort names none.  Defined in lib/cohort.c.
 */
typedef int (*pmu_cohort_fn)(void *ctx, json_t *inc, size_t seq);
int pmu_bundle_cohort_each(const struct pmu_bundle *b, int rep, pmu_cohort_fn fn, void *ctx, char **root);

/*
 * The cohort of repetition rep as one object of the 1.0-1.2 document shape,
 * {"root": id, "incarnations": [...]} in seq order; the caller owns *out
 * (json_decref).  It grows with the cohort: for tools that need it whole.
 */
int pmu_bundle_read_cohort(const struct pmu_bundle *b, int rep, json_t **out);

#endif
