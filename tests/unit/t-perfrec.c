/*
 * The perf ring record decoder (lib/perfrec.h): records built byte by byte
 * as include/uapi/linux/perf_event.h lays them out, every field read back;
 * records that lie about their sizes refused; and records the real kernel
 * writes into a ring of this test's own sampling event.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "perfrec.h"
#include "tap.h"

static unsigned char b[4096];
static size_t n;

static void start(uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { type, misc, 0 };

	memcpy(b, &h, sizeof(h));
	n = sizeof(h);
}

static void u64(uint64_t v)
{
	memcpy(b + n, &v, 8);
	n += 8;
}

static void u32x2(uint32_t a, uint32_t c)
{
	memcpy(b + n, &a, 4);
	memcpy(b + n + 4, &c, 4);
	n += 8;
}

static void bytes(const void *p, size_t k)
{
	memcpy(b + n, p, k);
	n += k;
}

static void end(void)
{
	uint16_t sz = (uint16_t)n;

	memcpy(b + 6, &sz, 2);
}

static const struct pmu_perfrec_fmt fmt_fp = {
	PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
		PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN,
	0, true
};

static void sample_fp(void)
{
	struct pmu_perfrec r;
	char why[200];

	start(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	u64(77);                         /* identifier */
	u64(0x401000);                   /* ip */
	u32x2(100, 101);                 /* pid, tid */
	u64(123456789);                  /* time */
	u32x2(1, 0);                     /* cpu, res */
	u64(1000);                       /* period */
	u64(3);                          /* nr */
	u64(PMU_PERFREC_CONTEXT_USER);
	u64(0x401000);
	u64(0x402000);
	end();
	ok(!pmu_perfrec_decode(&fmt_fp, b, n, &r, why, sizeof(why)), "a sample with a chain decodes");
	ok(r.type == PERF_RECORD_SAMPLE && r.id == 77 && r.ip == 0x401000 && r.pid == 100 && r.tid == 101 &&
		   r.t == 123456789 && r.cpu == 1 && r.period == 1000 && r.has_t && r.has_cpu,
	   "its fields read back");
	ok(r.nchain == 3 && pmu_perfrec_u64(r.chain, 0) == PMU_PERFREC_CONTEXT_USER &&
		   pmu_perfrec_u64(r.chain, 2) == 0x402000,
	   "its chain reads back, markers included");
	/* a chain longer than the record */
	memcpy(b + 56, &(uint64_t){ 4 }, 8);
	ok(pmu_perfrec_decode(&fmt_fp, b, n, &r, why, sizeof(why)) && strstr(why, "overruns"),
	   "a chain longer than its record is refused: %s", why);
	memcpy(b + 56, &(uint64_t){ (uint64_t)1 << 62 }, 8);
	ok(pmu_perfrec_decode(&fmt_fp, b, n, &r, why, sizeof(why)), "a huge chain count is refused (no overflow)");
	memcpy(b + 56, &(uint64_t){ 3 }, 8);
	/* a header that claims more than was given, or less than a header */
	ok(pmu_perfrec_decode(&fmt_fp, b, n - 8, &r, why, sizeof(why)), "a record cut short is refused: %s", why);
	b[6] = 4;
	b[7] = 0;
	ok(pmu_perfrec_decode(&fmt_fp, b, n, &r, why, sizeof(why)), "a size below the header is refused");
	/* a sample shorter than its sample_type */
	start(PERF_RECORD_SAMPLE, 0);
	u64(1);
	u64(2);
	end();
	ok(pmu_perfrec_decode(&fmt_fp, b, n, &r, why, sizeof(why)) && strstr(why, "shorter"),
	   "a sample shorter than its sample_type is refused: %s", why);
}

