/*
 * The bag writer: atomic finalize, refusal to replace, --force, abort and
 * crash leave nothing at the final path, stale staging is cleaned, names
 * are restricted, archive forms are reproducible; --force replaces only a
 * bundle; modes are private whatever the umask.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bag.h"
#include "error.h"
#include "sha256.h"
#include "tap.h"
#include "util.h"

static char dir[] = "/tmp/t-bag.XXXXXX";
static char path[512];

static const struct pmu_bag_opts opts = { .agent = "t-bag", .spec = "1.0", .date = 0 };

static int exists(const char *p)
{
	struct stat st;

	return lstat(p, &st) == 0;
}

static int count_staging(void)
{
	DIR *d = opendir(dir);
	int n = 0;

	for (struct dirent *e; d && (e = readdir(d));)
		n += strstr(e->d_name, ".pmu-staging.") != NULL;
	if (d)
		closedir(d);
	return n;
}

static int write_bag(const char *p, const struct pmu_bag_opts *o, const char *content)
{
	struct pmu_bag *b;
	int err = pmu_bag_open(&b, p, o);

	if (err)
		return err;
	err = pmu_bag_put(b, "run.json", content, strlen(content));
	if (!err)
		err = pmu_bag_put(b, "collectors/x/lifecycle.jsonl", "{}\n", 3);
	if (err) {
		pmu_bag_abort(b);
		return err;
	}
	return pmu_bag_finalize(b);
}

static char *slurp(const char *p)
{
	char *s = NULL;

	if (pmu_read_file(AT_FDCWD, p, 1 << 20, &s, NULL))
		return NULL;
	return s;
}

static mode_t want_f, want_d;
static int bad_modes;

static int check_mode(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if ((st->st_mode & 07777) != (type == FTW_D ? want_d : want_f)) {
		printf("#   %s has mode %04o\n", p, (unsigned)(st->st_mode & 07777));
		bad_modes++;
	}
	return 0;
}

/* Every file of the tree at p has mode f and every directory mode d. */
static int modes_are(const char *p, mode_t f, mode_t d)
{
	want_f = f;
	want_d = d;
	bad_modes = 0;
	if (nftw(p, check_mode, 16, FTW_PHYS) < 0)
		return 0;
	return bad_modes == 0;
}

static void put_file(const char *p, const char *txt)
{
	FILE *f = fopen(p, "w");

	if (f) {
		fputs(txt, f);
		fclose(f);
	}
}

static void modes(void)
{
	struct pmu_bag_opts shared = opts;
	struct pmu_bag *b;
	char p[600];
	struct stat st;
	static const mode_t masks[] = { 022, 0, 077, 0777 };

	for (size_t i = 0; i < sizeof(masks) / sizeof(*masks); i++) {
		umask(masks[i]);
		snprintf(p, sizeof(p), "%s/mode%zu.bundle", dir, i);
		is_int(write_bag(p, &opts, "{}\n"), 0, "bundle written under a umask");
		ok(modes_are(p, 0600, 0700), "umask %03o: files 0600, directories 0700", (unsigned)masks[i]);
		snprintf(p, sizeof(p), "%s/mode%zu.bundle.tar.zst", dir, i);
		is_int(write_bag(p, &opts, "{}\n"), 0, "archive written under a umask");
		ok(stat(p, &st) == 0 && (st.st_mode & 07777) == 0600, "umask %03o: archive 0600",
		   (unsigned)masks[i]);
	}
	umask(077);
	shared.file_mode = 0644;
	snprintf(p, sizeof(p), "%s/shared.bundle", dir);
	is_int(pmu_bag_open(&b, p, &shared), 0, "open a shared bundle");
	ok(stat(pmu_bag_staging_path(b), &st) == 0 && (st.st_mode & 07777) == 0700,
	   "its staging directory is private all the same");
	is_int(pmu_bag_put(b, "a/b/c.json", "{}", 2), 0, "nested payload");
	is_int(pmu_bag_finalize(b), 0, "shared bundle published");
	ok(modes_are(p, 0644, 0755), "file_mode 0644: files 0644, directories 0755");
	shared.file_mode = 0640;
	snprintf(p, sizeof(p), "%s/shared.bundle.tar.gz", dir);
	is_int(write_bag(p, &shared, "{}\n"), 0, "shared archive written");
	ok(stat(p, &st) == 0 && (st.st_mode & 07777) == 0640, "file_mode 0640: archive 0640");
	umask(022);
	ok(pmu_bag_file_mode_ok(0600) && pmu_bag_file_mode_ok(0666) && pmu_bag_file_mode_ok(0640),
	   "read and write bits with 0600 are file modes");
	ok(!pmu_bag_file_mode_ok(0644 | 0100) && !pmu_bag_file_mode_ok(0400) &&
		   !pmu_bag_file_mode_ok(04600) && !pmu_bag_file_mode_ok(01600) && !pmu_bag_file_mode_ok(0200),
	   "x, setuid, sticky or missing owner bits are not");
	shared.file_mode = 0755;
	ok(pmu_bag_open(&b, p, &shared) == PMU_ERR_INVAL, "the writer refuses file_mode 0755");
}

