#ifndef PMU_ARCHIVE_H
#define PMU_ARCHIVE_H

#include <stdint.h>

#include "bag.h"

/*
 * Reproducible packing: entries sorted by path, under one top-level
 * directory, fixed mtime, numeric owner 0, modes 0755/0644, no xattrs, ACLs
 * or timestamps in the compression header.
 */
int pmu_archive_pack(int srcdirfd, const char *top, int outfd, enum pmu_bundle_form form,
		     int64_t mtime);

/* Hard limits for reading untrusted archives. */
struct pmu_archive_limits {
	uint64_t max_entries;
	uint64_t max_entry_bytes;
	uint64_t max_total_bytes;
	uint64_t max_path_len;
	uint64_t ratio_min_bytes; /* the ratio limit applies past this many bytes */
	uint64_t max_ratio;       /* uncompressed : compressed */
};

void pmu_archive_default_limits(struct pmu_archive_limits *l);

/*
 * Extract the archive at path into a new private directory (mode 0700) made
 * under tmpbase: *tmpdir (free()) names that directory, *top (free()) the
 * archive's single top-level directory, which lies at
 * <*tmpdir>/PMU_ARCHIVE_SUBDIR/<*top>.  Remove it with pmu_archive_remove().
 * A rule of the archive-safety table that is broken is returned as
 * PMU_ERR_CORRUPT with *check set to its check index (see checks.def) and
 * the detail message naming the entry; nothing is left behind on failure.
 *
 * Nothing is left behind either when the process is killed: SIGINT,
 * SIGTERM and SIGHUP (where their disposition is the default; the first
 * call installs the handler) remove the directory before the signal ends
 * the process, and a directory that a killed run left (kill -9) is removed
 * by the next extraction under the same tmpbase, once its owner marker
 * proves it was made by this library, by this user, for a process that is
 * gone.  Nothing else under tmpbase is touched.
 */
#define PMU_ARCHIVE_SUBDIR "bag"

int pmu_archive_extract(const char *path, const char *tmpbase, const struct pmu_archive_limits *l,
			char **tmpdir, char **top, int *check);

/* Remove a directory made by pmu_archive_extract(), with the fatal signals
 * blocked meanwhile; returns 0 or a negative error.  tmpdir stays the
 * caller's. */
int pmu_archive_remove(const char *tmpdir);

#endif
