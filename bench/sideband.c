/*
 * bench/sideband.c: what following a cohort without ptrace would cost.
 *
 * A measurement, not a design to build on: its one ring buffer is written
 * by inherited events from every CPU, and the kernel's ring-buffer writer
 * is only safe with one writing CPU (docs/light-follower.md, "Why it was
 * withdrawn").  Records can be lost or torn when tasks exit on several
 * CPUs at once; the sequential fork-heavy loop of bench/count hardly does.
 *
 * Issue 4's fork-heavy target (pmurec -m light within 1.01x of perf stat)
 * cannot be met by a follower that stops every task (ptrace).  This probe
 * measures the design that would replace it, on the real kernel, before
 * anybody builds it into pmurec:
 *
 *   - the command is forked behind a barrier, as pmurec does;
 *   - one dummy software event on it, inherited, reports every fork, comm
 *     (with exec) and exit of the tree as side-band records, on
 *     CLOCK_MONOTONIC, into one ring buffer;
 *   - each counter (the same six software events bench/count gives perf
 *     stat) is opened on the command with inherit and inherit_stat and
 *     enable_on_exec, its output sent to the same buffer
 *     (PERF_EVENT_IOC_SET_OUTPUT): the kernel writes a PERF_RECORD_READ with
 *     a thread's own values when the thread exits, so every incarnation
 *     gets its numbers without a stop or a read by the recorder;
 *   - the recorder drains the buffer while the command runs (poll, 50 ms
 *     at most), is the subreaper of orphans, and ends when the root was
 *     reaped and every task it saw fork has exited.
 *
 * It prints what it received (records per type, lost records, tasks seen,
 * the root's total and the sum of the exited threads' task-clock).  It is
 * a measurement, not a collector: nothing here is written to a bundle.
 *
 * Usage: sideband [-q] [-m] -- COMMAND [ARG...]
 *   -q  print nothing
 *   -m  ask for executable mappings (MMAP2) as well
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NEV 6
#define DATA_PAGES 256 /* 1 MiB of records between drains */