static void s_check(const char *p, const char *want)
{
	char *s = slurp(p);

	is_str(s, want, "what was there is intact");
	free(s);
}

/* --force over what is not a bundle: refused, and the thing is untouched. */
static void refused(const char *p, const char *what, const char *keep, const char *content)
{
	struct pmu_bag_opts force = opts;

	force.force = true;
	is_int(write_bag(p, &force, "{}\n"), PMU_ERR_INVAL, what);
	ok(strstr(pmu_error_detail(), "refusing to replace '") != NULL &&
		   strstr(pmu_error_detail(), p) != NULL,
	   "the message names the path: %s", pmu_error_detail());
	s_check(keep, content);
	is_int(count_staging(), 0, "and nothing is left beside it");
}

static void force_only_bundles(void)
{
	struct pmu_bag_opts force = opts;
	struct pmu_bag *b;
	char p[600], f[800], t[700];
	int parent;

	force.force = true;
	snprintf(p, sizeof(p), "%s/user", dir);
	mkdir(p, 0755);
	snprintf(f, sizeof(f), "%s/important.txt", p);
	put_file(f, "x\n");
	refused(p, "a directory of user files is refused", f, "x\n");
	snprintf(t, sizeof(t), "%s/", p);
	refused(t, "with a trailing slash too", f, "x\n");
	snprintf(t, sizeof(t), "%s/bagit.txt", p);
	put_file(t, "BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n");
	snprintf(t, sizeof(t), "%s/bag-info.txt", p);
	put_file(t, "PMU-Spec-Version: 1.2\n");
	refused(p, "planted bag files beside a user file do not make a bundle", f, "x\n");
	unlink(f);
	put_file(t, "Bag-Software-Agent: bagit.py\n");
	refused(p, "a bag without PMU-Spec-Version is not a pmu bundle", t, "Bag-Software-Agent: bagit.py\n");
	snprintf(t, sizeof(t), "%s/bagit.txt", p);
	unlink(t);
	snprintf(t, sizeof(t), "%s/bag-info.txt", p);
	unlink(t);
	is_int(write_bag(p, &force, "{}\n"), PMU_ERR_INVAL, "an empty directory is not a bundle");
	ok(strstr(pmu_error_detail(), "no bagit.txt") != NULL, "and the reason says so");
	rmdir(p);

	snprintf(p, sizeof(p), "%s/notes.txt", dir);
	put_file(p, "my notes\n");
	refused(p, "a regular file that is no archive is refused", p, "my notes\n");
	unlink(p);

	snprintf(t, sizeof(t), "%s/target.bundle", dir);
	is_int(write_bag(t, &opts, "{\"v\":7}\n"), 0, "a bundle to link to");
	snprintf(p, sizeof(p), "%s/link.bundle", dir);
	if (symlink("target.bundle", p) < 0)
		ok(0, "symlink: %s", strerror(errno));
	snprintf(f, sizeof(f), "%s/data/run.json", t);
	refused(p, "a symbolic link, even to a bundle, is refused", f, "{\"v\":7}\n");
	ok(readlink(p, f, sizeof(f)) > 0, "the link is still there");
	unlink(p);

	/* A real bundle, archive or directory, is what --force replaces. */
	parent = open(dir, O_RDONLY | O_DIRECTORY);
	snprintf(p, sizeof(p), "%s/a.bundle.tar.gz", dir);
	is_int(pmu_bag_replaceable(parent, "a.bundle.tar.gz", p), 0, "a .tar.gz bundle is replaceable");
	snprintf(p, sizeof(p), "%s/z.bundle.tar.zst", dir);
	is_int(write_bag(p, &opts, "{}\n"), 0, "a .tar.zst bundle");
	is_int(pmu_bag_replaceable(parent, "z.bundle.tar.zst", "x"), 0, "is replaceable");
	is_int(pmu_bag_replaceable(parent, "target.bundle", "x"), 0, "and a directory bundle");
	is_int(pmu_bag_replaceable(parent, "nothing-here", "x"), 0, "nothing at all is nothing to lose");
	snprintf(p, sizeof(p), "%s/x.bundle.tar", dir);
	is_int(write_bag(p, &opts, "{}\n"), 0, "a plain .tar bundle");
	is_int(pmu_bag_replaceable(parent, "x.bundle.tar", "x"), 0, "is replaceable");
	is_int(write_bag(p, &force, "{}\n"), 0, "and replaced");
	close(parent);

	/* Something put at the final path while the bag was staged is checked
	 * on publication, after the swap, and swapped back. */
	snprintf(p, sizeof(p), "%s/late.bundle", dir);
	is_int(pmu_bag_open(&b, p, &force), 0, "forced bag with nothing at its path");
	pmu_bag_put(b, "run.json", "{}", 2);
	mkdir(p, 0755);
	snprintf(f, sizeof(f), "%s/mine.txt", p);
	put_file(f, "late\n");
	is_int(pmu_bag_finalize(b), PMU_ERR_INVAL, "a directory that appeared meanwhile is not replaced");
	s_check(f, "late\n");
	is_int(count_staging(), 0, "nothing left beside it");
	unlink(f);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/late.bundle.tar.zst", dir);
	is_int(pmu_bag_open(&b, p, &force), 0, "forced archive with nothing at its path");
	pmu_bag_put(b, "run.json", "{}", 2);
	put_file(p, "not an archive\n");
	is_int(pmu_bag_finalize(b), PMU_ERR_INVAL, "a file that appeared meanwhile is not replaced");
	s_check(p, "not an archive\n");
	is_int(count_staging(), 0, "no staging or .part left");
	unlink(p);
}

