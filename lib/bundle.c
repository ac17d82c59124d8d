#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle.h"
#include "checks.h"
#include "error.h"
#include "jsonbound.h"
#include "util.h"

int pmu_bundle_open(struct pmu_bundle *b, const char *path, const char *tmpbase,
		    const struct pmu_archive_limits *limits, int *check)
{
	struct pmu_archive_limits def;
	struct stat st;
	char *top = NULL, *root = NULL;
	int err;

	memset(b, 0, sizeof(*b));
	b->rootfd = -1;
	*check = -1;
	if (stat(path, &st) < 0)
		return pmu_error(errno == ENOENT ? PMU_ERR_NOTFOUND : PMU_ERR_IO, "cannot open '%s': %s",
				 path, strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		b->rootfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (b->rootfd < 0)
			return pmu_error(PMU_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
		return 0;
	}
	if (!limits) {
		pmu_archive_default_limits(&def);
		limits = &def;
	}
	if (!tmpbase || !*tmpbase)
		tmpbase = getenv("TMPDIR");
	b->archive = true;
	err = pmu_archive_extract(path, tmpbase && *tmpbase ? tmpbase : "/tmp", limits, &b->tmpdir, &top,
				  check);
	if (err)
		return err;
	if (asprintf(&root, "%s/" PMU_ARCHIVE_SUBDIR "/%s", b->tmpdir, top) < 0) {
		err = pmu_error(PMU_ERR_NOMEM, "out of memory");
		goto fail;
	}
	b->rootfd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (b->rootfd < 0) {
		*check = PMU_CHECK_ARCHIVE_LAYOUT;
		err = pmu_error(PMU_ERR_CORRUPT, "archive's top-level entry '%s' is not a directory", top);
		goto fail;
	}
	free(root);
	free(top);
	return 0;
fail:
	free(root);
	free(top);
	pmu_bundle_close(b);
	return err;
}

void pmu_bundle_close(struct pmu_bundle *b)
{
	if (b->rootfd >= 0)
		close(b->rootfd);
	b->rootfd = -1;
	if (b->tmpdir) {
		pmu_archive_remove(b->tmpdir);
		free(b->tmpdir);
		b->tmpdir = NULL;
	}
}

int pmu_bundle_read_doc(const struct pmu_bundle *b, const char *name, json_t **out)
{
	struct pmu_json_limits lim = pmu_doc_limits(-1);
	char path[256], why[512];
	int fd, err;

	*out = NULL;
	snprintf(path, sizeof(path), "data/%s", name);
	fd = openat(b->rootfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return pmu_error(errno == ENOENT ? PMU_ERR_NOTFOUND : PMU_ERR_IO, "cannot open '%s': %s", path,
				 strerror(errno));
	err = pmu_json_load_fd(fd, &lim, out, NULL);
	close(fd);
	if (err) {
		snprintf(why, sizeof(why), "%s", pmu_error_detail());
		return pmu_error(err, "'%s' is not a JSON object: %s", path, why);
	}
	if (!json_is_object(*out)) {
		json_decref(*out);
		*out = NULL;
		return pmu_error(PMU_ERR_CORRUPT, "'%s' is not a JSON object", path);
	}
	return 0;
}