static const struct {
	const char *name;
	unsigned long long config;
} evs[NEV] = {
	{ "task-clock", PERF_COUNT_SW_TASK_CLOCK },      { "context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS }, { "page-faults", PERF_COUNT_SW_PAGE_FAULTS },
	{ "minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN }, { "major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ },
};

static long peo(struct perf_event_attr *a, pid_t pid)
{
	return syscall(SYS_perf_event_open, a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static void attr_common(struct perf_event_attr *a, bool user_only)
{
	a->size = sizeof(*a);
	a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_IDENTIFIER;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->inherit = 1;
	a->exclude_kernel = user_only;
	a->exclude_hv = 1;
}

struct tally {
	uint64_t n[32], lost, read_tc, forks, exits, tasks_live;
	uint64_t ids[NEV];
};

/* The record at data[off], size bytes, copied out when it wraps. */
static void one(struct tally *t, const struct perf_event_header *h)
{
	const unsigned char *p = (const unsigned char *)(h + 1);

	if (h->type < 32)
		t->n[h->type]++;
	switch (h->type) {
	case PERF_RECORD_FORK: {
		uint32_t pid, ppid, tid, ptid;

		memcpy(&pid, p, 4), memcpy(&ppid, p + 4, 4), memcpy(&tid, p + 8, 4), memcpy(&ptid, p + 12, 4);
		(void)pid, (void)ppid, (void)tid, (void)ptid;
		t->forks++;
		t->tasks_live++;
		break;
	}
	case PERF_RECORD_EXIT:
		t->exits++;
		if (t->tasks_live)
			t->tasks_live--;
		break;
	case PERF_RECORD_LOST: {
		uint64_t lost;

		memcpy(&lost, p + 8, 8);
		t->lost += lost;
		break;
	}
	case PERF_RECORD_READ: {
		/* pid, tid, then read_format TOTAL_TIME_ENABLED | RUNNING | ID:
		 * value, enabled, running, id */
		uint64_t value, id;

		memcpy(&value, p + 8, 8);
		memcpy(&id, p + 32, 8);
		if (id == t->ids[0])
			t->read_tc += value;
		break;
	}
	}
}

static void drain(struct perf_event_mmap_page *mp, size_t data_size, struct tally *t)
{
	unsigned char *data = (unsigned char *)mp + mp->data_offset;
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE), tail = mp->data_tail;
	unsigned char copy[65536 + 8];

	while (tail < head) {
		struct perf_event_header h;
		size_t off = tail % data_size;

		if (off + sizeof(h) <= data_size) {
			memcpy(&h, data + off, sizeof(h));
		} else {
			size_t a = data_size - off;

			memcpy(&h, data + off, a);
			memcpy((unsigned char *)&h + a, data, sizeof(h) - a);
		}
		if (h.size < sizeof(h) || tail + h.size > head)
			break;
		if (off + h.size <= data_size) {
			one(t, (const struct perf_event_header *)(const void *)(data + off));
		} else {
			size_t a = data_size - off;

			memcpy(copy, data + off, a);
			memcpy(copy + a, data, h.size - a);
			one(t, (const struct perf_event_header *)(const void *)copy);
		}
		tail += h.size;
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
}

int main(int argc, char **argv)
{
	int barrier[2], dfd, cfd[NEV], i, st, rst = 0, quiet = 0, maps = 0, argi = 1;
	struct perf_event_attr a;
	struct tally t = { 0 };
	size_t page = (size_t)sysconf(_SC_PAGESIZE), data_size = DATA_PAGES * page;
	struct perf_event_mmap_page *mp;
	bool user_only = false, root_done = false;
	pid_t pid;

	for (; argi < argc && argv[argi][0] == '-' && argv[argi][1] && argv[argi][1] != '-'; argi++) {
		if (!strcmp(argv[argi], "-q"))
			quiet = 1;
		else if (!strcmp(argv[argi], "-m"))
			maps = 1;
		else
			break;
	}
	if (argi < argc && !strcmp(argv[argi], "--"))
		argi++;
	if (argi >= argc) {
		fprintf(stderr, "usage: sideband [-q] [-m] -- COMMAND [ARG...]\n");
		return 2;
	}
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (pipe2(barrier, O_CLOEXEC) < 0)
		return perror("pipe2"), 2;
	pid = fork();
	if (pid < 0)
		return perror("fork"), 2;
	if (pid == 0) {
		char go;

		close(barrier[1]);
		if (read(barrier[0], &go, 1) != 1)
			_exit(127);
		execvp(argv[argi], argv + argi);
		_exit(127);
	}
	close(barrier[0]);

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	attr_common(&a, user_only);
	/* the kernel refuses to mmap an inherited per-task event (all
	 * children would write to one buffer): the buffer belongs to this
	 * event, of the root alone, and the inherited counters send their
	 * records to it */
	a.inherit = 0;
	a.watermark = 1;
	a.wakeup_watermark = (uint32_t)(data_size / 2);
	dfd = (int)peo(&a, pid);
	if (dfd < 0 && errno == EACCES) {
		/* perf_event_paranoid=2: user space only */
		user_only = true;
		a.exclude_kernel = 1;
		dfd = (int)peo(&a, pid);
	}
	if (dfd < 0)
		return fprintf(stderr, "sideband: dummy event: %s\n", strerror(errno)), kill(pid, SIGKILL), 2;
	mp = mmap(NULL, page + data_size, PROT_READ | PROT_WRITE, MAP_SHARED, dfd, 0);
	if (mp == MAP_FAILED)
		return fprintf(stderr, "sideband: mmap: %s\n", strerror(errno)), kill(pid, SIGKILL), 2;
	for (i = 0; i < NEV; i++) {
		memset(&a, 0, sizeof(a));
		a.type = PERF_TYPE_SOFTWARE;
		a.config = evs[i].config;
		attr_common(&a, user_only);
		a.inherit_stat = 1;
		if (i == 0) {
			/* side-band of the whole tree: fork, comm (exec), exit */
			a.task = 1;
			a.comm = 1;
			a.comm_exec = 1;
			/* -m: executable mappings too (the exec'd image's path,
			 * the objects for provenance) */
			a.mmap = (unsigned)maps;
			a.mmap2 = (unsigned)maps;
		}
		a.disabled = 1;
		a.enable_on_exec = 1;
		a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;
		cfd[i] = (int)peo(&a, pid);
		if (cfd[i] < 0 || ioctl(cfd[i], PERF_EVENT_IOC_SET_OUTPUT, dfd) < 0 ||
		    ioctl(cfd[i], PERF_EVENT_IOC_ID, &t.ids[i]) < 0)
			return fprintf(stderr, "sideband: %s: %s\n", evs[i].name, strerror(errno)), kill(pid, SIGKILL), 2;
	}
	t.tasks_live = 1; /* the root */
	if (write(barrier[1], "g", 1) != 1)
		return perror("release"), 2;
	close(barrier[1]);

	for (;;) {
		struct pollfd pf = { dfd, POLLIN, 0 };
		pid_t w;

		poll(&pf, 1, 50);
		drain(mp, data_size, &t);
		while ((w = waitpid(-1, &st, WNOHANG)) > 0)
			if (w == pid)
				root_done = true, rst = st;
		if (root_done && (w < 0 && errno == ECHILD)) {
			/* every child reaped: the last records are in the buffer */
			drain(mp, data_size, &t);
			break;
		}
	}
	{
		uint64_t v[4] = { 0 };

		if (read(cfd[0], v, sizeof(v)) != (ssize_t)sizeof(v))
			v[0] = 0;
		if (!quiet)
			fprintf(stderr,
				"sideband: %s; records: fork %" PRIu64 ", comm %" PRIu64 ", mmap2 %" PRIu64 ", exit %" PRIu64
				", read %" PRIu64 ", lost %" PRIu64 "; task-clock: total %" PRIu64
				" ns, exited threads %" PRIu64 " ns\n",
				user_only ? "user space only" : "user and kernel", t.n[PERF_RECORD_FORK],
				t.n[PERF_RECORD_COMM], t.n[PERF_RECORD_MMAP2], t.n[PERF_RECORD_EXIT], t.n[PERF_RECORD_READ], t.lost, v[0],
				t.read_tc);
	}
	return WIFEXITED(rst) ? WEXITSTATUS(rst) : 128 + WTERMSIG(rst);
}
