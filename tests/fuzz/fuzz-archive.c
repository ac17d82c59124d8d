/*
 * fuzz-archive: pmu_archive_extract() (lib/bundle_archive.c) on untrusted
 * archives (tar, tar.gz, tar.zst).
 *
 * The input is written to a file in a private work directory and extracted
 * under <work>/x with small limits so every run stays fast.  Asserted:
 *   - on success: the returned tmpdir is a fresh directory (mode 0700)
 *     directly under <work>/x holding only its owner marker and
 *     PMU_ARCHIVE_SUBDIR/, *top is one safe path component naming the one
 *     directory inside that, and pmu_archive_remove() removes the whole
 *     tree again (what pmu_bundle_close() does);
 *   - on failure: nothing is returned, *check is -1 or an ARCHIVE-* check,
 *     and nothing is left behind under <work>/x;
 *   - nothing escapes: <work>/x is empty after each run, <work> holds only
 *     the input file and x/, and the fuzzer's working directory gains no
 *     entries (counted, which is cheap).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle_archive.h"
#include "checks.h"
#include "error.h"
#include "util.h"

static char work[4096], xbase[4200], input[4200];
static long cwd_entries = -1;
static struct pmu_archive_limits lim;

__attribute__((noreturn)) static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz-archive: FAIL: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	abort();
}

static long count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	long n = 0;

	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void cleanup(void)
{
	if (work[0])
		pmu_rm_rf(AT_FDCWD, work);
}

static void setup(void)
{
	const char *t = getenv("TMPDIR");

	snprintf(work, sizeof(work), "%s/pmu-fuzz-archive.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(work))
		fail("cannot create the work directory", work);
	snprintf(xbase, sizeof(xbase), "%s/x", work);
	snprintf(input, sizeof(input), "%s/input", work);
	if (mkdir(xbase, 0700) < 0)
		fail("cannot create", xbase);
	atexit(cleanup);
	cwd_entries = count_entries(".");

	pmu_archive_default_limits(&lim);
	lim.max_entries = 512;
	lim.max_entry_bytes = 8u << 20;
	lim.max_total_bytes = 8u << 20;
	lim.ratio_min_bytes = 1u << 20;
	lim.max_ratio = 200;
	/* max_path_len stays at the default (1024): deep paths are part of the attack surface */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *tmpdir = (char *)0x1, *top = (char *)0x1;
	int check = -2, err, fd;

	if (!work[0])
		setup();
	fd = open(input, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || pmu_write_all(fd, data, size, "input") || close(fd) < 0)
		fail("cannot write the input file", input);

	err = pmu_archive_extract(input, xbase, &lim, &tmpdir, &top, &check);
	if (err) {
		if (tmpdir || top)
			fail("failure returned a tmpdir or top", NULL);
		if (check != -1 && (check < PMU_CHECK_ARCHIVE_FORMAT || check > PMU_CHECK_ARCHIVE_LAYOUT))
			fail("failure with a check that is not an ARCHIVE-* check", pmu_error_detail());
		if (err == PMU_ERR_CORRUPT && check < 0)
			fail("PMU_ERR_CORRUPT without a check", pmu_error_detail());
	} else {
		struct stat st;
		char *root;
		size_t xl = strlen(xbase);

		if (!tmpdir || !top)
			fail("success without tmpdir or top", NULL);
		if (strncmp(tmpdir, xbase, xl) || tmpdir[xl] != '/' || strchr(tmpdir + xl + 1, '/'))
			fail("tmpdir is not directly under the base", tmpdir);
		if (lstat(tmpdir, &st) < 0 || !S_ISDIR(st.st_mode) || (st.st_mode & 07777) != 0700)
			fail("tmpdir is not a private directory", tmpdir);
		if (!top[0] || strchr(top, '/') || !strcmp(top, ".") || !strcmp(top, ".."))
			fail("top is not a single safe component", top);
		if (asprintf(&root, "%s/" PMU_ARCHIVE_SUBDIR "/%s", tmpdir, top) < 0)
			abort();
		if (lstat(root, &st) < 0 || !S_ISDIR(st.st_mode))
			fail("top is not a directory inside tmpdir", root);
		free(root);
		if (count_entries(tmpdir) != 2)
			fail("tmpdir holds more than its marker and the extraction directory", tmpdir);
		if (asprintf(&root, "%s/" PMU_ARCHIVE_SUBDIR, tmpdir) < 0)
			abort();
		if (count_entries(root) != 1)
			fail("the extraction directory holds more than the top directory", root);
		free(root);
		if (pmu_archive_remove(tmpdir))
			fail("pmu_archive_remove cannot remove the extracted tree", pmu_error_detail());
		if (lstat(tmpdir, &st) == 0)
			fail("extracted tree still exists after pmu_archive_remove", tmpdir);
		free(tmpdir);
		free(top);
	}
	if (count_entries(xbase) != 0) {
		pmu_rm_rf(AT_FDCWD, xbase);
		fail("something was left behind under the extraction base", xbase);
	}
	if (count_entries(work) != 2)
		fail("something appeared in the work directory", work);
	if (count_entries(".") != cwd_entries)
		fail("the working directory gained or lost entries", NULL);
	return 0;
}
