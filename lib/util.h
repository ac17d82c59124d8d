#ifndef PMU_UTIL_H
#define PMU_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PMU_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * A growable byte buffer, always NUL-terminated once anything was added.
 * Embedded: pmu_buf_init()/pmu_buf_release(); pmu_buf_detach() hands the
 * storage to the caller, who frees it with free().
 */
struct pmu_buf {
	char *p;
	size_t len, cap;
};

void pmu_buf_init(struct pmu_buf *b);
void pmu_buf_release(struct pmu_buf *b);
int pmu_buf_add(struct pmu_buf *b, const void *data, size_t len);
int pmu_buf_addf(struct pmu_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *pmu_buf_detach(struct pmu_buf *b);

/*
 * Room for one more element in the array *arrayp (a pointer to the array's
 * pointer) that holds n elements of size bytes in *cap: when it is full it
 * is doubled (to first when empty) with realloc(3).  Returns 0, or
 * PMU_ERR_NOMEM with the array and *cap unchanged.  The array stays the
 * caller's, freed with free().
 */
int pmu_grow(void *arrayp, size_t *cap, size_t n, size_t size, size_t first);

/* Write all of buf to fd, retrying short writes and EINTR. */
int pmu_write_all(int fd, const void *buf, size_t len, const char *what);

/*
 * Read the whole regular file at dirfd/path into a NUL-terminated buffer that
 * the caller frees with free().  Files larger than limit are refused with
 * PMU_ERR_LIMIT; symlinks are refused.
 */
int pmu_read_file(int dirfd, const char *path, size_t limit, char **out, size_t *len);

/* Create dirfd/path and missing parents (mode 0755). */
int pmu_mkdir_p(int dirfd, const char *path);

/* Remove dirfd/path recursively without following symlinks; missing is fine. */
int pmu_rm_rf(int dirfd, const char *path);

int pmu_fsync_path(int dirfd, const char *path);

/* This boot's id and the start time (clock ticks since boot) of pid, for
 * telling a live owner of a staging directory from a dead one. */
int pmu_boot_id(char out[64]);
int pmu_pid_starttime(int pid, uint64_t *ticks);

/* CLOCK_MONOTONIC / CLOCK_REALTIME in ns. */
uint64_t pmu_now_mono_ns(void);
uint64_t pmu_now_real_ns(void);

/* snprintf that may truncate on purpose: display strings have fixed room. */
void pmu_setf(char *dst, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
