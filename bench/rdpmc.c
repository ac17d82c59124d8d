/*
 * bench/rdpmc: reading a counter from inside the process, three ways, for
 * the markers/spans path (issue: rdpmc self-monitoring):
 *   read(2) of a counter fd;
 *   the ioctl bracket: PERF_EVENT_IOC_ENABLE ... PERF_EVENT_IOC_DISABLE + read(2);
 *   rdpmc through the mmap page's seqlock (perf_event_mmap_page: lock, index,
 *   offset, pmc_width), where cap_user_rdpmc is set.
 * The user-space read is per architecture: x86's rdpmc instruction, and on
 * aarch64 mrs of PMEVCNTR<n>_EL0 or PMCCNTR_EL0, after the counter asked
 * for it with the core PMU's format term rdpmc (attr.config1 bit 1; Linux
 * 5.17 and later) and kernel.perf_user_access=1 allowed it.
 * The first two run on task-clock when no hardware counter opens (software
 * events have no rdpmc index); rdpmc needs a hardware counter and reports
 * itself unavailable, with the reason, otherwise.
 *   rdpmc [ITERATIONS]           one line per method: ns per read
 *   rdpmc --agree EVENT [N]      EVENT (instructions or cycles, user space)
 *                                read three ways around no work: read(2),
 *                                the user-space read, read(2) again, after
 *                                N iterations of a loop; prints
 *                                "read1 rdpmc read2", or "unavailable REASON"
 *                                and exits 3.  The tests hold read1 <= rdpmc
 *                                <= read2 (tests/cli/t1461-hw-rdpmc.bats).
 * Built as build/bench-rdpmc (make), and cross-built for the arm64 guest.
 */
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The bit of attr.config1 that the core PMU's format term rdpmc names
 * ("config1:1" on arm64); 0 where there is none (x86 needs no asking). */
static uint64_t rdpmc_config1(void)
{
	char path[512], buf[64];
	unsigned bit;
	uint64_t r = 0;
	DIR *d = opendir("/sys/bus/event_source/devices");

	for (struct dirent *e; d && !r && (e = readdir(d));) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/format/rdpmc", e->d_name);
		if ((f = fopen(path, "r"))) {
			if (fgets(buf, sizeof(buf), f) && sscanf(buf, "config1:%u", &bit) == 1 && bit < 64)
				r = 1ull << bit;
			fclose(f);
		}
	}
	if (d)
		closedir(d);
	return r;
}

static int open_ev(uint32_t type, uint64_t config)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	if (type == PERF_TYPE_HARDWARE)
		a.config1 = rdpmc_config1();
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

#if defined(__x86_64__) || defined(__i386__)
#define HAVE_USER_READ 1
/* the page's index - 1 is the rdpmc counter number (ECX) */
static uint64_t user_read(uint32_t c)
{
	uint32_t lo, hi;

	__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(c));
	return (uint64_t)hi << 32 | lo;
}
#elif defined(__aarch64__)
#define HAVE_USER_READ 1
/* the page's index - 1 is n of PMEVCNTR<n>_EL0, or 31 for the cycle
 * counter PMCCNTR_EL0 (arch/arm64/kernel/perf_event.c,
 * armv8pmu_user_event_idx); mrs takes the register's name, not a number */
#define EVCNTR(n)                                                       \
	case n:                                                         \
		__asm__ volatile("mrs %0, pmevcntr" #n "_el0" : "=r"(v)); \
		break;
static uint64_t user_read(uint32_t c)
{
	uint64_t v = 0;

	switch (c) {
		EVCNTR(0) EVCNTR(1) EVCNTR(2) EVCNTR(3) EVCNTR(4) EVCNTR(5) EVCNTR(6) EVCNTR(7)
		EVCNTR(8) EVCNTR(9) EVCNTR(10) EVCNTR(11) EVCNTR(12) EVCNTR(13) EVCNTR(14) EVCNTR(15)
		EVCNTR(16) EVCNTR(17) EVCNTR(18) EVCNTR(19) EVCNTR(20) EVCNTR(21) EVCNTR(22) EVCNTR(23)
		EVCNTR(24) EVCNTR(25) EVCNTR(26) EVCNTR(27) EVCNTR(28) EVCNTR(29) EVCNTR(30)
	case 31:
		__asm__ volatile("mrs %0, pmccntr_el0" : "=r"(v));
		break;
	}
	return v;
}
#endif

#ifdef HAVE_USER_READ
/* The seqlock read of perf_event_mmap_page (include/uapi/linux/perf_event.h):
 * offset plus the counter sign-extended from pmc_width bits, retried while
 * the kernel updates the page. */
static uint64_t mmap_read(volatile struct perf_event_mmap_page *pc)
{
	uint32_t seq, idx;
	uint64_t count;

	do {
		seq = pc->lock;
		__sync_synchronize();
		idx = pc->index;
		count = (uint64_t)pc->offset;
		if (pc->cap_user_rdpmc && idx) {
			int64_t pmc = (int64_t)user_read(idx - 1);

			pmc = (int64_t)((uint64_t)pmc << (64 - pc->pmc_width));
			pmc >>= 64 - pc->pmc_width;
			count += (uint64_t)pmc;
		}
		__sync_synchronize();
	} while (pc->lock != seq);
	return count;
}
#endif

/* The counter page of fd, or NULL with the reason in why. */
static volatile struct perf_event_mmap_page *user_page(int fd, char *why, size_t n)
{
#ifdef HAVE_USER_READ
	volatile struct perf_event_mmap_page *pc =
		mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd, 0);

	if (pc == MAP_FAILED) {
		snprintf(why, n, "mmap of the counter page: %s", strerror(errno));
		return NULL;
	}
	if (!pc->cap_user_rdpmc) {
#if defined(__aarch64__)
		snprintf(why, n, "cap_user_rdpmc is 0 (kernel.perf_user_access is 0, or the counter did not ask "
			 "with config1's rdpmc bit)");
#else
		snprintf(why, n, "cap_user_rdpmc is 0 (/sys/bus/event_source/devices/cpu/rdpmc is 0, or the PMU "
			 "does not allow it)");
#endif
		return NULL;
	}
	return pc;
#else
	(void)fd;
	snprintf(why, n, "no user-space counter read for this architecture (x86 and aarch64 only)");
	return NULL;
#endif
}

