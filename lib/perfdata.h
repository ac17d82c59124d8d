#ifndef PMU_PERFDATA_H
#define PMU_PERFDATA_H

/*
 * perf.data, the file `perf script -i` and `perf report -i` read, written
 * from tools/perf/Documentation/perf.data-file-format.txt (no C library
 * writes it), and read back in bounded memory for the validator.
 *
 * Writer (the sampling collector, bundle-spec section 22): one attr (the
 * sampling event) with the ids of its per-CPU events; the data section is
 * the kernel's own records as read from the rings (SAMPLE, MMAP2, COMM,
 * FORK, EXIT, LOST, LOST_SAMPLES, THROTTLE, UNTHROTTLE), byte for byte,
 * plus records synthesized for what existed before the run (a process's
 * maps and comm), with the sample_id trailer the attr asks for.  The data
 * waits in an unnamed temporary file (O_TMPFILE: nothing is left even
 * after SIGKILL) and goes into the bundle at finish, header and feature
 * sections (BUILD_ID, HOSTNAME, OSRELEASE, VERSION, ARCH, NRCPUS, CMDLINE,
 * EVENT_DESC, CLOCKID) included.  Memory stays flat.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct perf_event_attr;
struct pmu_out;
struct pmu_perfdata_w;

/* A writer for attr (attr->size bytes are copied) whose events have ids
 * ids[0..nids) (PERF_EVENT_IOC_ID of each CPU's event); name: the event's
 * name (EVENT_DESC).  tmpdir: where the data waits (NULL: $TMPDIR or
 * /tmp).  0 or a negative pmu_err. */
int pmu_perfdata_new(struct pmu_perfdata_w **w, const struct perf_event_attr *attr, const uint64_t *ids,
		     size_t nids, const char *name, const char *tmpdir);

/* One record as the kernel wrote it (struct perf_event_header first,
 * header.size bytes).  0 or a negative pmu_err (the first error sticks). */
int pmu_perfdata_record(struct pmu_perfdata_w *w, const void *rec, size_t len);

/* Synthesized records for what was there before the run (perf's
 * "synthesized" events): a COMM, and an MMAP2 of a file mapping (with the
 * build-id variant when bid is given).  t: CLOCK_MONOTONIC ns; their
 * sample_id trailer (when the attr has sample_id_all) carries pid/tid, t,
 * the first id and CPU 0, as perf's own synthesized records do. */
int pmu_perfdata_comm(struct pmu_perfdata_w *w, pid_t pid, pid_t tid, const char *comm, uint64_t t, bool exec);
int pmu_perfdata_mmap2(struct pmu_perfdata_w *w, pid_t pid, pid_t tid, uint64_t start, uint64_t len,
		       uint64_t pgoff, uint32_t prot, uint32_t flags, const char *path, const unsigned char *bid,
		       size_t bid_len, uint64_t t);

/* The kernel's map as perf synthesizes it (an MMAP of
 * "[kernel.kallsyms]_text", pid -1, from _text to the end of the address
 * space, pgoff the address of _text): without it perf report warns that
 * the kernel address maps were restricted and names no kernel function.
 * text: _text's address in /proc/kallsyms (not 0). */
int pmu_perfdata_kernel_mmap(struct pmu_perfdata_w *w, uint64_t text, uint64_t t);

/* An object and its build-id for the BUILD_ID feature section (perf
 * buildid-list); pid -1 and kernel true for the kernel.  The file's pid
 * field names perf's machine, not a process: -1 (the host) is written
 * whatever pid is. */
int pmu_perfdata_build_id(struct pmu_perfdata_w *w, pid_t pid, bool kernel, const char *path,
			  const unsigned char *bid, size_t bid_len);

/* What the feature sections say of the host (NULL members are left out). */
struct pmu_perfdata_host {
	const char *hostname, *osrelease, *version, *arch;
	unsigned nr_cpus_avail, nr_cpus_online;
	const char *const *cmdline;   /* pmurec's argv */
	size_t ncmdline;
	int clockid;                  /* CLOCK_MONOTONIC */
};

/* Write the whole file into the bundle at rel (out->blob_open, not
 * shared).  0 or a negative pmu_err; the writer is spent either way. */
int pmu_perfdata_finish(struct pmu_perfdata_w *w, const struct pmu_perfdata_host *h, struct pmu_out *out,
			const char *rel);
void pmu_perfdata_free(struct pmu_perfdata_w *w);

/*
 * Reader: what a perf.data holds, for the validator's PERF-DATA check.
 * rd reads the next n bytes of the file in order (returns n, or less at
 * the end, or -1); the reader only moves forward and trusts no offset: a
 * file whose sections overlap, lie outside it or come out of order, or
 * whose records overrun the data section, is refused with why.  Bounded
 * memory whatever the file.
 */
struct pmu_perfdata_stats {
	uint64_t size;               /* bytes read */
	uint64_t nattrs, nids;
	uint64_t sample_type;        /* of the (first) attr */
	uint64_t records;            /* in the data section */
	uint64_t samples, mmaps, comms, forks, exits;
	uint64_t lost_records;       /* the sum of PERF_RECORD_LOST's lost */
	uint64_t lost_samples;       /* the sum of PERF_RECORD_LOST_SAMPLES' lost */
	uint64_t throttles, unthrottles;
	uint64_t build_ids;          /* entries of the BUILD_ID section */
	uint64_t features;           /* the header's feature bitmap, first word */
};
int pmu_perfdata_scan(long (*rd)(void *ctx, void *buf, size_t n), void *ctx, struct pmu_perfdata_stats *st,
		      char *why, size_t whylen);

#endif
