#ifndef PMU_PERFREC_H
#define PMU_PERFREC_H

/*
 * The records of a perf_event ring buffer (include/uapi/linux/perf_event.h),
 * decoded.  The input is untrusted: every field is read within
 * header.size and the length given, laid out by the attr's sample_type;
 * a record that does not fit is refused with why.  Nothing is allocated:
 * the pointers of a decoded record point into the buffer given (which
 * need not be aligned: read arrays with pmu_perfrec_u64()).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What shapes the records: the attr's sample_type, sample_regs_user and
 * sample_id_all. */
struct pmu_perfrec_fmt {
	uint64_t sample_type;
	uint64_t regs_mask;
	bool sample_id_all;
};

struct pmu_perfrec {
	uint32_t type;
	uint16_t misc;
	uint16_t size;
	/* PERF_RECORD_SAMPLE, and the sample_id trailer of the others (has_id) */
	bool has_id;
	uint32_t pid, tid, cpu;
	uint64_t t, id, ip, addr, period;
	bool has_t, has_cpu, has_tid;
	const unsigned char *chain;   /* nchain u64 */
	uint64_t nchain;
	uint64_t abi;                 /* REGS_USER: 0 none */
	const unsigned char *regs;    /* nregs u64 */
	uint32_t nregs;
	const unsigned char *stack;   /* STACK_USER: stack_dyn bytes used of stack_size */
	uint64_t stack_size, stack_dyn;
	/* MMAP2 (pid/tid above), MMAP */
	uint64_t start, len, pgoff;
	uint32_t maj, min, prot, flags;
	uint64_t ino;
	unsigned char build_id[20];
	uint8_t build_id_size;        /* 0: no build-id in the record (misc bit clear) */
	const char *filename;         /* NUL-terminated within the record */
	/* COMM */
	const char *comm;
	/* FORK, EXIT */
	uint32_t ppid, ptid;
	/* LOST, LOST_SAMPLES */
	uint64_t lost;
};

/* Decode buf[0..len) (one record, header first).  0, or -1 with why. */
int pmu_perfrec_decode(const struct pmu_perfrec_fmt *f, const void *buf, size_t len, struct pmu_perfrec *r, char *why,
		       size_t n);

/* The i-th u64 of an array within a decoded record. */
static inline uint64_t pmu_perfrec_u64(const unsigned char *p, uint64_t i)
{
	uint64_t v;

	__builtin_memcpy(&v, p + 8 * i, 8);
	return v;
}

/* The kernel's context markers in a call chain (PERF_CONTEXT_*): values
 * from (uint64_t)-4095 up. */
#define PMU_PERFREC_CONTEXT_MAX ((uint64_t)-4095)
#define PMU_PERFREC_CONTEXT_KERNEL ((uint64_t)-128)
#define PMU_PERFREC_CONTEXT_USER ((uint64_t)-512)

#endif
