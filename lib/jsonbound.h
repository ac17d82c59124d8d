#ifndef PMU_JSONBOUND_H
#define PMU_JSONBOUND_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/*
 * JSON documents in bounded memory.  Every document a pmu tool reads or
 * writes (bundle-spec 8.1) goes through one parse here, so the writer never
 * writes what a reader would refuse:
 *
 *   - its bytes are at most pmu_doc_max_bytes(minor): 4 MiB for a document
 *     of spec 1.3 or later, 64 MiB for the older 1.0 to 1.2 (where a
 *     document such as cohort.json grew with the workload);
 *   - jansson parses it within PMU_DOC_PARSE_BUDGET bytes of memory,
 *     whatever the version: {"a":[0,0,...]} costs jansson some 40 bytes per
 *     2 bytes of text, so a byte limit alone does not bound memory.
 *
 * The text is read from the file a block at a time, never held whole, and
 * each block is scanned for an upper bound of what jansson will allocate
 * before jansson sees it: a document whose bound passes the budget is
 * refused, so jansson never holds more than the budget (jsonbound.c says how).
 * The parse is thread-safe; objects move freely between bounded and other
 * code.
 */

#define PMU_DOC_MAX_BYTES (4u << 20)       /* a document of spec 1.PMU_DOC_MAX_BYTES_SINCE or later */
#define PMU_DOC_MAX_BYTES_SINCE 3
#define PMU_DOC_MAX_BYTES_OLD (64u << 20)  /* a document of spec 1.0 to 1.2 */
#define PMU_DOC_PARSE_BUDGET (32u << 20)   /* jansson's memory for any one document */

/* The byte limit of a document of spec 1.<minor>; minor < 0: the largest
 * of any version (a reader that does not know the version). */
size_t pmu_doc_max_bytes(int minor);

struct pmu_json_limits {
	size_t max_bytes;     /* of the text */
	size_t budget;        /* of jansson's live allocations while parsing */
	int minor;            /* names the byte limit in messages; < 0: no version */
};

/* The limits of a document of spec 1.<minor> (minor < 0: any version). */
struct pmu_json_limits pmu_doc_limits(int minor);

/*
 * Parse one JSON value (duplicate member names refused) from the rest of
 * fd, a regular file, or from buf[0..n).  On success *out is the value,
 * owned by the caller (json_decref).  On failure *out is NULL and the
 * error is:
 *   PMU_ERR_CORRUPT  not JSON, or a NUL byte in the text; *line is the
 *                    1-based line of a syntax error (else 0);
 *   PMU_ERR_LIMIT    over l->max_bytes or l->budget; the detail says
 *                    which limit, and the size;
 *   PMU_ERR_IO       fd is no regular file, or cannot be read.
 * The detail (pmu_error_detail()) does not name the file: callers do.
 * line may be NULL.
 */
int pmu_json_load_fd(int fd, const struct pmu_json_limits *l, json_t **out, uint64_t *line);
int pmu_json_load_buf(const char *buf, size_t n, const struct pmu_json_limits *l, json_t **out,
		      uint64_t *line);

/* Bytes of jansson allocations the calling thread holds in a bounded parse
 * now (0 outside one), and the most it held in its last bounded parse
 * (never over that parse's budget); for the tests. */
size_t pmu_json_budget_used(void);
size_t pmu_json_last_peak(void);

#endif
