#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bundle_archive.h"
#include "bag.h"
#include "error.h"
#include "sha256.h"
#include "util.h"

#define STAGING_TAG ".pmu-staging."
#define MARKER ".pmu-staging"
#define WBUF (64u << 10)

struct entry {
	char *path; /* "data/..." */
	char hex[PMU_SHA256_HEX];
	uint64_t size;
};

struct pmu_bag {
	char *final_path;
	char *parent;      /* directory of final_path */
	char *base;        /* basename of final_path */
	char *staging;     /* basename of the staging dir inside parent */
	char *part;        /* basename of the temporary archive inside parent */
	int parentfd, stagefd;
	enum pmu_bundle_form form;
	struct pmu_bag_opts opts;
	struct entry *ents;
	size_t nents, cap;
	int open_files;
};

struct pmu_bag_file {
	struct pmu_bag *bag;
	char *path;
	int fd;
	struct pmu_sha256 sha;
	uint64_t size;
	size_t blen;
	char *buf;
};

enum pmu_bundle_form pmu_bundle_form_of(const char *path)
{
	size_t n = strlen(path);
	const struct { const char *sfx; enum pmu_bundle_form f; } t[] = {
		{ ".tar.gz", PMU_FORM_TAR_GZ }, { ".tgz", PMU_FORM_TAR_GZ },
		{ ".tar.zst", PMU_FORM_TAR_ZST }, { ".tar", PMU_FORM_TAR },
	};

	for (size_t i = 0; i < PMU_ARRAY_SIZE(t); i++) {
		size_t m = strlen(t[i].sfx);

		if (n > m && !strcmp(path + n - m, t[i].sfx))
			return t[i].f;
	}
	return PMU_FORM_DIR;
}

bool pmu_bag_name_ok(const char *p)
{
	const char *c = p;

	if (!*p || *p == '/' || strlen(p) > 1024)
		return false;
	for (; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' || *c == '-' || *c == '/'))
			return false;
	/* components: non-empty, not "." or "..", not hidden */
	for (c = p; *c;) {
		const char *e = strchr(c, '/');
		size_t n = e ? (size_t)(e - c) : strlen(c);

		if (n == 0 || c[0] == '.')
			return false;
		c += n;
		if (*c == '/') {
			c++;
			if (!*c)
				return false;
		}
	}
	return true;
}

static void bag_free(struct pmu_bag *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nents; i++)
		free(b->ents[i].path);
	free(b->ents);
	if (b->stagefd >= 0)
		close(b->stagefd);
	if (b->parentfd >= 0)
		close(b->parentfd);
	free(b->final_path);
	free(b->parent);
	free(b->base);
	free(b->staging);
	free(b->part);
	free(b);
}

static int split_path(const char *path, char **parent, char **base)
{
	char *a = strdup(path), *b = strdup(path);
	size_t n;

	if (!a || !b) {
		free(a);
		free(b);
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	}
	/* strip trailing slashes so "run.bundle/" names run.bundle */
	for (n = strlen(a); n > 1 && a[n - 1] == '/'; n--)
		a[n - 1] = b[n - 1] = '\0';
	*parent = strdup(dirname(a));
	*base = strdup(basename(b));
	free(a);
	free(b);
	if (!*parent || !*base)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	if (!strcmp(*base, "/") || !strcmp(*base, ".") || !strcmp(*base, ".."))
		return pmu_error(PMU_ERR_INVAL, "'%s' cannot name a bundle", path);
	return 0;
}

/* A staging area is stale when its marker names a writer that is gone: another
 * boot, a dead pid, or a pid reused by a process that started later. */
static bool staging_is_stale(int parentfd, const char *name)
{
	char *txt = NULL, path[512], boot[64] = "", mboot[64] = "";
	unsigned long long mstart = 0, start = 0;
	int pid = 0;
	uint64_t ticks;
	bool stale = false;

	snprintf(path, sizeof(path), "%s/" MARKER, name);
	if (pmu_read_file(parentfd, path, 4096, &txt, NULL) < 0) {
		/* No readable marker: only a directory whose owner pid is dead
		 * (from its name) is taken for stale; anything else is left. */
		const char *p = strstr(name, STAGING_TAG);

		if (!p)
			return false;
		pid = atoi(p + strlen(STAGING_TAG));
		return pid > 0 && kill(pid, 0) < 0 && errno == ESRCH;
	}
	if (sscanf(txt, "pid %d\nstart %llu\nboot %63s", &pid, &mstart, mboot) != 3)
		stale = false;
	else if (pmu_boot_id(boot) == 0 && strcmp(boot, mboot))
		stale = true;
	else if (pmu_pid_starttime(pid, &ticks) < 0)
		stale = true;
	else {
		start = ticks;
		stale = start != mstart;
	}
	free(txt);
	return stale;
}

