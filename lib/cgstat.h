#ifndef PMU_CGSTAT_H
#define PMU_CGSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Pure parsers for the cgroup v2 interface files that describe a cohort
 * (Documentation/admin-guide/cgroup-v2.rst, "Interface Files" and "PSI"),
 * and the difference of two snapshots.  Nothing here touches the file
 * system: backends/linux/cgroup.c reads the files and hands the bytes in.
 * The bytes are untrusted: every parser is bounds-checked on (text, len),
 * needs no NUL terminator, and answers PMU_ERR_CORRUPT for what the kernel
 * would never write.
 *
 * Values and units.  A snapshot keeps the kernel's keys and numbers as
 * they are (usage_usec in microseconds).  The delta speaks the bundle's
 * units (bundle-spec section 10: ns, count, bytes): a key ending in _usec
 * becomes _ns and its value is multiplied by 1000, so "usage_usec" turns
 * into row "usage_ns".  Every value in a delta fits 0..2^63-1, the range
 * of a bundle integer; one that does not is a failed row, never a wrapped
 * or clamped number.
 *
 * Counters and gauges.  cpu.stat, io.stat and the pressure totals are
 * cumulative counters: the delta reports end - start, and a counter that
 * went backwards (a device removed, a counter reset) is a failed row with
 * the two values in its reason.  memory.stat mixes event counters (pg*,
 * workingset_*, thp_*, zswp*, swp*_zero, numa_*: counts) with amounts in
 * bytes at an instant (anon, file, slab, ...).  The amounts are left out:
 * the end snapshot is taken after the cohort exited, when anon is 0 and
 * file is whatever page cache is still charged, so the number would invite
 * a wrong reading.  The one memory figure that answers "how much did the
 * cohort use" is memory.peak (and pids.peak for tasks): those are gauges,
 * reported as their end value with kind "gauge", no subtraction.
 */

/* The files of a snapshot, one row each: enum tail, file name, format, the
 * controller that provides it (NULL: present in every cgroup v2 cgroup,
 * cpu.stat's core fields and, with CONFIG_PSI, the pressure files). */
#define PMU_CGFILES(X)                                          \
	X(CPU_STAT,        "cpu.stat",        FLAT,     NULL)     \
	X(IO_STAT,         "io.stat",         NESTED,   "io")     \
	X(MEMORY_STAT,     "memory.stat",     FLAT,     "memory") \
	X(MEMORY_PEAK,     "memory.peak",     SINGLE,   "memory") \
	X(PIDS_PEAK,       "pids.peak",       SINGLE,   "pids")   \
	X(CPU_PRESSURE,    "cpu.pressure",    PRESSURE, NULL)     \
	X(IO_PRESSURE,     "io.pressure",     PRESSURE, NULL)     \
	X(MEMORY_PRESSURE, "memory.pressure", PRESSURE, NULL)

enum pmu_cgfile {
#define PMU_CGF_ENUM_(tail, name, fmt, ctrl) PMU_CGF_##tail,
	PMU_CGFILES(PMU_CGF_ENUM_)
#undef PMU_CGF_ENUM_
	PMU_CGF_COUNT_
};

enum pmu_cgfmt {
	PMU_CGFMT_FLAT,     /* "key value\n" per line (cpu.stat, memory.stat) */
	PMU_CGFMT_NESTED,   /* "MAJ:MIN key=value ...\n" per device (io.stat) */
	PMU_CGFMT_PRESSURE, /* "some avg10=.. avg60=.. avg300=.. total=N\nfull ...\n" */
	PMU_CGFMT_SINGLE,   /* one number and a newline (memory.peak, pids.peak) */
};

struct pmu_cgfile_info {
	const char *name;
	enum pmu_cgfmt fmt;
	const char *controller;
};

extern const struct pmu_cgfile_info pmu_cgfiles[PMU_CGF_COUNT_];

/* ---- one file at one instant --------------------------------------------- */

#define PMU_CGKEY_MAX 64

struct pmu_cgkv {
	char key[PMU_CGKEY_MAX];
	uint64_t value;
};

/* The status words are the bundle's (spec section 9). */
enum pmu_cgstatus {
	PMU_CGS_NOT_READ = 0, /* not looked at (pmu_sys_pressure reads only the pressure files) */
	PMU_CGS_OK,
	PMU_CGS_UNAVAILABLE,  /* absent on this host: reason and remedy say why and how */
	PMU_CGS_FAILED,       /* present but unreadable or malformed: reason */
};

/* "ok", "unavailable", "failed", or "not-requested" for NOT_READ; static. */
const char *pmu_cgstatus_name(enum pmu_cgstatus s);

/*
 * The parsed values of one file.  Embedded: pmu_cgstat_init() /
 * pmu_cgstat_release(); kv is owned by the struct.  Keys are unique.
 * For SINGLE files the one key is "peak"; for PRESSURE files the keys are
 * "some_total_usec" and "full_total_usec" (the latter absent where the
 * kernel writes no "full" line); for NESTED files the six I/O keys summed
 * over devices, present when at least one device line had them.
 */
struct pmu_cgstat {
	enum pmu_cgstatus status;
	char reason[256];
	const char *remedy;  /* static, with UNAVAILABLE */
	struct pmu_cgkv *kv;
	size_t n, cap;
};

void pmu_cgstat_init(struct pmu_cgstat *st);
void pmu_cgstat_release(struct pmu_cgstat *st);

