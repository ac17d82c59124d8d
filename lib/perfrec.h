#ifndef PMU_PERFREC_H
#define PMU_PERFREC_H

/*
 * perf_event ring-buffer records (perf_event_open(2), "MMAP layout"): the
 * reader of a buffer the kernel writes, and the decoder of the records
 * pmu asks for.  The kernel's bytes are input like any other: every size
 * and string is checked against the record's bounds, and a record that
 * does not fit is reported malformed, never read past.
 *
 * The records decoded are those of events opened with
 *   sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_IDENTIFIER
 *   sample_id_all = 1
 * so every record ends with the same 24-byte trailer: pid, tid, time, id.
 */
#include <stddef.h>
#include <stdint.h>

#define PMU_PERF_TRAILER 24u   /* pid, tid (u32 each), time, identifier (u64 each) */
#define PMU_PERF_REC_MAX 65535u

enum pmu_perf_kind {
	PMU_PR_OTHER,           /* well-formed, of a type not decoded */
	PMU_PR_FORK,
	PMU_PR_EXIT,
	PMU_PR_COMM,
	PMU_PR_MMAP2,
	PMU_PR_READ,
	PMU_PR_LOST,
};

struct pmu_perf_rec {
	enum pmu_perf_kind kind;
	uint32_t type;          /* the header's */
	uint16_t misc;
	uint32_t pid, tid;      /* FORK/EXIT/COMM/MMAP2/READ: the task's */
	uint32_t ppid, ptid;    /* FORK/EXIT */
	uint64_t time;          /* the trailer's, on the event's clock */
	uint64_t id;            /* the trailer's: the event that wrote it */
	const char *str;        /* COMM: the name; MMAP2: the file (NUL-terminated, in the record) */
	uint32_t prot;          /* MMAP2 */
	uint64_t value, enabled, running, read_id, lost_count; /* READ (see pmu_perf_decode()) */
	uint64_t lost;          /* LOST: records the kernel could not write */
};

/*
 * Decode the record at p (n bytes, n == its header's size).  read_format
 * is that of the events whose READ records may appear: it must be a
 * single-value format (no PERF_FORMAT_GROUP); TOTAL_TIME_ENABLED,
 * TOTAL_TIME_RUNNING, ID and LOST are read when set.  0, or -1 with *why
 * set when the record is malformed.
 */
int pmu_perf_decode(const void *p, size_t n, uint64_t read_format, struct pmu_perf_rec *r, const char **why);

/*
 * A ring buffer mapped from a perf event: 1 metadata page and data_size
 * bytes (a power of two).  pmu_perf_ring_next() gives the next whole
 * record (copied into scratch when it wraps), or NULL when none is left;
 * a header whose size is below 8 or beyond what was written stops the
 * reader for good (*broken), as the buffer cannot be followed past it.
 * pmu_perf_ring_done() gives the space read back to the kernel.
 */
struct pmu_perf_ring {
	void *base;             /* the mapping: struct perf_event_mmap_page, then data */
	size_t data_size;
	uint64_t head, tail;    /* of the current drain */
	int broken;
	unsigned char scratch[PMU_PERF_REC_MAX + 1];
};

void pmu_perf_ring_begin(struct pmu_perf_ring *g);
const void *pmu_perf_ring_next(struct pmu_perf_ring *g, size_t *n);
void pmu_perf_ring_done(struct pmu_perf_ring *g);

#endif
