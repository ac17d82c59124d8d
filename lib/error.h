#ifndef PMU_ERROR_H
#define PMU_ERROR_H

/*
 * Library functions return 0 on success or a negative enum pmu_err.  The
 * failing function also records a human-readable detail (what failed first,
 * the subject quoted) that the caller may print with pmu_error_detail().
 * Only the tools' main() turns errors into exit codes.
 */
enum pmu_err {
	PMU_OK = 0,
	PMU_ERR_BASE_ = -1000,
#define PMU_ERR(name, msg) PMU_ERR_##name,
#include "error.def"
#undef PMU_ERR
};

/* Static strings; never NULL. */
const char *pmu_strerror(int err);
const char *pmu_errname(int err);

/*
 * Record a detail message for err and return err, so library code can write
 * "return pmu_error(PMU_ERR_IO, "cannot open '%s': %s", p, strerror(errno));".
 * The detail is thread-local and valid until the next pmu_error() call.
 */
int pmu_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *pmu_error_detail(void);

#endif
