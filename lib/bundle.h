#ifndef PMU_BUNDLE_H
#define PMU_BUNDLE_H

#include <jansson.h>

#include "bundle_archive.h"

/*
 * Reading a bundle through one interface, whatever its form: a directory
 * is opened in place; an archive is extracted, under the archive-safety
 * limits, into a private temporary directory (mode 0700) that
 * pmu_bundle_close() removes (and a fatal signal, see
 * pmu_archive_extract()).  Nothing is ever written outside it.
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

/* Load data/<name> as a JSON object, in bounded memory (jsonbound.h, the
 * limits of any spec version); the caller owns *out (json_decref). */
int pmu_bundle_read_doc(const struct pmu_bundle *b, const char *name, json_t **out);

#endif