static int clean_stale_at(int parentfd, const char *base)
{
	char prefix[512];
	size_t plen;
	DIR *d;
	int fd, removed = 0, err = 0;

	snprintf(prefix, sizeof(prefix), ".%s" STAGING_TAG, base);
	plen = strlen(prefix);
	fd = dup(parentfd);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return pmu_error(PMU_ERR_IO, "cannot list directory: %s", strerror(errno));
	}
	rewinddir(d);
	for (struct dirent *e; !err && (e = readdir(d));) {
		char dirname_[512];
		size_t n = strlen(e->d_name);

		if (strncmp(e->d_name, prefix, plen))
			continue;
		if (n > 5 && !strcmp(e->d_name + n - 5, ".part")) {
			/* temporary archive: stale with its staging directory */
			snprintf(dirname_, sizeof(dirname_), "%.*s", (int)(n - 5), e->d_name);
			struct stat st;
			if (fstatat(parentfd, dirname_, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
			    staging_is_stale(parentfd, dirname_)) {
				if (unlinkat(parentfd, e->d_name, 0) == 0)
					removed++;
			}
			continue;
		}
		if (staging_is_stale(parentfd, e->d_name)) {
			err = pmu_rm_rf(parentfd, e->d_name);
			if (!err)
				removed++;
		}
	}
	closedir(d);
	return err ? err : removed;
}

int pmu_bag_clean_stale(const char *final_path)
{
	char *parent = NULL, *base = NULL;
	int fd, err = split_path(final_path, &parent, &base);

	if (!err) {
		fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			err = pmu_error(PMU_ERR_IO, "cannot open directory '%s': %s", parent,
					strerror(errno));
		else {
			err = clean_stale_at(fd, base);
			close(fd);
		}
	}
	free(parent);
	free(base);
	return err;
}

