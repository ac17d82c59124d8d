#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "archive_dl.h"
#include "bundle_archive.h"
#include "checks.h"
#include "error.h"
#include "util.h"

/* ---- packing ------------------------------------------------------------ */

struct plist {
	char **v;
	size_t n, cap;
};

static int plist_add(struct plist *l, const char *s)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 32;
		char **v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return pmu_error(PMU_ERR_NOMEM, "out of memory");
		l->v = v;
		l->cap = cap;
	}
	if (!(l->v[l->n] = strdup(s)))
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	l->n++;
	return 0;
}

static void plist_free(struct plist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

/* Collect "rel/path" of every directory and file below dirfd/rel. */
static int walk(int dirfd, const char *rel, struct plist *l, int depth)
{
	int fd, err = 0;
	DIR *d;

	if (depth > 32)
		return pmu_error(PMU_ERR_LIMIT, "directory nesting too deep at '%s'", rel);
	fd = openat(dirfd, rel[0] ? rel : ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return pmu_error(PMU_ERR_IO, "cannot open '%s': %s", rel, strerror(errno));
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return pmu_error(PMU_ERR_IO, "cannot read '%s': %s", rel, strerror(errno));
	}
	for (struct dirent *e; !err && (e = readdir(d));) {
		char *p;
		struct stat st;

		if (e->d_name[0] == '.')
			continue; /* ".", "..", and the staging marker never travel */
		if (asprintf(&p, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name) < 0) {
			err = pmu_error(PMU_ERR_NOMEM, "out of memory");
			break;
		}
		if (fstatat(dirfd, p, &st, AT_SYMLINK_NOFOLLOW) < 0)
			err = pmu_error(PMU_ERR_IO, "cannot stat '%s': %s", p, strerror(errno));
		else if (S_ISDIR(st.st_mode)) {
			err = plist_add(l, p);
			if (!err)
				err = walk(dirfd, p, l, depth + 1);
		} else if (S_ISREG(st.st_mode))
			err = plist_add(l, p);
		else
			err = pmu_error(PMU_ERR_INVAL, "'%s' is neither a file nor a directory", p);
		free(p);
	}
	closedir(d);
	return err;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int ar_err(struct archive *a, const char *what)
{
	return pmu_error(PMU_ERR_ARCHIVE, "%s: %s", what,
			 archive_error_string(a) ? archive_error_string(a) : "unknown error");
}

static int pack_entry(struct archive *a, struct archive_entry *e, int srcdirfd, const char *rel,
		      const char *top, int64_t mtime)
{
	char *name = NULL, buf[1 << 16];
	struct stat st;
	int fd = -1, err = 0;

	if (fstatat(srcdirfd, rel[0] ? rel : ".", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return pmu_error(PMU_ERR_IO, "cannot stat '%s': %s", rel, strerror(errno));
	if (asprintf(&name, "%s%s%s", top, rel[0] ? "/" : "", rel) < 0)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	archive_entry_clear(e);
	archive_entry_set_pathname(e, name);
	archive_entry_set_uid(e, 0);
	archive_entry_set_gid(e, 0);
	archive_entry_set_mtime(e, (time_t)mtime, 0);
	if (S_ISDIR(st.st_mode)) {
		archive_entry_set_filetype(e, AE_IFDIR);
		archive_entry_set_perm(e, 0755);
		archive_entry_set_size(e, 0);
	} else {
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_perm(e, 0644);
		archive_entry_set_size(e, st.st_size);
		fd = openat(srcdirfd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			free(name);
			return pmu_error(PMU_ERR_IO, "cannot open '%s': %s", rel, strerror(errno));
		}
	}
	if (archive_write_header(a, e) != ARCHIVE_OK)
		err = ar_err(a, name);
	while (!err && fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			err = pmu_error(PMU_ERR_IO, "cannot read '%s': %s", rel, strerror(errno));
		if (n <= 0)
			break;
		if (archive_write_data(a, buf, (size_t)n) != n)
			err = ar_err(a, name);
	}
	if (fd >= 0)
		close(fd);
	free(name);
	return err;
}

int pmu_archive_pack(int srcdirfd, const char *top, int outfd, enum pmu_bundle_form form,
		     int64_t mtime)
{
	struct plist l = { 0 };
	struct archive *a;
	struct archive_entry *e;
	int err = pmu_archive_load();

	if (err)
		return err;
	err = walk(srcdirfd, "", &l, 0);
	if (err) {
		plist_free(&l);
		return err;
	}
	qsort(l.v, l.n, sizeof(*l.v), cmp_str);
	a = archive_write_new();
	e = archive_entry_new();
	if (!a || !e) {
		err = pmu_error(PMU_ERR_NOMEM, "out of memory");
		goto out;
	}
	if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK)
		err = ar_err(a, "tar format");
	else if (form == PMU_FORM_TAR_GZ &&
		 (archive_write_add_filter_gzip(a) != ARCHIVE_OK ||
		  archive_write_set_filter_option(a, "gzip", "timestamp", NULL) != ARCHIVE_OK))
		err = ar_err(a, "gzip filter");
	else if (form == PMU_FORM_TAR_ZST && archive_write_add_filter_zstd(a) != ARCHIVE_OK)
		err = ar_err(a, "zstd filter");
	else if (archive_write_set_bytes_in_last_block(a, 1) != ARCHIVE_OK ||
		 archive_write_open_fd(a, outfd) != ARCHIVE_OK)
		err = ar_err(a, "cannot open archive for writing");
	if (!err)
		err = pack_entry(a, e, srcdirfd, "", top, mtime);
	for (size_t i = 0; !err && i < l.n; i++)
		err = pack_entry(a, e, srcdirfd, l.v[i], top, mtime);
	if (!err && archive_write_close(a) != ARCHIVE_OK)
		err = ar_err(a, "cannot finish archive");
out:
	if (e)
		archive_entry_free(e);
	if (a)
		archive_write_free(a);
	plist_free(&l);
	return err;
}

/* ---- extraction --------------------------------------------------------- */

void pmu_archive_default_limits(struct pmu_archive_limits *l)
{
	l->max_entries = 100000;
	l->max_entry_bytes = 16ull << 30;
	l->max_total_bytes = 64ull << 30;
	l->max_path_len = 1024;
	l->ratio_min_bytes = 64ull << 20;
	l->max_ratio = 200;
}

/* Open-addressing set of entry paths, for duplicate detection. */
struct pathset {
	char **slot;
	size_t cap, n;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* 1: added, 0: already present, <0: error */
static int pathset_add(struct pathset *ps, const char *p)
{
	if (2 * (ps->n + 1) > ps->cap) {
		size_t cap = ps->cap ? 2 * ps->cap : 256;
		char **slot = calloc(cap, sizeof(*slot));

		if (!slot)
			return pmu_error(PMU_ERR_NOMEM, "out of memory");
		for (size_t i = 0; i < ps->cap; i++) {
			if (!ps->slot[i])
				continue;
			size_t j = hash_str(ps->slot[i]) & (cap - 1);
			while (slot[j])
				j = (j + 1) & (cap - 1);
			slot[j] = ps->slot[i];
		}
		free(ps->slot);
		ps->slot = slot;
		ps->cap = cap;
	}
	size_t j = hash_str(p) & (ps->cap - 1);
	for (; ps->slot[j]; j = (j + 1) & (ps->cap - 1))
		if (!strcmp(ps->slot[j], p))
			return 0;
	if (!(ps->slot[j] = strdup(p)))
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	ps->n++;
	return 1;
}

static void pathset_free(struct pathset *ps)
{
	for (size_t i = 0; i < ps->cap; i++)
		free(ps->slot[i]);
	free(ps->slot);
}

__attribute__((format(printf, 3, 4)))
static int fail_check(int *check, enum pmu_check c, const char *fmt, ...)
{
	char msg[1200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	*check = c;
	return pmu_error(PMU_ERR_CORRUPT, "%s", msg);
}

/*
 * Validate an entry path and strip a trailing '/'.  Returns 0 or a check
 * failure.  Control characters are refused along with the structural rules:
 * nothing in a bundle needs them and they confuse every report.
 */
#define MAX_PATH_DEPTH 32 /* path components of an entry */

static int check_path(char *p, const struct pmu_archive_limits *l, int *check)
{
	size_t n = strlen(p);

	if (n == 0)
		return fail_check(check, PMU_CHECK_ARCHIVE_PATH, "archive entry has an empty path");
	if (n > l->max_path_len)
		return fail_check(check, PMU_CHECK_ARCHIVE_PATH, "archive entry path is too long: '%.200s'", p);
	if (p[0] == '/')
		return fail_check(check, PMU_CHECK_ARCHIVE_PATH, "archive entry '%s' has an absolute path", p);
	while (n > 1 && p[n - 1] == '/')
		p[--n] = '\0';
	for (const char *c = p; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return fail_check(check, PMU_CHECK_ARCHIVE_PATH,
					  "archive entry '%s' has a control character in its path", p);
	size_t comps = 0;

	for (const char *c = p; *c;) {
		const char *e = strchr(c, '/');
		size_t m = e ? (size_t)(e - c) : strlen(c);

		if (m == 0 || (m == 1 && c[0] == '.') || (m == 2 && c[0] == '.' && c[1] == '.'))
			return fail_check(check, PMU_CHECK_ARCHIVE_PATH,
					  "archive entry '%s' has an empty, '.' or '..' component", p);
		/* A deeper tree could not be removed again (pmu_rm_rf stops at
		 * depth 64) and would be left behind in the temporary directory;
		 * a bag nests a handful of levels. */
		if (++comps > MAX_PATH_DEPTH)
			return fail_check(check, PMU_CHECK_ARCHIVE_PATH,
					  "archive entry '%.200s' nests more than %d directories deep", p,
					  MAX_PATH_DEPTH);
		c += m + (e ? 1 : 0);
	}
	return 0;
}

/* Open (creating) the directory for path's parent below rootfd; every
 * component is opened with O_NOFOLLOW so nothing escapes the root. */
static int open_parent(int rootfd, const char *path, const char **leaf)
{
	char comp[1100];
	const char *c = path, *slash;
	int fd = dup(rootfd);

	while (fd >= 0 && (slash = strchr(c, '/'))) {
		size_t m = (size_t)(slash - c);
		int nfd;

		if (m >= sizeof(comp)) {
			close(fd);
			return -ENAMETOOLONG;
		}
		memcpy(comp, c, m);
		comp[m] = '\0';
		if (mkdirat(fd, comp, 0700) < 0 && errno != EEXIST) {
			int e = errno;
			close(fd);
			return -e;
		}
		nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (nfd < 0)
			return -errno;
		fd = nfd;
		c = slash + 1;
	}
	*leaf = c;
	return fd;
}

static int extract_all(struct archive *a, int rootfd, const struct pmu_archive_limits *l,
		       char **top, int *check)
{
	struct archive_entry *e;
	struct pathset seen = { 0 };
	uint64_t entries = 0, total = 0;
	char *buf = malloc(1 << 16);
	int err = 0, r;

	if (!buf)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	while (!err && (r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e), *leaf;
		char *p;
		mode_t type = archive_entry_filetype(e);
		size_t toplen;
		int dfd, fd;

		if (++entries > l->max_entries) {
			err = fail_check(check, PMU_CHECK_ARCHIVE_LIMIT,
					 "archive has more than the allowed number of entries");
			break;
		}
		if (!name) {
			err = fail_check(check, PMU_CHECK_ARCHIVE_PATH, "archive entry has no path");
			break;
		}
		if (!(p = strdup(name))) {
			err = pmu_error(PMU_ERR_NOMEM, "out of memory");
			break;
		}
		if ((err = check_path(p, l, check)))
			goto next;
		if (archive_entry_hardlink(e) || type == AE_IFLNK) {
			err = fail_check(check, PMU_CHECK_ARCHIVE_LINK, "archive entry '%s' is a link", p);
			goto next;
		}
		if (type != AE_IFREG && type != AE_IFDIR) {
			err = fail_check(check, PMU_CHECK_ARCHIVE_TYPE,
					 "archive entry '%s' is neither a file nor a directory", p);
			goto next;
		}
		r = pathset_add(&seen, p);
		if (r <= 0) {
			err = r < 0 ? r : fail_check(check, PMU_CHECK_ARCHIVE_DUPLICATE,
						     "archive entry '%s' occurs twice", p);
			goto next;
		}
		/* one top-level directory holds everything */
		toplen = strcspn(p, "/");
		if (!*top) {
			if (!(*top = strndup(p, toplen))) {
				err = pmu_error(PMU_ERR_NOMEM, "out of memory");
				goto next;
			}
		}
		if (strlen(*top) != toplen || strncmp(*top, p, toplen) ||
		    (p[toplen] == '\0' && type != AE_IFDIR)) {
			err = fail_check(check, PMU_CHECK_ARCHIVE_LAYOUT,
					 "archive entry '%s' is outside the single top-level directory", p);
			goto next;
		}
		if (archive_entry_size(e) < 0 || (uint64_t)archive_entry_size(e) > l->max_entry_bytes) {
			err = fail_check(check, PMU_CHECK_ARCHIVE_LIMIT,
					 "archive entry '%s' is larger than the entry-size limit", p);
			goto next;
		}
		dfd = open_parent(rootfd, p, &leaf);
		if (dfd < 0) {
			err = pmu_error(PMU_ERR_IO, "cannot create parent of '%s': %s", p, strerror(-dfd));
			goto next;
		}
		if (type == AE_IFDIR) {
			if (mkdirat(dfd, leaf, 0700) < 0 && errno != EEXIST)
				err = pmu_error(PMU_ERR_IO, "cannot create '%s': %s", p, strerror(errno));
			close(dfd);
			goto next;
		}
		fd = openat(dfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		close(dfd);
		if (fd < 0) {
			err = errno == EEXIST
				? fail_check(check, PMU_CHECK_ARCHIVE_DUPLICATE,
					     "archive entry '%s' collides with another entry", p)
				: pmu_error(PMU_ERR_IO, "cannot create '%s': %s", p, strerror(errno));
			goto next;
		}
		for (;;) {
			la_ssize_t n = archive_read_data(a, buf, 1 << 16);
			uint64_t packed;

			if (n == 0)
				break;
			if (n < 0) {
				err = fail_check(check, PMU_CHECK_ARCHIVE_FORMAT,
						 "cannot read archive entry '%s'", p);
				break;
			}
			total += (uint64_t)n;
			packed = (uint64_t)archive_filter_bytes(a, -1);
			if (total > l->max_total_bytes ||
			    (total > l->ratio_min_bytes && packed && total / packed > l->max_ratio)) {
				err = fail_check(check, PMU_CHECK_ARCHIVE_LIMIT,
						 "archive expands past the size or compression-ratio limit at '%s'", p);
				break;
			}
			if ((err = pmu_write_all(fd, buf, (size_t)n, p)))
				break;
		}
		close(fd);
next:
		free(p);
	}
	if (!err && r != ARCHIVE_EOF)
		err = fail_check(check, PMU_CHECK_ARCHIVE_FORMAT, "archive is unreadable: %s",
				 archive_error_string(a) ? archive_error_string(a) : "unknown error");
	if (!err && !*top)
		err = fail_check(check, PMU_CHECK_ARCHIVE_LAYOUT, "archive is empty");
	pathset_free(&seen);
	free(buf);
	return err;
}

/* ---- the private directory ---------------------------------------------- */

/*
 * An archive is extracted into <tmpbase>/pmuvalidate.XXXXXX/bag/.  Next to
 * bag/ lies the owner marker, which says who made the directory: its pid,
 * that process's start time (so a reused pid is not taken for it), the boot
 * and the pid namespace.  A directory whose marker names a process that is
 * gone was left by a run that was killed (kill -9, a crash): the next
 * extraction under the same base removes it.  A directory without a
 * readable marker of ours, of another user, or naming a live process is
 * never touched.
 *
 * While a directory exists, SIGINT, SIGTERM and SIGHUP remove it before the
 * process dies of the signal: the handler (installed where the signal's
 * disposition is the default, so a program's own handling is kept) uses
 * only async-signal-safe calls.  The directory is created and registered
 * with those signals blocked, and removed and unregistered likewise, so no
 * signal finds it half made or half known.
 */
#define OWNER_NAME "owner"
#define OWNER_TAG "pmu private extraction directory\n"
#define TMP_PREFIX "pmuvalidate."
#define MAX_LIVE 4

static struct live {
	atomic_int state;        /* 0 free, 1 being set up, 2 live */
	int basefd;
	char name[32];
	char path[4096];
} live[MAX_LIVE];

static void fatal_signals(sigset_t *s)
{
	sigemptyset(s);
	sigaddset(s, SIGINT);
	sigaddset(s, SIGTERM);
	sigaddset(s, SIGHUP);
}

#ifdef SYS_getdents64
struct ldirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* rm -rf with async-signal-safe calls only (no malloc: no opendir) */
static void rm_tree_sigsafe(int dirfd, const char *name, int depth)
{
	char buf[2048];
	int fd;

	if (depth > MAX_PATH_DEPTH + 4)
		return;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		unlinkat(dirfd, name, 0);
		return;
	}
	/* entries not removed are returned exactly once per pass; a pass
	 * that removes nothing ends it */
	for (int pass = 0; pass < 4; pass++) {
		bool removed = false;
		long n;

		lseek(fd, 0, SEEK_SET);
		while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
			for (long off = 0; off < n;) {
				struct ldirent64 *d = (struct ldirent64 *)(buf + off);
				const char *e = d->d_name;

				off += d->d_reclen;
				if (e[0] == '.' && (!e[1] || (e[1] == '.' && !e[2])))
					continue;
				if (d->d_type == DT_DIR || (unlinkat(fd, e, 0) < 0 && errno == EISDIR))
					rm_tree_sigsafe(fd, e, depth + 1);
				removed = true;
			}
		}
		if (!removed)
			break;
	}
	close(fd);
	unlinkat(dirfd, name, AT_REMOVEDIR);
}
#else
static void rm_tree_sigsafe(int dirfd, const char *name, int depth)
{
	/* no portable way without malloc: the next run removes it as stale */
	(void)dirfd, (void)name, (void)depth;
}
#endif

static void on_fatal_signal(int sig)
{
	int saved = errno;

	for (int i = 0; i < MAX_LIVE; i++)
		if (atomic_load(&live[i].state) == 2)
			rm_tree_sigsafe(live[i].basefd, live[i].name, 0);
	/* SA_RESETHAND restored the default; the signal, blocked while the
	 * handler runs, kills the process when it returns */
	raise(sig);
	errno = saved;
}

static void install_handlers(void)
{
	static atomic_bool done;
	struct sigaction sa, old;
	sigset_t s;

	if (atomic_exchange(&done, true))
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fatal_signal;
	sigfillset(&sa.sa_mask);
	sa.sa_flags = SA_RESETHAND;
	fatal_signals(&s);
	for (int sig = 1; sig < 32; sig++)
		if (sigismember(&s, sig) && sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
		    !(old.sa_flags & SA_SIGINFO))
			sigaction(sig, &sa, NULL);
}

static void pidns(char out[64])
{
	ssize_t n = readlink("/proc/self/ns/pid", out, 63);

	out[n > 0 ? n : 0] = '\0';
	if (n <= 0)
		snprintf(out, 64, "unknown");
}

/* True only when dirfd/name is a private directory of ours whose marker
 * names a process that is gone. */
static bool tmp_is_stale(int dirfd, const char *name)
{
	char txt[512], boot[64] = "", mboot[64], ns[64], mns[64], tag[64];
	unsigned long long mstart;
	struct stat st;
	uint64_t start;
	int fd, mfd, pid;
	ssize_t n;

	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 077)) {
		close(fd);
		return false;
	}
	mfd = openat(fd, OWNER_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	close(fd);
	if (mfd < 0)
		return false;
	n = fstat(mfd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid()
		? read(mfd, txt, sizeof(txt) - 1) : -1;
	close(mfd);
	if (n <= 0)
		return false;
	txt[n] = '\0';
	if (strncmp(txt, OWNER_TAG, strlen(OWNER_TAG)) ||
	    sscanf(txt + strlen(OWNER_TAG), "pid %d\nstart %llu\nboot %63s\npidns %63s\n%63s", &pid, &mstart,
		   mboot, mns, tag) != 4 || pid <= 0)
		return false;
	if (pmu_boot_id(boot) == 0 && strcmp(boot, mboot))
		return true; /* made before this boot */
	pidns(ns);
	if (strcmp(ns, mns))
		return false; /* its pid means nothing here */
	if (pmu_pid_starttime(pid, &start) < 0)
		return true;
	return start != mstart;
}

static bool tmp_name(const char *n)
{
	size_t k = strlen(TMP_PREFIX);

	if (strncmp(n, TMP_PREFIX, k) || strlen(n) != k + 6)
		return false;
	for (n += k; *n; n++)
		if (!((*n >= 'a' && *n <= 'z') || (*n >= 'A' && *n <= 'Z') || (*n >= '0' && *n <= '9')))
			return false;
	return true;
}

/* Remove the private directories under base that killed runs left. */
static void clean_stale_tmp(const char *base)
{
	int fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	for (struct dirent *e; (e = readdir(d));)
		if (tmp_name(e->d_name) && tmp_is_stale(fd, e->d_name))
			pmu_rm_rf(fd, e->d_name);
	closedir(d);
}

/* Make <base>/pmuvalidate.XXXXXX with its marker and bag/, registered for
 * removal on a fatal signal; *dir (free()) names it. */
static int tmp_create(const char *base, char **dir)
{
	char marker[512], boot[64] = "unknown", ns[64];
	sigset_t s, old;
	struct live *slot = NULL;
	uint64_t start = 0;
	int dfd = -1, fd, err = 0;

	if (asprintf(dir, "%s/" TMP_PREFIX "XXXXXX", base) < 0) {
		*dir = NULL;
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	}
	fatal_signals(&s);
	pthread_sigmask(SIG_BLOCK, &s, &old);
	if (!mkdtemp(*dir)) {
		err = pmu_error(PMU_ERR_IO, "cannot create temporary directory '%s': %s", *dir, strerror(errno));
		goto out;
	}
	pmu_boot_id(boot);
	pidns(ns);
	pmu_pid_starttime((int)getpid(), &start);
	snprintf(marker, sizeof(marker), OWNER_TAG "pid %d\nstart %llu\nboot %s\npidns %s\n", (int)getpid(),
		 (unsigned long long)start, boot, ns);
	dfd = open(*dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	fd = dfd < 0 ? -1 : openat(dfd, OWNER_NAME, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || pmu_write_all(fd, marker, strlen(marker), OWNER_NAME) ||
	    mkdirat(dfd, PMU_ARCHIVE_SUBDIR, 0700) < 0) {
		err = pmu_error(PMU_ERR_IO, "cannot set up temporary directory '%s': %s", *dir, strerror(errno));
		if (fd >= 0)
			close(fd);
		pmu_rm_rf(AT_FDCWD, *dir);
		goto out;
	}
	close(fd);
	for (int i = 0; !slot && i < MAX_LIVE; i++) {
		int want = 0;

		if (atomic_compare_exchange_strong(&live[i].state, &want, 1))
			slot = &live[i];
	}
	if (slot) {
		/* not registered when the slots are taken: then only a
		 * later run removes it, should a signal come */
		slot->basefd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		snprintf(slot->name, sizeof(slot->name), "%s", strrchr(*dir, '/') + 1);
		snprintf(slot->path, sizeof(slot->path), "%s", *dir);
		atomic_store(&slot->state, slot->basefd >= 0 ? 2 : 0);
	}
out:
	if (dfd >= 0)
		close(dfd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		free(*dir);
		*dir = NULL;
	}
	return err;
}

int pmu_archive_remove(const char *tmpdir)
{
	sigset_t s, old;
	int err;

	fatal_signals(&s);
	pthread_sigmask(SIG_BLOCK, &s, &old);
	err = pmu_rm_rf(AT_FDCWD, tmpdir);
	for (int i = 0; i < MAX_LIVE; i++)
		if (atomic_load(&live[i].state) == 2 && !strcmp(live[i].path, tmpdir)) {
			atomic_store(&live[i].state, 1);
			close(live[i].basefd);
			atomic_store(&live[i].state, 0);
		}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}

int pmu_archive_extract(const char *path, const char *tmpbase, const struct pmu_archive_limits *l,
			char **tmpdir, char **top, int *check)
{
	struct archive *a;
	const char *base = tmpbase ? tmpbase : "/tmp";
	char *dir = NULL;
	int rootfd = -1, err = 0;

	*tmpdir = *top = NULL;
	*check = -1;
	if ((err = pmu_archive_load()))
		return err;
	a = archive_read_new();
	if (!a)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	install_handlers();
	clean_stale_tmp(base);
	if ((err = tmp_create(base, &dir)))
		goto out;
	{
		char *root = NULL;

		if (asprintf(&root, "%s/" PMU_ARCHIVE_SUBDIR, dir) < 0) {
			err = pmu_error(PMU_ERR_NOMEM, "out of memory");
			goto out;
		}
		rootfd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (rootfd < 0)
			err = pmu_error(PMU_ERR_IO, "cannot open '%s': %s", root, strerror(errno));
		free(root);
		if (err)
			goto out;
	}
	/* Only tar, with no compression, gzip or zstd: the formats the spec allows. */
	archive_read_support_format_tar(a);
	archive_read_support_filter_gzip(a);
	archive_read_support_filter_zstd(a);
	archive_read_support_filter_none(a);
	if (archive_read_open_filename(a, path, 1 << 16) != ARCHIVE_OK) {
		const char *m = archive_error_string(a);

		if (access(path, R_OK) < 0)
			err = pmu_error(PMU_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
		else
			err = fail_check(check, PMU_CHECK_ARCHIVE_FORMAT, "%s",
					 m ? m : "not a tar archive");
		goto out;
	}
	err = extract_all(a, rootfd, l, top, check);
out:
	archive_read_free(a);
	if (rootfd >= 0)
		close(rootfd);
	if (err) {
		if (dir)
			pmu_archive_remove(dir);
		free(dir);
		free(*top);
		*top = NULL;
		return err;
	}
	*tmpdir = dir;
	return 0;
}