static void sample_dwarf(void)
{
	struct pmu_perfrec_fmt f = { PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
				     0x7, false };
	struct pmu_perfrec r;
	char why[200];

	start(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	u64(0x1234);
	u32x2(5, 6);
	u64(PERF_SAMPLE_REGS_ABI_64);
	u64(10);
	u64(11);
	u64(12);
	u64(16);                          /* stack size */
	bytes("0123456789abcdef", 16);
	u64(8);                           /* dyn size */
	end();
	ok(!pmu_perfrec_decode(&f, b, n, &r, why, sizeof(why)), "a sample with regs and a stack decodes");
	ok(r.abi == PERF_SAMPLE_REGS_ABI_64 && r.nregs == 3 && pmu_perfrec_u64(r.regs, 2) == 12 && r.stack_size == 16 &&
		   r.stack_dyn == 8 && !memcmp(r.stack, "01234567", 8),
	   "its registers (one per mask bit) and stack read back");
	memcpy(b + n - 8, &(uint64_t){ 17 }, 8);
	ok(pmu_perfrec_decode(&f, b, n, &r, why, sizeof(why)) && strstr(why, "used"),
	   "a stack whose used size exceeds its size is refused: %s", why);
	f.regs_mask = 0xf;
	memcpy(b + n - 8, &(uint64_t){ 8 }, 8);
	ok(pmu_perfrec_decode(&f, b, n, &r, why, sizeof(why)), "more registers than the record holds are refused");
	f.sample_type |= PERF_SAMPLE_RAW;
	ok(pmu_perfrec_decode(&f, b, n, &r, why, sizeof(why)) && strstr(why, "does not read"),
	   "a sample_type with fields the decoder does not read is refused: %s", why);
}

static void others(void)
{
	struct pmu_perfrec r;
	char why[200];
	unsigned char bid[24] = { 20, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef };

	/* MMAP2 with a build-id, and its sample_id trailer */
	start(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | (1 << 14));
	u32x2(100, 100);
	u64(0x400000);
	u64(0x1000);
	u64(0x1000);
	bytes(bid, 24);
	u32x2(5, 2);                    /* prot r-x, flags private */
	bytes("/bin/x\0\0", 8);
	u32x2(100, 100);                /* trailer: tid */
	u64(999);                       /* time */
	u32x2(1, 0);                    /* cpu */
	u64(77);                        /* identifier */
	end();
	ok(!pmu_perfrec_decode(&fmt_fp, b, n, &r, why, sizeof(why)), "an MMAP2 with a build-id decodes");
	ok(r.start == 0x400000 && r.len == 0x1000 && r.pgoff == 0x1000 && r.build_id_size == 20 && r.build_id[0] == 0xde &&
		   r.prot == 5 && r.flags == 2 && !strcmp(r.filename, "/bin/x") && r.t == 999 && r.cpu == 1 && r.id == 77,
	   "its fields and trailer read back");
	b[8 + 32] = 21;
	ok(pmu_perfrec_decode(&fmt_fp, b, n, &r, why, sizeof(why)), "a build-id over 20 bytes is refused");
	b[8 + 32] = 20;
	memcpy(b + 8 + 32 + 24 + 8, "/bin/xyz", 8); /* no NUL before the trailer */
	ok(pmu_perfrec_decode(&fmt_fp, b, n, &r, why, sizeof(why)), "a file name not ended within its record is refused");
	/* LOST, with the trailer */
	start(PERF_RECORD_LOST, 0);
	u64(77);
	u64(42);
	u32x2(1, 1);
	u64(5000);
	u32x2(0, 0);
	u64(77);
	end();
	ok(!pmu_perfrec_decode(&fmt_fp, b, n, &r, why, sizeof(why)) && r.lost == 42 && r.t == 5000 && r.has_cpu,
	   "LOST: the count and the trailer's time");
	/* a LOST too short for its trailer */
	start(PERF_RECORD_LOST, 0);
	u64(77);
	end();
	ok(pmu_perfrec_decode(&fmt_fp, b, n, &r, why, sizeof(why)), "a record shorter than its trailer is refused");
	/* THROTTLE */
	start(PERF_RECORD_THROTTLE, 0);
	u64(6000);
	u64(77);
	u64(77);
	u32x2(1, 1);
	u64(6000);
	u32x2(1, 0);
	u64(77);
	end();
	ok(!pmu_perfrec_decode(&fmt_fp, b, n, &r, why, sizeof(why)) && r.t == 6000 && r.cpu == 1,
	   "THROTTLE: its time and CPU");
}

/* Records the kernel writes: sample this process's own CPU time. */
static void real_ring(void)
{
	struct perf_event_attr a = { 0 };
	long pg = sysconf(_SC_PAGESIZE);
	struct perf_event_mmap_page *mp;
	unsigned char *data;
	uint64_t head, tail, samples = 0, bad = 0, mmaps = 0;
	struct timespec t0, t1;
	int fd;

	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.freq = 1;
	a.sample_freq = 1000;
	a.sample_type = fmt_fp.sample_type;
	a.sample_id_all = 1;
	a.mmap = a.mmap2 = a.comm = a.task = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0) {
		skip("perf_event_open on this test itself: %s", strerror(errno));
		return;
	}
	mp = mmap(NULL, (size_t)pg * 17, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mp == MAP_FAILED) {
		skip("mmap of the ring: %s", strerror(errno));
		close(fd);
		return;
	}
	data = (unsigned char *)mp + pg;
	/* an executable mapping made now gives an MMAP2 record */
	{
		void *x = mmap(NULL, (size_t)pg, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (x != MAP_FAILED)
			munmap(x, (size_t)pg);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (volatile int i = 0; i < 100000; i++)
			;
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 100000000L);
	head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	tail = mp->data_tail;
	while (tail < head) {
		unsigned char rec[65536];
		struct perf_event_header h;
		uint64_t off = tail & ((uint64_t)pg * 16 - 1), first = (uint64_t)pg * 16 - off;
		struct pmu_perfrec r;
		char why[200];

		memcpy(&h, data + off, sizeof(h)); /* headers are 8-byte aligned: never split */
		if (first >= h.size)
			memcpy(rec, data + off, h.size);
		else {
			memcpy(rec, data + off, first);
			memcpy(rec + first, data, h.size - first);
		}
		tail += h.size;
		if (pmu_perfrec_decode(&fmt_fp, rec, h.size, &r, why, sizeof(why))) {
			if (!bad++)
				printf("# undecodable: %s\n", why);
			continue;
		}
		if (r.type == PERF_RECORD_SAMPLE && r.pid == (uint32_t)getpid() && r.nchain > 0 && r.t > 0)
			samples++;
		if (r.type == PERF_RECORD_MMAP2 && r.pid == (uint32_t)getpid())
			mmaps++;
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
	ok(samples > 10 && !bad, "the kernel's own samples decode: %llu samples, %llu undecodable",
	   (unsigned long long)samples, (unsigned long long)bad);
	ok(mmaps >= 1, "the kernel's MMAP2 of an executable mapping decodes (%llu)", (unsigned long long)mmaps);
	munmap(mp, (size_t)pg * 17);
	close(fd);
}

int main(void)
{
	sample_fp();
	sample_dwarf();
	others();
	real_ring();
	return done_testing();
}