int pmu_bag_open(struct pmu_bag **out, const char *final_path, const struct pmu_bag_opts *opts)
{
	struct pmu_bag *b = calloc(1, sizeof(*b));
	char marker[256], boot[64] = "unknown";
	uint64_t ticks = 0;
	struct stat st;
	int err;

	if (!b)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	b->parentfd = b->stagefd = -1;
	b->opts = *opts;
	b->form = pmu_bundle_form_of(final_path);
	b->final_path = strdup(final_path);
	if (!b->final_path) {
		bag_free(b);
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	}
	err = split_path(final_path, &b->parent, &b->base);
	if (err)
		goto fail;
	if (strlen(b->base) > 200) {
		err = pmu_error(PMU_ERR_INVAL, "bundle name '%s' is too long", b->base);
		goto fail;
	}
	b->parentfd = open(b->parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (b->parentfd < 0) {
		err = pmu_error(PMU_ERR_IO, "cannot open directory '%s': %s", b->parent,
				strerror(errno));
		goto fail;
	}
	if (fstatat(b->parentfd, b->base, &st, AT_SYMLINK_NOFOLLOW) == 0 && !opts->force) {
		err = pmu_error(PMU_ERR_EXISTS, "'%s' already exists (use --force to replace it)",
				final_path);
		goto fail;
	}
	err = clean_stale_at(b->parentfd, b->base);
	if (err < 0)
		goto fail;
	if (asprintf(&b->staging, ".%s" STAGING_TAG "%d", b->base, (int)getpid()) < 0 ||
	    asprintf(&b->part, "%s.part", b->staging) < 0) {
		b->staging = b->part = NULL;
		err = pmu_error(PMU_ERR_NOMEM, "out of memory");
		goto fail;
	}
	if (mkdirat(b->parentfd, b->staging, 0755) < 0) {
		err = pmu_error(PMU_ERR_IO, "cannot create staging directory '%s/%s': %s",
				b->parent, b->staging, strerror(errno));
		goto fail;
	}
	b->stagefd = openat(b->parentfd, b->staging, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (b->stagefd < 0) {
		err = pmu_error(PMU_ERR_IO, "cannot open staging directory: %s", strerror(errno));
		goto fail_rm;
	}
	pmu_boot_id(boot);
	pmu_pid_starttime((int)getpid(), &ticks);
	snprintf(marker, sizeof(marker), "pid %d\nstart %llu\nboot %s\n", (int)getpid(),
		 (unsigned long long)ticks, boot);
	{
		int fd = openat(b->stagefd, MARKER, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

		if (fd < 0) {
			err = pmu_error(PMU_ERR_IO, "cannot write staging marker: %s", strerror(errno));
			goto fail_rm;
		}
		err = pmu_write_all(fd, marker, strlen(marker), MARKER);
		close(fd);
		if (err)
			goto fail_rm;
	}
	if (mkdirat(b->stagefd, "data", 0755) < 0) {
		err = pmu_error(PMU_ERR_IO, "cannot create payload directory: %s", strerror(errno));
		goto fail_rm;
	}
	*out = b;
	return 0;
fail_rm:
	pmu_rm_rf(b->parentfd, b->staging);
fail:
	bag_free(b);
	return err;
}

const char *pmu_bag_staging_path(const struct pmu_bag *b)
{
	static _Thread_local char path[4096];

	snprintf(path, sizeof(path), "%s/%s", b->parent, b->staging);
	return path;
}

static int add_entry(struct pmu_bag *b, const char *path, const char *hex, uint64_t size)
{
	if (b->nents == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 16;
		struct entry *e = realloc(b->ents, cap * sizeof(*e));

		if (!e)
			return pmu_error(PMU_ERR_NOMEM, "out of memory");
		b->ents = e;
		b->cap = cap;
	}
	b->ents[b->nents].path = strdup(path);
	if (!b->ents[b->nents].path)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	memcpy(b->ents[b->nents].hex, hex, PMU_SHA256_HEX);
	b->ents[b->nents].size = size;
	b->nents++;
	return 0;
}

int pmu_bag_file_open(struct pmu_bag *b, const char *relpath, struct pmu_bag_file **out)
{
	struct pmu_bag_file *f;
	char *slash;
	int err;

	if (!pmu_bag_name_ok(relpath))
		return pmu_error(PMU_ERR_INVAL, "'%s' is not an allowed payload name", relpath);
	f = calloc(1, sizeof(*f));
	if (!f || asprintf(&f->path, "data/%s", relpath) < 0) {
		free(f);
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	}
	f->bag = b;
	f->fd = -1;
	slash = strrchr(f->path, '/');
	*slash = '\0';
	err = pmu_mkdir_p(b->stagefd, f->path);
	*slash = '/';
	if (err)
		goto fail;
	f->buf = malloc(WBUF);
	if (!f->buf) {
		err = pmu_error(PMU_ERR_NOMEM, "out of memory");
		goto fail;
	}
	f->fd = openat(b->stagefd, f->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		       0644);
	if (f->fd < 0) {
		err = pmu_error(errno == EEXIST ? PMU_ERR_EXISTS : PMU_ERR_IO,
				"cannot create '%s': %s", f->path, strerror(errno));
		goto fail;
	}
	err = pmu_sha256_init(&f->sha);
	if (err)
		goto fail;
	b->open_files++;
	*out = f;
	return 0;
fail:
	if (f->fd >= 0)
		close(f->fd);
	free(f->buf);
	free(f->path);
	free(f);
	return err;
}

static int file_flush(struct pmu_bag_file *f)
{
	int err = pmu_write_all(f->fd, f->buf, f->blen, f->path);

	f->blen = 0;
	return err;
}

int pmu_bag_file_write(struct pmu_bag_file *f, const void *buf, size_t len)
{
	int err = pmu_sha256_update(&f->sha, buf, len);

	if (err)
		return err;
	f->size += len;
	if (len >= WBUF) {
		err = file_flush(f);
		return err ? err : pmu_write_all(f->fd, buf, len, f->path);
	}
	if (f->blen + len > WBUF && (err = file_flush(f)))
		return err;
	memcpy(f->buf + f->blen, buf, len);
	f->blen += len;
	return 0;
}

int pmu_bag_file_close(struct pmu_bag_file *f)
{
	char hex[PMU_SHA256_HEX];
	int err = file_flush(f);

	if (!err && fsync(f->fd) < 0)
		err = pmu_error(PMU_ERR_IO, "cannot fsync '%s': %s", f->path, strerror(errno));
	if (close(f->fd) < 0 && !err)
		err = pmu_error(PMU_ERR_IO, "cannot close '%s': %s", f->path, strerror(errno));
	if (!err)
		err = pmu_sha256_final_hex(&f->sha, hex);
	else
		pmu_sha256_release(&f->sha);
	if (!err)
		err = add_entry(f->bag, f->path, hex, f->size);
	f->bag->open_files--;
	free(f->buf);
	free(f->path);
	free(f);
	return err;
}

int pmu_bag_put(struct pmu_bag *b, const char *relpath, const void *buf, size_t len)
{
	struct pmu_bag_file *f;
	int err = pmu_bag_file_open(b, relpath, &f);

	if (err)
		return err;
	err = pmu_bag_file_write(f, buf, len);
	if (err) {
		pmu_bag_file_close(f);
		return err;
	}
	return pmu_bag_file_close(f);
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->path, ((const struct entry *)b)->path);
}

/* Write a tag file at the bag's top, fsync it, and hash it. */
static int put_tag(struct pmu_bag *b, const char *name, const char *txt, char hex[PMU_SHA256_HEX])
{
	int fd = openat(b->stagefd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	int err;

	if (fd < 0)
		return pmu_error(PMU_ERR_IO, "cannot create '%s': %s", name, strerror(errno));
	err = pmu_write_all(fd, txt, strlen(txt), name);
	if (!err && fsync(fd) < 0)
		err = pmu_error(PMU_ERR_IO, "cannot fsync '%s': %s", name, strerror(errno));
	close(fd);
	if (!err && hex)
		err = pmu_sha256_buf(txt, strlen(txt), hex);
	return err;
}

/* fsync every directory of the staged tree, deepest last is fine: each
 * directory's entries are durable once the directory itself is synced. */
static int sync_dirs(int atfd, const char *path, int depth)
{
	int fd, err = 0;
	DIR *d;

	if (depth > 64)
		return pmu_error(PMU_ERR_LIMIT, "directory nesting too deep");
	fd = openat(atfd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return pmu_error(PMU_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return pmu_error(PMU_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
	}
	for (struct dirent *e; !err && (e = readdir(d));)
		if (e->d_type == DT_DIR && strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			err = sync_dirs(fd, e->d_name, depth + 1);
	if (!err && fsync(dirfd(d)) < 0)
		err = pmu_error(PMU_ERR_IO, "cannot fsync '%s': %s", path, strerror(errno));
	closedir(d);
	return err;
}

static int64_t bag_date(const struct pmu_bag *b)
{
	const char *sde = getenv("SOURCE_DATE_EPOCH");

	if (b->opts.date >= 0)
		return b->opts.date;
	if (sde && *sde)
		return strtoll(sde, NULL, 10);
	return (int64_t)time(NULL);
}

static int write_tags(struct pmu_bag *b)
{
	struct pmu_buf man, info;
	char hex_bagit[PMU_SHA256_HEX], hex_info[PMU_SHA256_HEX], hex_man[PMU_SHA256_HEX];
	char date[32], *tag = NULL;
	uint64_t bytes = 0;
	time_t t = (time_t)bag_date(b);
	struct tm tm;
	int err = 0;

	qsort(b->ents, b->nents, sizeof(*b->ents), cmp_entry);
	pmu_buf_init(&man);
	pmu_buf_init(&info);
	for (size_t i = 0; !err && i < b->nents; i++) {
		bytes += b->ents[i].size;
		err = pmu_buf_addf(&man, "%s  %s\n", b->ents[i].hex, b->ents[i].path);
	}
	gmtime_r(&t, &tm);
	strftime(date, sizeof(date), "%Y-%m-%d", &tm);
	if (!err)
		err = pmu_buf_addf(&info,
				   "Bag-Software-Agent: %s\nBagging-Date: %s\nPayload-Oxum: %llu.%zu\n"
				   "PMU-Spec-Version: %s\n",
				   b->opts.agent ? b->opts.agent : "pmu " PMU_VERSION, date,
				   (unsigned long long)bytes, b->nents,
				   b->opts.spec ? b->opts.spec : "1.0");
	if (!err)
		err = put_tag(b, "bagit.txt", "BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n",
			      hex_bagit);
	if (!err)
		err = put_tag(b, "bag-info.txt", info.p, hex_info);
	if (!err)
		err = put_tag(b, "manifest-sha256.txt", man.len ? man.p : "", hex_man);
	/* The tag manifest is written last: a bag without it is incomplete. */
	if (!err && asprintf(&tag, "%s  bag-info.txt\n%s  bagit.txt\n%s  manifest-sha256.txt\n",
			     hex_info, hex_bagit, hex_man) < 0) {
		tag = NULL;
		err = pmu_error(PMU_ERR_NOMEM, "out of memory");
	}
	if (!err)
		err = put_tag(b, "tagmanifest-sha256.txt", tag, NULL);
	free(tag);
	pmu_buf_release(&man);
	pmu_buf_release(&info);
	return err;
}

static int move_into_place(struct pmu_bag *b, const char *from)
{
	struct stat st;

	if (fstatat(b->parentfd, b->base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!b->opts.force)
			return pmu_error(PMU_ERR_EXISTS, "'%s' already exists (use --force to replace it)",
					 b->final_path);
		/* Swap atomically (a file or a directory, either way), then
		 * remove the old bundle from the staging name: at no moment is
		 * there nothing at the final path. */
		if (renameat2(b->parentfd, from, b->parentfd, b->base, RENAME_EXCHANGE) < 0)
			return pmu_error(PMU_ERR_IO, "cannot replace '%s': %s", b->final_path,
					 strerror(errno));
		return pmu_rm_rf(b->parentfd, from);
	}
	if (renameat2(b->parentfd, from, b->parentfd, b->base, RENAME_NOREPLACE) < 0)
		return pmu_error(errno == EEXIST ? PMU_ERR_EXISTS : PMU_ERR_IO,
				 "cannot move bundle into '%s': %s", b->final_path, strerror(errno));
	return 0;
}

int pmu_bag_finalize(struct pmu_bag *b)
{
	int err;

	if (b->open_files) {
		err = pmu_error(PMU_ERR_INVAL, "%d payload file(s) still open", b->open_files);
		pmu_bag_abort(b);
		return err;
	}
	err = write_tags(b);
	if (!err && unlinkat(b->stagefd, MARKER, 0) < 0)
		err = pmu_error(PMU_ERR_IO, "cannot remove staging marker: %s", strerror(errno));
	if (!err)
		err = sync_dirs(b->parentfd, b->staging, 0);
	if (err)
		goto fail;
	if (b->form == PMU_FORM_DIR) {
		err = move_into_place(b, b->staging);
	} else {
		char *top = strdup(b->base);
		int fd;

		if (!top) {
			err = pmu_error(PMU_ERR_NOMEM, "out of memory");
			goto fail;
		}
		/* "run.bundle.tar.gz" holds "run.bundle/" */
		static const char *const sfx[] = { ".tar.gz", ".tgz", ".tar.zst", ".tar" };

		for (size_t i = 0; i < PMU_ARRAY_SIZE(sfx); i++) {
			size_t n = strlen(top), m = strlen(sfx[i]);

			if (n > m && !strcmp(top + n - m, sfx[i])) {
				top[n - m] = '\0';
				break;
			}
		}
		fd = openat(b->parentfd, b->part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			free(top);
			err = pmu_error(PMU_ERR_IO, "cannot create '%s': %s", b->part, strerror(errno));
			goto fail;
		}
		err = pmu_archive_pack(b->stagefd, top, fd, b->form, bag_date(b) / 86400 * 86400);
		free(top);
		if (!err && fsync(fd) < 0)
			err = pmu_error(PMU_ERR_IO, "cannot fsync '%s': %s", b->part, strerror(errno));
		close(fd);
		if (!err)
			err = move_into_place(b, b->part);
		if (!err)
			err = pmu_rm_rf(b->parentfd, b->staging);
	}
	if (!err && fsync(b->parentfd) < 0)
		err = pmu_error(PMU_ERR_IO, "cannot fsync '%s': %s", b->parent, strerror(errno));
	if (err)
		goto fail;
	bag_free(b);
	return 0;
fail:
	pmu_bag_abort(b);
	return err;
}

void pmu_bag_abort(struct pmu_bag *b)
{
	if (!b)
		return;
	if (b->parentfd >= 0) {
		unlinkat(b->parentfd, b->part ? b->part : "", 0);
		if (b->staging)
			pmu_rm_rf(b->parentfd, b->staging);
	}
	bag_free(b);
}
