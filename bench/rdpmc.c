/*
 * bench/rdpmc: the cost of reading a counter from inside the process, three
 * ways, for the markers/spans path (issue: rdpmc self-monitoring):
 *   read(2) of a counter fd;
 *   the ioctl bracket: PERF_EVENT_IOC_ENABLE ... PERF_EVENT_IOC_DISABLE + read(2);
 *   rdpmc through the mmap page's seqlock (perf_event_mmap_page: lock, index,
 *   offset, pmc_width), where cap_user_rdpmc is set.
 * The first two run on task-clock when no hardware counter opens (software
 * events have no rdpmc index); rdpmc needs a hardware counter and reports
 * itself unavailable, with the reason, otherwise.
 *   rdpmc [ITERATIONS]      prints one line per method: ns per read
 */
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

static int open_ev(uint32_t type, uint64_t config)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

#if defined(__x86_64__) || defined(__i386__)
static uint64_t rdpmc(uint32_t c)
{
	uint32_t lo, hi;

	__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(c));
	return (uint64_t)hi << 32 | lo;
}

/* The seqlock read of perf_event_mmap_page (include/uapi/linux/perf_event.h). */
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
			int64_t pmc = (int64_t)rdpmc(idx - 1);

			pmc <<= 64 - pc->pmc_width;
			pmc >>= 64 - pc->pmc_width;
			count += (uint64_t)pmc;
		}
		__sync_synchronize();
	} while (pc->lock != seq);
	return count;
}
#endif

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	uint64_t v, t0, sink = 0;
	int fd = open_ev(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS), hw_err = fd < 0 ? errno : 0;
	const char *ev = "instructions:u";

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
#if defined(__x86_64__) || defined(__i386__)
	if (hw_err) {
		printf("rdpmc         unavailable  no hardware counter opens (instructions: %s): rdpmc reads a "
		       "hardware counter; this host exposes no PMU\n", strerror(hw_err));
	} else {
		volatile struct perf_event_mmap_page *pc =
			mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd, 0);

		if (pc == MAP_FAILED)
			printf("rdpmc         unavailable  mmap of the counter page: %s\n", strerror(errno));
		else if (!pc->cap_user_rdpmc)
			printf("rdpmc         unavailable  cap_user_rdpmc is 0 (/sys/bus/event_source/devices/cpu/rdpmc "
			       "is 0, or the PMU does not allow it)\n");
		else {
			t0 = now();
			for (long i = 0; i < n; i++)
				sink += mmap_read(pc);
			printf("rdpmc         %8.1f ns per seqlock read (%s)\n", (double)(now() - t0) / (double)n, ev);
		}
	}
#else
	printf("rdpmc         unavailable  not an x86 CPU\n");
#endif
	close(fd);
	return sink == 42; /* keep the reads */
}