int main(void)
{
	struct pmu_bag *b;
	struct pmu_bag_opts force = opts;
	char p2[600], hex[PMU_SHA256_HEX], hex2[PMU_SHA256_HEX], *s;
	pid_t pid;
	int st;

	force.force = true;
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/run.bundle", dir);

	is_int(write_bag(path, &opts, "{\"v\":1}\n"), 0, "bundle written");
	snprintf(p2, sizeof(p2), "%s/bagit.txt", path);
	s = slurp(p2);
	is_str(s, "BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n", "bagit.txt declaration");
	free(s);
	snprintf(p2, sizeof(p2), "%s/bag-info.txt", path);
	s = slurp(p2);
	ok(s && strstr(s, "Payload-Oxum: 11.2\n") && strstr(s, "Bagging-Date: 1970-01-01\n") &&
		   strstr(s, "PMU-Spec-Version: 1.0\n"),
	   "bag-info.txt has Oxum, date and spec");
	free(s);
	snprintf(p2, sizeof(p2), "%s/manifest-sha256.txt", path);
	s = slurp(p2);
	pmu_sha256_buf("{\"v\":1}\n", 8, hex);
	ok(s && strstr(s, hex) && strstr(s, "  data/run.json\n") &&
		   strstr(s, "data/collectors/x/lifecycle.jsonl\n") < strstr(s, "data/run.json"),
	   "manifest lists payload with digests, sorted");
	free(s);
	snprintf(p2, sizeof(p2), "%s/.pmu-staging", path);
	ok(!exists(p2), "staging marker is not in the bundle");
	is_int(count_staging(), 0, "no staging directory left");

	is_int(write_bag(path, &opts, "{\"v\":2}\n"), PMU_ERR_EXISTS, "existing bundle is not replaced");
	ok(strstr(pmu_error_detail(), "--force") != NULL, "message names --force");
	is_int(count_staging(), 0, "refusal leaves no staging directory");
	is_int(write_bag(path, &force, "{\"v\":2}\n"), 0, "--force replaces it");
	snprintf(p2, sizeof(p2), "%s/data/run.json", path);
	s = slurp(p2);
	is_str(s, "{\"v\":2}\n", "replacement content is in place");
	free(s);
	is_int(count_staging(), 0, "replacement leaves nothing behind");

	snprintf(p2, sizeof(p2), "%s/aborted.bundle", dir);
	is_int(pmu_bag_open(&b, p2, &opts), 0, "open for abort");
	pmu_bag_put(b, "run.json", "x", 1);
	pmu_bag_abort(b);
	ok(!exists(p2) && count_staging() == 0, "abort leaves nothing");

	is_int(pmu_bag_open(&b, p2, &opts), 0, "open for bad names");
	is_int(pmu_bag_put(b, "../escape", "x", 1), PMU_ERR_INVAL, "'..' refused");
	is_int(pmu_bag_put(b, "/abs", "x", 1), PMU_ERR_INVAL, "absolute refused");
	is_int(pmu_bag_put(b, "a b", "x", 1), PMU_ERR_INVAL, "space refused");
	is_int(pmu_bag_put(b, ".hidden", "x", 1), PMU_ERR_INVAL, "hidden component refused");
	is_int(pmu_bag_put(b, "a//b", "x", 1), PMU_ERR_INVAL, "empty component refused");
	is_int(pmu_bag_put(b, "run.json", "x", 1), 0, "plain name accepted");
	is_int(pmu_bag_put(b, "run.json", "y", 1), PMU_ERR_EXISTS, "same payload twice refused");
	pmu_bag_abort(b);

	/* A writer killed mid-run leaves no bundle; the next writer cleans up. */
	snprintf(p2, sizeof(p2), "%s/killed.bundle", dir);
	pid = fork();
	if (pid == 0) {
		if (pmu_bag_open(&b, p2, &opts) == 0) {
			pmu_bag_put(b, "run.json", "partial", 7);
			raise(SIGKILL);
		}
		_exit(1);
	}
	waitpid(pid, &st, 0);
	ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "writer was killed");
	ok(!exists(p2), "killed writer left nothing at the final path");
	is_int(count_staging(), 1, "its staging directory is recognisable");
	is_int(pmu_bag_clean_stale(p2), 1, "stale staging directory is removed");
	is_int(count_staging(), 0, "nothing left after cleaning");

	/* A live writer's staging area is never taken for stale. */
	is_int(pmu_bag_open(&b, p2, &opts), 0, "live writer");
	is_int(pmu_bag_clean_stale(p2), 0, "live staging is kept");
	is_int(count_staging(), 1, "still there");
	pmu_bag_abort(b);

	/* Archive forms: reproducible bytes, nothing left behind. */
	snprintf(p2, sizeof(p2), "%s/a.bundle.tar.gz", dir);
	is_int(write_bag(p2, &opts, "{\"v\":3}\n"), 0, "tar.gz bundle written");
	pmu_sha256_file(AT_FDCWD, p2, hex, NULL);
	is_int(write_bag(p2, &force, "{\"v\":3}\n"), 0, "tar.gz rewritten with --force");
	pmu_sha256_file(AT_FDCWD, p2, hex2, NULL);
	is_str(hex, hex2, "archive is byte-for-byte reproducible");
	is_int(count_staging(), 0, "archive writing leaves no staging");
	is_int(pmu_bundle_form_of("x.tar.zst"), PMU_FORM_TAR_ZST, "form of .tar.zst");
	is_int(pmu_bundle_form_of("x.bundle"), PMU_FORM_DIR, "form of a directory");

	snprintf(p2, sizeof(p2), "%s/nodir/x.bundle", dir);
	ok(write_bag(p2, &opts, "{}") == PMU_ERR_IO, "missing parent directory is an I/O error");
	modes();
	force_only_bundles();
	pmu_rm_rf(AT_FDCWD, dir);
	return done_testing();
}
