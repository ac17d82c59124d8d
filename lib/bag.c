#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "archive_dl.h"
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
	mode_t fmode, dmode;  /* of every file, of every directory once published */
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

bool pmu_bag_file_mode_ok(unsigned mode)
{
	return (mode & ~0666u) == 0 && (mode & 0600u) == 0600u;
}

/* Directories are searchable by every class that may read the files. */
unsigned pmu_bag_dir_mode(unsigned file_mode)
{
	if (!file_mode)
		file_mode = 0600;
	return file_mode | ((file_mode & 0444) >> 2);
}

/* ---- what --force may replace --------------------------------------------- */

/*
 * --force exists to rewrite a bundle, and a mistyped -o must not cost the
 * user a directory of their own files (issue 12): what is at the final path
 * is replaced only when it is recognisably a bundle.  The test is on the
 * shape a writer leaves, not on validity: an invalid or incomplete bundle
 * may be replaced, a directory that merely holds a bagit.txt among other
 * things may not.
 */
static const char *const bag_top[] = {
	"bagit.txt", "bag-info.txt", "manifest-sha256.txt", "tagmanifest-sha256.txt", "data",
};

enum { TOP_BAGIT, TOP_INFO, TOP_DATA = 4 }; /* indexes into bag_top */

#define INFO_MAX (64u << 10) /* bag-info.txt is a few lines */

struct bag_shape {
	bool bagit, spec_line;
	char why[300];  /* set when the thing is not a bundle */
};

__attribute__((format(printf, 2, 3)))
static void not_bag(struct bag_shape *s, const char *fmt, ...)
{
	va_list ap;

	if (s->why[0])
		return; /* the first reason found is the one reported */
	va_start(ap, fmt);
	vsnprintf(s->why, sizeof(s->why), fmt, ap);
	va_end(ap);
}

static int top_index(const char *name, size_t n)
{
	for (size_t i = 0; i < PMU_ARRAY_SIZE(bag_top); i++)
		if (strlen(bag_top[i]) == n && !memcmp(bag_top[i], name, n))
			return (int)i;
	return -1;
}

/* bag-info.txt of a pmu bundle has a "PMU-Spec-Version:" line. */
static bool has_spec_line(const char *p, size_t n)
{
	static const char label[] = "PMU-Spec-Version:";
	const size_t m = sizeof(label) - 1;

	for (size_t i = 0; i + m <= n; i++)
		if ((i == 0 || p[i - 1] == '\n') && !memcmp(p + i, label, m))
			return true;
	return false;
}

/* Read at most INFO_MAX bytes of a regular file, never blocking on a FIFO
 * that was put there after it was looked at. */
