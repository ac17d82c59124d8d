#ifndef PMU_VALIDATE_H
#define PMU_VALIDATE_H

#include <stdbool.h>
#include <stdint.h>

#include "bundle_archive.h"
#include "checks.h"

/*
 * The strict validator.  pmu_validate_path() reads a bundle (directory, or
 * archive extracted into a private temporary directory that is removed
 * again), runs every check of checks.def that its inputs allow, and reports
 * each finding through fn.  Streams are read a record at a time; memory
 * grows with the number of files, incarnations and spans, not with stream
 * size.  Files are hashed in a second thread, and events streams are
 * checked in parallel (one per online CPU), their findings replayed in
 * file order so that the report does not depend on scheduling; fn is only
 * ever called from the calling thread.  A check whose inputs are themselves invalid is not evaluated
 * (res->evaluated says which were); the bundle is invalid either way.
 */

struct pmu_finding {
	int check;                  /* index into pmu_checks */
	enum pmu_severity severity;
	const char *file;           /* bundle-relative path, or NULL */
	uint64_t record;            /* 1-based line of a stream or tag file, or 0 */
	const char *message;
};

typedef void (*pmu_finding_fn)(void *ctx, const struct pmu_finding *f);

/* How the stream fast path finds where a value ends: the verdicts are the
 * same, only the speed differs.  Tests compare them. */
enum pmu_line_masks {
	PMU_LINE_MASKS_AUTO,              /* the widest vectors the CPU has */
	PMU_LINE_MASKS_NONE,              /* byte scans (SSE2 or SWAR) */
	PMU_LINE_MASKS_AVX2,
	PMU_LINE_MASKS_AVX512,            /* AVX-512BW */
};

struct pmu_validate_opts {
	const char *tmpbase;              /* where archives are extracted; NULL: $TMPDIR or /tmp */
	struct pmu_archive_limits limits;
	unsigned max_per_check;           /* findings reported per check (rest counted) */
	bool hash_thread;                 /* hash in a second thread */
	bool no_shapes;                   /* every stream record through the full parser
					   * and schema check (the differential tests'
					   * reference; same verdicts, slower) */
	enum pmu_line_masks line_masks;   /* the value scans of the fast path */
};

struct pmu_validate_result {
	unsigned errors, warnings;
	unsigned files;
	uint64_t payload_bytes;
	bool evaluated[PMU_CHECK_COUNT_];
	unsigned count[PMU_CHECK_COUNT_];   /* findings per check, including unreported */
	unsigned suppressed[PMU_CHECK_COUNT_];
	uint64_t shape_records;             /* stream records accepted through a learned
					     * shape (a measure of the fast path, no verdict) */
	char spec[16];
};

void pmu_validate_default_opts(struct pmu_validate_opts *o);

/* want, when this CPU can do it (AUTO and NONE always); else NONE */
enum pmu_line_masks pmu_validate_line_masks(enum pmu_line_masks want);

/* Returns 0 when validation ran (res says whether the bundle is valid), or a
 * negative error when it could not start (no such path, temporary directory
 * not creatable); then pmu_error_detail() says why. */
int pmu_validate_path(const char *path, const struct pmu_validate_opts *opts, pmu_finding_fn fn,
		      void *ctx, struct pmu_validate_result *res);

#endif
