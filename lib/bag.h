#ifndef PMU_BAG_H
#define PMU_BAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/*
 * Writing a bundle: a BagIt 1.0 bag (RFC 8493) staged in a hidden sibling
 * directory of the final path, on the same filesystem.  Payload files are
 * hashed while they are written; pmu_bag_finalize() writes bagit.txt,
 * bag-info.txt, manifest-sha256.txt and, last, tagmanifest-sha256.txt, makes
 * the whole staged bag durable at once (one syncfs(2)), then renames the
 * staging directory into place (or packs it into a reproducible archive that
 * is fsync'd and renamed into place) and fsyncs the parent directory.  Until
 * then nothing exists at the final path; on failure or pmu_bag_abort() the
 * staging area is removed.  A staging area left by a killed writer is
 * recognised by its marker file and removed by the next writer in the same
 * directory.
 *
 * A bundle holds argv, environment values, paths and host provenance, so it
 * is private by default: files 0600 and directories 0700, set with fchmod(2)
 * whatever the umask; the staging directory is 0700 until it is published.
 * Replacing (opts.force) is allowed only over a bundle: see
 * pmu_bag_replaceable().
 */

enum pmu_bundle_form {
	PMU_FORM_DIR,
	PMU_FORM_TAR,
	PMU_FORM_TAR_GZ,
	PMU_FORM_TAR_ZST,
};

struct pmu_bag_opts {
	bool force;             /* replace an existing bundle at the final path */
	const char *agent;      /* Bag-Software-Agent, e.g. "pmurec 0.1.0" */
	const char *spec;       /* PMU-Spec-Version */
	int64_t date;           /* Bagging-Date and archive mtime (s since epoch); <0: now */
	unsigned file_mode;     /* mode of every file and of an archive, 0: 0600; see
				 * pmu_bag_file_mode_ok(); directories get it plus the
				 * x bit of every class that may read */
};

/* True when mode may be given as file_mode: read and write for the owner,
 * otherwise only read and write bits (no x, setuid, setgid or sticky). */
bool pmu_bag_file_mode_ok(unsigned mode);

/* The directories' mode for file_mode (0: the default, 0700). */
unsigned pmu_bag_dir_mode(unsigned file_mode);

struct pmu_bag;
struct pmu_bag_file;

/* The form implied by the final path's suffix (.tar, .tar.gz, .tgz, .tar.zst). */
enum pmu_bundle_form pmu_bundle_form_of(const char *path);

/* Start a bag for final_path.  On success *out is owned by the caller and must
 * end in pmu_bag_finalize() or pmu_bag_abort(), which free it. */
int pmu_bag_open(struct pmu_bag **out, const char *final_path, const struct pmu_bag_opts *opts);

/* Payload file at data/<relpath>; relpath uses [A-Za-z0-9._-] and '/' only.
 * The handle is freed by pmu_bag_file_close(). */
int pmu_bag_file_open(struct pmu_bag *bag, const char *relpath, struct pmu_bag_file **out);
int pmu_bag_file_write(struct pmu_bag_file *f, const void *buf, size_t len);
int pmu_bag_file_close(struct pmu_bag_file *f);

/* Whole payload file in one call. */
int pmu_bag_put(struct pmu_bag *bag, const char *relpath, const void *buf, size_t len);

/* Staging directory path (for diagnostics and tests). */
const char *pmu_bag_staging_path(const struct pmu_bag *bag);

/* Write the tag files, make durable, move into place; frees bag. */
int pmu_bag_finalize(struct pmu_bag *bag);
/* Remove everything staged; frees bag.  Safe on NULL. */
void pmu_bag_abort(struct pmu_bag *bag);

/*
 * Whether what is at dirfd/name may be replaced by --force: 0 when it is a
 * pmu bundle (or nothing is there), PMU_ERR_INVAL with a detail naming shown
 * and the reason when it is not.  A bundle is a directory whose top holds
 * bagit.txt, a bag-info.txt with a PMU-Spec-Version line and nothing but the
 * bag's entries (bagit.txt, bag-info.txt, manifest-sha256.txt,
 * tagmanifest-sha256.txt, data/), or a regular file that is a tar, tar.gz or
 * tar.zst archive (by content) whose single top directory is such a bag.  A
 * symbolic link is never replaced, nor followed.  Nothing is modified.
 */
int pmu_bag_replaceable(int dirfd, const char *name, const char *shown);

/* Remove stale staging areas for final_path whose writer is gone; returns
 * how many were removed or a negative error. */
int pmu_bag_clean_stale(const char *final_path);

/* True when relpath is a name the spec allows inside a bag. */
bool pmu_bag_name_ok(const char *relpath);

#endif