static void dir_read_info(int dfd, struct bag_shape *s)
{
	char *buf = malloc(INFO_MAX);
	size_t n = 0;
	struct stat st;
	int fd = openat(dfd, "bag-info.txt", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (!buf || fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		not_bag(s, "cannot read its bag-info.txt: %s", !buf ? "out of memory" :
			fd < 0 ? strerror(errno) : "not a regular file");
		goto out;
	}
	while (n < INFO_MAX) {
		ssize_t k = read(fd, buf + n, INFO_MAX - n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			not_bag(s, "cannot read its bag-info.txt: %s", strerror(errno));
			goto out;
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	s->spec_line = has_spec_line(buf, n);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
}

/* The directory open at fd (which this takes) is a bag at its top. */
static void dir_shape(int fd, struct bag_shape *s)
{
	DIR *d = fdopendir(fd);
	bool info = false;

	if (!d) {
		not_bag(s, "cannot read it: %s", strerror(errno));
		close(fd);
		return;
	}
	errno = 0;
	for (struct dirent *e; !s->why[0] && (e = readdir(d)); errno = 0) {
		int i = top_index(e->d_name, strlen(e->d_name));
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (i < 0) {
			not_bag(s, "it holds '%.200s', which a bundle does not", e->d_name);
			break;
		}
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			not_bag(s, "cannot inspect its '%s': %s", e->d_name, strerror(errno));
		else if (i == TOP_DATA ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
			not_bag(s, "its '%s' is not a %s", e->d_name,
				i == TOP_DATA ? "directory" : "regular file");
		s->bagit |= i == TOP_BAGIT;
		info |= i == TOP_INFO;
	}
	if (errno && !s->why[0])
		not_bag(s, "cannot read it: %s", strerror(errno));
	if (info && !s->why[0])
		dir_read_info(dirfd(d), s);
	closedir(d);
}

/*
 * The archive open at fd is a tar (plain, gzip or zstd: what the spec allows
 * and the extractor reads) whose entries all lie in one top directory that
 * is shaped like a bag.  The whole archive is read, headers only but for
 * bag-info.txt, in constant memory.
 */
static void archive_shape(int fd, struct bag_shape *s)
{
	struct archive *a;
	struct archive_entry *e;
	char top[256] = "", path[1100];
	uint64_t entries = 0;
	int r = ARCHIVE_FATAL;

	if (pmu_archive_load()) {
		not_bag(s, "it cannot be read as an archive: %s", pmu_error_detail());
		return;
	}
	a = archive_read_new();
	if (!a) {
		not_bag(s, "out of memory");
		return;
	}
	archive_read_support_format_tar(a);
	archive_read_support_filter_gzip(a);
	archive_read_support_filter_zstd(a);
	archive_read_support_filter_none(a);
	if (archive_read_open_fd(a, fd, 1 << 16) == ARCHIVE_OK)
		while (!s->why[0] && (r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
			const char *name = archive_entry_pathname(e), *rest, *slash;
			mode_t type = archive_entry_filetype(e);
			size_t n, toplen;
			int i;

			entries++;
			if (!name || (n = strlen(name)) == 0 || n >= sizeof(path)) {
				not_bag(s, "an archive entry has no path or a very long one");
				break;
			}
			memcpy(path, name, n + 1);
			while (n > 1 && path[n - 1] == '/')
				path[--n] = '\0';
			toplen = strcspn(path, "/");
			if (archive_entry_hardlink(e) || (type != AE_IFREG && type != AE_IFDIR)) {
				not_bag(s, "archive entry '%.200s' is neither a file nor a directory", path);
				break;
			}
			if (path[0] == '/' || strstr(path, "//") || toplen >= sizeof(top) ||
			    !strncmp(path, "./", 2) || !strcmp(path, ".") || strstr(path, "/./") ||
			    strstr(path, "/../") || !strncmp(path, "../", 3) || !strcmp(path, "..") ||
			    (n >= 3 && !strcmp(path + n - 3, "/..")) || (n >= 2 && !strcmp(path + n - 2, "/."))) {
				not_bag(s, "archive entry '%.200s' is not a plain relative path", path);
				break;
			}
			if (!top[0]) {
				memcpy(top, path, toplen);
				top[toplen] = '\0';
			} else if (strlen(top) != toplen || strncmp(top, path, toplen)) {
				not_bag(s, "the archive holds '%.200s' beside '%s'", path, top);
				break;
			}
			if (!path[toplen]) {
				if (type != AE_IFDIR)
					not_bag(s, "'%s' at the archive's top is not a directory", path);
				continue;
			}
			rest = path + toplen + 1;
			slash = strchr(rest, '/');
			i = top_index(rest, slash ? (size_t)(slash - rest) : strlen(rest));
			if (i < 0) {
				not_bag(s, "its bag holds '%.200s', which a bundle does not", rest);
				break;
			}
			if (slash) {
				if (i != TOP_DATA)
					not_bag(s, "its bag holds '%.200s', which a bundle does not", rest);
				continue;
			}
			if (i == TOP_DATA ? type != AE_IFDIR : type != AE_IFREG) {
				not_bag(s, "its '%s' is not a %s", rest, i == TOP_DATA ? "directory" : "regular file");
				break;
			}
			s->bagit |= i == TOP_BAGIT;
			if (i == TOP_INFO) {
				char *buf = malloc(INFO_MAX);
				size_t got = 0;
				la_ssize_t k;

				if (!buf) {
					not_bag(s, "out of memory");
					break;
				}
				while (got < INFO_MAX && (k = archive_read_data(a, buf + got, INFO_MAX - got)) > 0)
					got += (size_t)k;
				s->spec_line = has_spec_line(buf, got);
				free(buf);
			}
		}
	if (!s->why[0] && r != ARCHIVE_EOF && !entries)
		not_bag(s, "not a tar, tar.gz or tar.zst archive");
	else if (!s->why[0] && r != ARCHIVE_EOF)
		not_bag(s, "the archive is unreadable: %s",
			archive_error_string(a) ? archive_error_string(a) : "unknown error");
	if (!s->why[0] && !entries)
		not_bag(s, "an empty archive");
	archive_read_free(a);
}

int pmu_bag_replaceable(int dirfd, const char *name, const char *shown)
{
	struct bag_shape s = { 0 };
	struct stat st, fst;
	int fd;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT)
			return 0;
		return pmu_error(PMU_ERR_INVAL, "refusing to replace '%s': cannot inspect it: %s", shown,
				 strerror(errno));
	}
	/* Replacing a link would lose the link, following it would replace a
	 * target the user did not name: neither is asked for by -o. */
	if (S_ISLNK(st.st_mode))
		return pmu_error(PMU_ERR_INVAL,
				 "refusing to replace '%s': it is a symbolic link (name the bundle itself)",
				 shown);
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return pmu_error(PMU_ERR_INVAL,
				 "refusing to replace '%s': it is not a pmu bundle (neither a directory nor a regular file)",
				 shown);
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC |
			      (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0));
	if (fd < 0)
		not_bag(&s, "cannot open it: %s", strerror(errno));
	else if (fstat(fd, &fst) < 0 || fst.st_dev != st.st_dev || fst.st_ino != st.st_ino) {
		not_bag(&s, "it changed while it was inspected");
		close(fd);
	} else if (S_ISDIR(st.st_mode)) {
		dir_shape(fd, &s);
	} else {
		archive_shape(fd, &s);
		close(fd);
	}
	if (!s.why[0] && !s.bagit)
		not_bag(&s, "no bagit.txt");
	if (!s.why[0] && !s.spec_line)
		not_bag(&s, "no bag-info.txt with a PMU-Spec-Version line");
	if (s.why[0])
		return pmu_error(PMU_ERR_INVAL, "refusing to replace '%s': it is not a pmu bundle (%s)",
				 shown, s.why);
	return 0;
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

/* The mode is set explicitly: open(2) and mkdir(2) apply the umask. */
static int set_mode(int fd, mode_t mode, const char *what)
{
	if (fchmod(fd, mode) < 0)
		return pmu_error(PMU_ERR_IO, "cannot set the mode of '%s': %s", what, strerror(errno));
	return 0;
}

/* mkdir -p below the staging directory; each directory made gets the bag's
 * directory mode (nobody else can reach them before publication: the
 * staging directory is 0700). */
static int stage_mkdirs(struct pmu_bag *b, const char *path)
{
	char tmp[4096];
	size_t n = strlen(path);

	if (n >= sizeof(tmp))
		return pmu_error(PMU_ERR_LIMIT, "path too long: '%s'", path);
	memcpy(tmp, path, n + 1);
	for (char *p = tmp + 1;; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;

			*p = '\0';
			if (mkdirat(b->stagefd, tmp, 0700) == 0) {
				if (fchmodat(b->stagefd, tmp, b->dmode, 0) < 0)
					return pmu_error(PMU_ERR_IO, "cannot set the mode of '%s': %s", tmp,
							 strerror(errno));
			} else if (errno != EEXIST) {
				return pmu_error(PMU_ERR_IO, "cannot create directory '%s': %s", tmp,
						 strerror(errno));
			}
			*p = c;
			if (!c)
				break;
		}
	}
	return 0;
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
	if (opts->file_mode && !pmu_bag_file_mode_ok(opts->file_mode)) {
		bag_free(b);
		return pmu_error(PMU_ERR_INVAL,
				 "file mode %04o is not allowed (read and write bits only, with 0600)",
				 opts->file_mode);
	}
	b->fmode = opts->file_mode ? (mode_t)opts->file_mode : 0600;
	b->dmode = (mode_t)pmu_bag_dir_mode(b->fmode);
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
	if (fstatat(b->parentfd, b->base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		/* Refused before anything is run or written; checked again on
		 * the very thing swapped out when the bundle is published. */
		if (!opts->force)
			err = pmu_error(PMU_ERR_EXISTS, "'%s' already exists (use --force to replace it)",
					final_path);
		else
			err = pmu_bag_replaceable(b->parentfd, b->base, final_path);
		if (err)
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
	/* Private while staged, whatever the umask (which may even take the
	 * owner's bits); it gets the bag's directory mode when published. */
	if (mkdirat(b->parentfd, b->staging, 0700) < 0) {
		err = pmu_error(PMU_ERR_IO, "cannot create staging directory '%s/%s': %s",
				b->parent, b->staging, strerror(errno));
		goto fail;
	}
	if (fchmodat(b->parentfd, b->staging, 0700, 0) < 0) {
		err = pmu_error(PMU_ERR_IO, "cannot set the mode of '%s/%s': %s", b->parent,
				b->staging, strerror(errno));
		goto fail_rm;
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
		int fd = openat(b->stagefd, MARKER, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

		if (fd < 0) {
			err = pmu_error(PMU_ERR_IO, "cannot write staging marker: %s", strerror(errno));
			goto fail_rm;
		}
		err = set_mode(fd, 0600, MARKER);
		if (!err)
			err = pmu_write_all(fd, marker, strlen(marker), MARKER);
		close(fd);
		if (err)
			goto fail_rm;
	}
	err = stage_mkdirs(b, "data");
	if (err)
		goto fail_rm;
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
	err = stage_mkdirs(b, f->path);
	*slash = '/';
	if (err)
		goto fail;
	f->buf = malloc(WBUF);
	if (!f->buf) {
		err = pmu_error(PMU_ERR_NOMEM, "out of memory");
		goto fail;
	}
	f->fd = openat(b->stagefd, f->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		       0600);
	if (f->fd < 0) {
		err = pmu_error(errno == EEXIST ? PMU_ERR_EXISTS : PMU_ERR_IO,
				"cannot create '%s': %s", f->path, strerror(errno));
		goto fail;
	}
	err = set_mode(f->fd, b->fmode, f->path);
	if (err)
		goto fail;
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

	/* Not fsync'd here: the whole staged bag is made durable at once
	 * before it is published (make_durable()). */
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

/* Write a tag file at the bag's top and hash it (made durable with the rest
 * of the bag, by make_durable()). */
static int put_tag(struct pmu_bag *b, const char *name, const char *txt, char hex[PMU_SHA256_HEX])
{
	int fd = openat(b->stagefd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	int err;

	if (fd < 0)
		return pmu_error(PMU_ERR_IO, "cannot create '%s': %s", name, strerror(errno));
	err = set_mode(fd, b->fmode, name);
	if (!err)
		err = pmu_write_all(fd, txt, strlen(txt), name);
	if (close(fd) < 0 && !err)
		err = pmu_error(PMU_ERR_IO, "cannot close '%s': %s", name, strerror(errno));
	if (!err && hex)
		err = pmu_sha256_buf(txt, strlen(txt), hex);
	return err;
}

/*
 * The barrier before publication: every file and directory entry of the
 * staged bag on stable storage, so that the rename that publishes it can
 * never reach the disk ahead of what it names (a crash then leaves no
 * bundle or a complete one).  One syncfs(2) of the bag's filesystem does it
 * for the whole tree: it writes back every dirty page and inode of that
 * filesystem and commits its journal once, where an fsync(2) per file and
 * per directory (until now: 26 for pmurec -- true) paid a synchronous write,
 * or a journal commit, each (docs/fixed-cost.md has the measurements).  The
 * price: it also writes back what other processes left dirty on the same
 * filesystem.  Since Linux 5.8 syncfs(2) reports any writeback error on
 * the filesystem since the staging directory was opened (errseq on the
 * superblock, sampled at open), so an error is not lost; it fails the bag
 * even where it was another file's.
 */
static int make_durable(struct pmu_bag *b)
{
	if (syncfs(b->stagefd) < 0)
		return pmu_error(PMU_ERR_IO, "cannot make '%s/%s' durable (syncfs): %s", b->parent, b->staging,
				 strerror(errno));
	return 0;
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

/*
 * Publish from (a name in the parent directory) at the final path.  With
 * --force over something, the two are swapped atomically (a file or a
 * directory, either way), so that at no moment is there nothing at the final
 * path.  The old thing, now under the name from, is checked again before it
 * is removed: whatever was put at the final path while the command ran, only
 * a bundle is deleted, and anything else is swapped back.
 */
static int move_into_place(struct pmu_bag *b, const char *from)
{
	struct stat st;
	int err;

	if (fstatat(b->parentfd, b->base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!b->opts.force)
			return pmu_error(PMU_ERR_EXISTS, "'%s' already exists (use --force to replace it)",
					 b->final_path);
		if (renameat2(b->parentfd, from, b->parentfd, b->base, RENAME_EXCHANGE) < 0)
			return pmu_error(PMU_ERR_IO, "cannot replace '%s': %s", b->final_path,
					 strerror(errno));
		err = pmu_bag_replaceable(b->parentfd, from, b->final_path);
		if (!err)
			return pmu_rm_rf(b->parentfd, from);
		if (renameat2(b->parentfd, from, b->parentfd, b->base, RENAME_EXCHANGE) < 0) {
			err = pmu_error(PMU_ERR_IO,
					"'%s' is not a pmu bundle and was not replaced, but it is now at '%s/%s' "
					"and cannot be moved back: %s", b->final_path, b->parent, from,
					strerror(errno));
			/* Forget the name, so that pmu_bag_abort() leaves it. */
			if (from == b->part) {
				free(b->part);
				b->part = NULL;
			} else {
				free(b->staging);
				b->staging = NULL;
			}
		}
		return err;
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
	if (err)
		goto fail;
	if (b->form == PMU_FORM_DIR) {
		/* the mode first, so that the barrier covers it too */
		err = set_mode(b->stagefd, b->dmode, b->staging);
		if (!err)
			err = make_durable(b);
		if (!err)
			err = move_into_place(b, b->staging);
	} else {
		/* The staged tree is only the archive's source: what is
		 * published, and must be durable first, is the archive alone. */
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
		fd = openat(b->parentfd, b->part, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
			    0600);
		if (fd < 0) {
			free(top);
			err = pmu_error(PMU_ERR_IO, "cannot create '%s': %s", b->part, strerror(errno));
			goto fail;
		}
		err = set_mode(fd, b->fmode, b->part);
		if (!err)
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
