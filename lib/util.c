#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "util.h"

void pmu_buf_init(struct pmu_buf *b)
{
	b->p = NULL;
	b->len = b->cap = 0;
}

void pmu_buf_release(struct pmu_buf *b)
{
	free(b->p);
	pmu_buf_init(b);
}

static int buf_grow(struct pmu_buf *b, size_t extra)
{
	size_t need = b->len + extra + 1, cap = b->cap ? b->cap : 256;
	char *p;

	if (need < b->len)
		return pmu_error(PMU_ERR_NOMEM, "buffer size overflow");
	if (need <= b->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p)
		return pmu_error(PMU_ERR_NOMEM, "cannot grow buffer to %zu bytes", cap);
	b->p = p;
	b->cap = cap;
	return 0;
}

int pmu_buf_add(struct pmu_buf *b, const void *data, size_t len)
{
	int err = buf_grow(b, len);

	if (err)
		return err;
	memcpy(b->p + b->len, data, len);
	b->len += len;
	b->p[b->len] = '\0';
	return 0;
}

int pmu_buf_addf(struct pmu_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n, err;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return pmu_error(PMU_ERR_INVAL, "bad format '%s'", fmt);
	err = buf_grow(b, (size_t)n);
	if (err)
		return err;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

char *pmu_buf_detach(struct pmu_buf *b)
{
	char *p = b->p;

	if (!p)
		p = calloc(1, 1);
	pmu_buf_init(b);
	return p;
}

int pmu_grow(void *arrayp, size_t *cap, size_t n, size_t size, size_t first)
{
	void *p, *old;
	size_t ncap;

	if (n < *cap)
		return 0;
	ncap = *cap ? 2 * *cap : first;
	if (ncap <= n || ncap > SIZE_MAX / size)
		return PMU_ERR_NOMEM;
	memcpy(&old, arrayp, sizeof(old));
	p = realloc(old, ncap * size);
	if (!p)
		return PMU_ERR_NOMEM;
	memcpy(arrayp, &p, sizeof(p));
	*cap = ncap;
	return 0;
}

int pmu_write_all(int fd, const void *buf, size_t len, const char *what)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return pmu_error(PMU_ERR_IO, "cannot write '%s': %s", what, strerror(errno));
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int pmu_read_file(int dirfd, const char *path, size_t limit, char **out, size_t *len)
{
	struct stat st;
	struct pmu_buf b;
	char chunk[65536];
	int fd, err = 0;

	fd = openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return pmu_error(errno == ENOENT ? PMU_ERR_NOTFOUND : PMU_ERR_IO,
				 "cannot open '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return pmu_error(PMU_ERR_IO, "cannot read '%s': not a regular file", path);
	}
	if ((uint64_t)st.st_size > limit) {
		close(fd);
		return pmu_error(PMU_ERR_LIMIT, "'%s' is %lld bytes, over the %zu-byte limit",
				 path, (long long)st.st_size, limit);
	}
	/* Read to EOF rather than trusting st_size: /proc files report 0. */
	pmu_buf_init(&b);
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = pmu_error(PMU_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
			break;
		}
		if (n == 0)
			break;
		if (b.len + (size_t)n > limit) {
			err = pmu_error(PMU_ERR_LIMIT, "'%s' is over the %zu-byte limit", path, limit);
			break;
		}
		if ((err = pmu_buf_add(&b, chunk, (size_t)n)))
			break;
	}
	close(fd);
	if (err) {
		pmu_buf_release(&b);
		return err;
	}
	if (len)
		*len = b.len;
	*out = pmu_buf_detach(&b);
	return *out ? 0 : pmu_error(PMU_ERR_NOMEM, "out of memory");
}

int pmu_mkdir_p(int dirfd, const char *path)
{
	char tmp[4096];
	size_t n = strlen(path);

	if (n >= sizeof(tmp))
		return pmu_error(PMU_ERR_LIMIT, "path too long: '%s'", path);
	memcpy(tmp, path, n + 1);
	for (char *p = tmp + 1; ; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;

			*p = '\0';
			if (mkdirat(dirfd, tmp, 0755) < 0 && errno != EEXIST)
				return pmu_error(PMU_ERR_IO, "cannot create directory '%s': %s",
						 tmp, strerror(errno));
			*p = c;
			if (!c)
				break;
		}
	}
	return 0;
}

static int rm_rf_at(int dirfd, const char *name, int depth)
{
	struct stat st;
	DIR *d;
	int fd, err = 0;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : pmu_error(PMU_ERR_IO, "cannot stat '%s': %s",
						       name, strerror(errno));
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
			return pmu_error(PMU_ERR_IO, "cannot remove '%s': %s", name, strerror(errno));
		return 0;
	}
	if (depth > 64)
		return pmu_error(PMU_ERR_LIMIT, "directory nesting too deep at '%s'", name);
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return pmu_error(PMU_ERR_IO, "cannot open directory '%s': %s", name, strerror(errno));
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return pmu_error(PMU_ERR_IO, "cannot read directory '%s': %s", name, strerror(errno));
	}
	for (struct dirent *e; !err && (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		err = rm_rf_at(fd, e->d_name, depth + 1);
	}
	closedir(d);
	if (!err && unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		err = pmu_error(PMU_ERR_IO, "cannot remove directory '%s': %s", name, strerror(errno));
	return err;
}

int pmu_rm_rf(int dirfd, const char *path)
{
	return rm_rf_at(dirfd, path, 0);
}

int pmu_fsync_path(int dirfd, const char *path)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	int err = 0;

	if (fd < 0)
		return pmu_error(PMU_ERR_IO, "cannot open '%s' for fsync: %s", path, strerror(errno));
	if (fsync(fd) < 0)
		err = pmu_error(PMU_ERR_IO, "cannot fsync '%s': %s", path, strerror(errno));
	close(fd);
	return err;
}

int pmu_boot_id(char out[64])
{
	char *s = NULL;
	size_t n = 0;
	int err = pmu_read_file(AT_FDCWD, "/proc/sys/kernel/random/boot_id", 63, &s, &n);

	if (err)
		return err;
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = '\0';
	snprintf(out, 64, "%s", s);
	free(s);
	return 0;
}

int pmu_pid_starttime(int pid, uint64_t *ticks)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pmu_error(PMU_ERR_NOTFOUND, "no process %d", pid);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return pmu_error(PMU_ERR_IO, "cannot read '%s'", path);
	buf[n] = '\0';
	/* comm may contain spaces and parentheses: fields start after the last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return pmu_error(PMU_ERR_CORRUPT, "unexpected format of '%s'", path);
	/* field 3 (state) follows ") "; starttime is field 22. */
	p += 2;
	for (int field = 3; field < 22; field++) {
		p = strchr(p, ' ');
		if (!p)
			return pmu_error(PMU_ERR_CORRUPT, "unexpected format of '%s'", path);
		p++;
	}
	*ticks = strtoull(p, NULL, 10);
	return 0;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t pmu_now_mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t pmu_now_real_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

void pmu_setf(char *dst, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(dst, size, fmt, ap);
	va_end(ap);
}