/* Mark st UNAVAILABLE or FAILED (dropping any values); remedy is static. */
void pmu_cgstat_set(struct pmu_cgstat *st, enum pmu_cgstatus status, const char *remedy, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The value of key, or NULL. */
const uint64_t *pmu_cgstat_get(const struct pmu_cgstat *st, const char *key);

/*
 * Parse text[0..len) in the format of file f into st (released first).
 * On success st is OK.  On PMU_ERR_CORRUPT st is FAILED with the reason
 * (also the pmu_error() detail) and no values; PMU_ERR_NOMEM leaves it
 * empty.  The per-format parsers below are what this dispatches to.
 */
int pmu_cgstat_parse(enum pmu_cgfile f, const char *text, size_t len, struct pmu_cgstat *st);
int pmu_cgstat_parse_flat(const char *text, size_t len, struct pmu_cgstat *st);
int pmu_cgstat_parse_nested(const char *text, size_t len, struct pmu_cgstat *st);
int pmu_cgstat_parse_pressure(const char *text, size_t len, struct pmu_cgstat *st);
int pmu_cgstat_parse_single(const char *text, size_t len, struct pmu_cgstat *st);

/* ---- snapshots and their difference -------------------------------------- */

/* All files at one instant.  Embedded: pmu_cgsnap_init()/pmu_cgsnap_release(). */
struct pmu_cgsnap {
	struct pmu_cgstat f[PMU_CGF_COUNT_];
	uint64_t t_ns;       /* CLOCK_MONOTONIC when taken; 0 if never */
};

void pmu_cgsnap_init(struct pmu_cgsnap *s);
void pmu_cgsnap_release(struct pmu_cgsnap *s);

enum pmu_cgkind {
	PMU_CGK_COUNTER,     /* value = end - start */
	PMU_CGK_GAUGE,       /* value = end (a high-water mark), no subtraction */
	PMU_CGK_SKIP,        /* an instant amount: not reported (see above) */
};

/* "counter", "gauge"; static. */
const char *pmu_cgkind_name(enum pmu_cgkind k);

/*
 * How a key of file f is reported: its kind and its bundle unit ("ns",
 * "bytes", "count"; static, NULL for SKIP).  From a sorted-by-file rule
 * table in cgstat.c, first match wins.
 */
enum pmu_cgkind pmu_cgstat_classify(enum pmu_cgfile f, const char *key, const char **unit);

/* One reported value. */
struct pmu_cgrow {
	enum pmu_cgfile file;
	char key[PMU_CGKEY_MAX + 8];  /* bundle name: "usage_ns", "pgfault", "rbytes", "peak" */
	char src[PMU_CGKEY_MAX];      /* the kernel's key: "usage_usec" */
	enum pmu_cgkind kind;
	const char *unit;             /* static */
	bool ok;
	uint64_t value;               /* when ok; <= INT64_MAX */
	char reason[160];             /* when !ok: why the row failed */
};

/* The per-file outcome of a delta and its rows (the rows of one file are
 * adjacent, in the order of the end snapshot).  Embedded:
 * pmu_cgdelta_init()/pmu_cgdelta_release(); rows is owned by the struct. */
struct pmu_cgdelta {
	struct {
		enum pmu_cgstatus status;   /* NOT_READ: in neither snapshot */
		char reason[256];
		const char *remedy;         /* static, with UNAVAILABLE */
	} files[PMU_CGF_COUNT_];
	struct pmu_cgrow *rows;
	size_t n, cap;
};

void pmu_cgdelta_init(struct pmu_cgdelta *d);
void pmu_cgdelta_release(struct pmu_cgdelta *d);

/*
 * d = b - a, file by file (d is released first).  A file is OK when it was
 * OK in both snapshots; otherwise it takes the first non-OK status (start's,
 * then end's) with its reason, and has no rows.  Within an OK file each
 * reported key gives one row; a row fails (ok false, reason) when a counter
 * went backwards, a key is missing at start or end (for io.stat a key absent
 * at start counts as 0: the kernel lists a device only once it saw I/O), or
 * the value does not fit 0..2^63-1 after the unit conversion.  Returns 0,
 * or PMU_ERR_NOMEM.
 */
int pmu_cgstat_delta(const struct pmu_cgsnap *a, const struct pmu_cgsnap *b, struct pmu_cgdelta *d);

/* ---- where the cgroup is ------------------------------------------------- */

/*
 * From the text of /proc/PID/cgroup: the cgroup v2 path (the "0::" line),
 * e.g. "/user.slice/user-0.slice/session-2.scope".  PMU_ERR_NOTFOUND when
 * there is no such line (no cgroup2 hierarchy is mounted), PMU_ERR_CORRUPT
 * when it is not an absolute path, PMU_ERR_LIMIT when it does not fit out.
 */
int pmu_cgstat_v2_path(const char *text, size_t len, char *out, size_t outlen);

/*
 * From the text of /proc/self/mountinfo (proc(5)): a cgroup2 mount through
 * which cgpath can be reached, i.e. whose root is cgpath or an ancestor of
 * it (the longest such root wins; a mount of another cgroup namespace,
 * root "/..", never does).  mount gets the mount point, dir the directory
 * of cgpath under it; octal escapes (\040) are decoded.  PMU_ERR_NOTFOUND
 * when no cgroup2 mount reaches cgpath, PMU_ERR_CORRUPT for a malformed
 * line (the kernel writes at least ten fields and a '-' separator),
 * PMU_ERR_LIMIT when a result does not fit.
 */
int pmu_cgstat_v2_dir(const char *mountinfo, size_t len, const char *cgpath, char *mount, size_t mountlen,
		      char *dir, size_t dirlen);

/*
 * A cgroup.events or cgroup.controllers style check: is word one of the
 * space-separated words of text[0..len)?  (cgroup.events is flat keyed;
 * see pmu_cgstat_parse_flat for "populated".)
 */
bool pmu_cgstat_has_word(const char *text, size_t len, const char *word);

#endif