static int agree(const char *event, long n)
{
	uint64_t config = !strcmp(event, "cycles") ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_HW_INSTRUCTIONS;
	int fd = open_ev(PERF_TYPE_HARDWARE, config);
	char why[256];
	volatile struct perf_event_mmap_page *pc;
	uint64_t r1 = 0, r2 = 0, u = 0;
	volatile unsigned long sink = 0;

	if (strcmp(event, "cycles") && strcmp(event, "instructions")) {
		fprintf(stderr, "rdpmc: --agree takes cycles or instructions, not '%s'\n", event);
		return 2;
	}
	if (fd < 0) {
		printf("unavailable perf_event_open(%s): %s\n", event, strerror(errno));
		return 3;
	}
	if (!(pc = user_page(fd, why, sizeof(why)))) {
		printf("unavailable %s\n", why);
		return 3;
	}
	for (long i = 0; i < n; i++)
		sink += (unsigned long)i;
#ifdef HAVE_USER_READ
	/* index 0 while the counter runs: no counter is lent to user space
	 * (arm64 sets cap_user_rdpmc and gives index 0 while
	 * kernel.perf_user_access is 0); the page's offset alone is no count */
	if (!pc->index) {
		printf("unavailable the counter page's index is 0 while it counts: no counter is lent to user space%s\n",
#if defined(__aarch64__)
		       " (kernel.perf_user_access is 0)"
#else
		       ""
#endif
		);
		return 3;
	}
	if (read(fd, &r1, sizeof(r1)) != (ssize_t)sizeof(r1))
		return perror("rdpmc: read"), 1;
	u = mmap_read(pc);
	if (read(fd, &r2, sizeof(r2)) != (ssize_t)sizeof(r2))
		return perror("rdpmc: read"), 1;
#endif
	printf("%llu %llu %llu\n", (unsigned long long)r1, (unsigned long long)u, (unsigned long long)r2);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "--agree"))
		return agree(argv[2], argc > 3 ? atol(argv[3]) : 1000000);

	long n = argc > 1 ? atol(argv[1]) : 200000;
	uint64_t v, t0, sink = 0;
	int fd = open_ev(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS), hw_err = fd < 0 ? errno : 0;
	const char *ev = "instructions:u";
	char why[256];

	if (fd < 0) {
		fd = open_ev(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
		ev = "task-clock:u";
	}
	if (fd < 0) {
		printf("read(2)       unavailable  perf_event_open: %s\n", strerror(errno));
		return 1;
	}
	t0 = now();
	for (long i = 0; i < n; i++)
		if (read(fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
			sink += v;
	printf("read(2)       %8.1f ns per read (%s)\n", (double)(now() - t0) / (double)n, ev);
	t0 = now();
	for (long i = 0; i < n; i++) {
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		if (read(fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
			sink += v;
	}
	printf("ioctl bracket %8.1f ns per enable+disable+read (%s)\n", (double)(now() - t0) / (double)n, ev);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	if (hw_err) {
		printf("rdpmc         unavailable  no hardware counter opens (instructions: %s): rdpmc reads a "
		       "hardware counter; this host exposes no PMU\n", strerror(hw_err));
	} else {
		volatile struct perf_event_mmap_page *pc = user_page(fd, why, sizeof(why));

		if (!pc)
			printf("rdpmc         unavailable  %s\n", why);
#ifdef HAVE_USER_READ
		else if (!pc->index)
			printf("rdpmc         unavailable  the counter page's index is 0 while it counts: no counter is "
			       "lent to user space\n");
		else {
			t0 = now();
			for (long i = 0; i < n; i++)
				sink += mmap_read(pc);
			printf("rdpmc         %8.1f ns per seqlock read (%s)\n", (double)(now() - t0) / (double)n, ev);
		}
#endif
	}
	close(fd);
	return sink == 42; /* keep the reads */
}
