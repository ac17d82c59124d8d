/*
 * Runs a command under the eBPF follower (backends/linux/follow_bpf.c) and
 * prints what it saw, for tests/cli/t1700-bpf-follower.bats and the cost
 * numbers in docs/ebpf-follower.md:
 *   bpf-follow-dump [--ring BYTES] [--btf auto|full|min] [--interval MS]
 *                   [--max-members N] [--count EV[,EV]] [--exit-kprobe] [--quiet] [--sleep] [--load-only]
 *                   -- CMD ARGS...
 * The command is forked behind a barrier (it waits on a pipe); the follower
 * opens, the child's pid goes into the members map, then the child is
 * released to exec.  The ring is drained every --interval ms (default 20)
 * until the root is reaped and the members map is empty, then once more.
 * --count EV[,EV]: per-thread counts of up to two of cycles, instructions,
 * cpu-clock by the per-CPU, charged-at-context-switch method: a "counts"
 * line before each thread's exit line; the stats add count_fail (slices
 * lost) per CPU and ev_cpus (CPUs where every event opened).
 * --exit-kprobe: the pre-6.16 exit hook (kprobe taskstats_exit) even where
 * sched_process_exit has group_dead, so a new kernel tests the old path.
 * --sleep: sleep between drains instead of polling the ring's fd (which
 * wakes when the ring is half full), so that a tiny ring must overflow.
 * stdout: one JSON object per record ({"kind":"fork"|"exec"|"exit",...};
 * not with --quiet), then {"kind":"stats",...}.  When the follower is
 * unavailable: {"kind":"unavailable","avail":...,"reason":...,"remedy":...}
 * and exit 3 (the command never runs).  --load-only opens, prints the
 * stats with the load timings, closes and prints {"kind":"close",
 * "close_ms":...}.  Exit 0 otherwise, 2 on a usage or
 * system error.
 *   bpf-follow-dump --decode FILE...
 * decodes each file as one ring sample: "FILE ok KIND" or "FILE corrupt:
 * DETAIL" per file (the decoder's tests; exit 0).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "linux/follow_bpf.h"

static const char *AVAIL[] = {
	[PMU_BPF_OK] = "ok",           [PMU_BPF_NOT_BUILT] = "not-built", [PMU_BPF_NO_PRIVILEGE] = "no-privilege",
	[PMU_BPF_NO_BTF] = "no-btf",   [PMU_BPF_VERIFIER] = "verifier",   [PMU_BPF_ATTACH] = "attach",
	[PMU_BPF_KERNEL] = "kernel",
};

static bool quiet;
static long page_size;

static void jstr(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = *s;
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* --count: the events of the per-CPU, charged-at-context-switch method */
static const char *ev_name[PMU_BPF_NEV];
static struct perf_event_attr ev_attr[PMU_BPF_NEV];

static int parse_count(char *list, struct pmu_bpf_follow_opts *o)
{
	static const struct {
		const char *name;
		__u32 type;
		__u64 config;
	} known[] = {
		{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
		{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
		/* a software event: the method on a machine without a PMU */
		{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	};
	for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
		size_t k;
		if (o->nev >= PMU_BPF_NEV)
			return -1;
		for (k = 0; k < sizeof(known) / sizeof(known[0]) && strcmp(known[k].name, t); k++)
			;
		if (k == sizeof(known) / sizeof(known[0]))
			return -1;
		ev_name[o->nev] = known[k].name;
		ev_attr[o->nev].type = known[k].type;
		ev_attr[o->nev].config = known[k].config;
		o->ev_attr[o->nev] = &ev_attr[o->nev];
		o->nev++;
	}
	return o->nev ? 0 : -1;
}

static int on_rec(const union pmu_bpf_rec *r, void *arg)
{
	(void)arg;
	if (quiet)
		return 0;
	printf("{\"seq\":%llu,\"time_ns\":%llu,\"cpu\":%u,", (unsigned long long)r->h.seq,
	       (unsigned long long)r->h.time_ns, r->h.cpu);
	switch (r->h.kind) {
	case PMU_BPF_REC_FORK: {
		const struct pmu_bpf_fork *f = &r->fork;
		printf("\"kind\":\"fork\",\"thread\":%s,\"notrack\":%s,\"parent_tgid\":%u,\"parent_tid\":%u,"
		       "\"child_tgid\":%u,\"child_tid\":%u,\"parent_start_ticks\":%llu,\"child_start_ns\":%llu,"
		       "\"child_start_ticks\":%llu}\n",
		       f->flags & PMU_BPF_FORK_THREAD ? "true" : "false", f->flags & PMU_BPF_FORK_NOTRACK ? "true" : "false",
		       f->parent_tgid, f->parent_tid, f->child_tgid, f->child_tid,
		       (unsigned long long)f->parent_start_ticks, (unsigned long long)f->child_start_ns,
		       (unsigned long long)f->child_start_ticks);
		break;
	}
	case PMU_BPF_REC_EXEC: {
		const struct pmu_bpf_exec *e = &r->exec;
		printf("\"kind\":\"exec\",\"tgid\":%u,\"tid\":%u,\"old_tid\":%u,\"start_ticks\":%llu,\"truncated\":%s,"
		       "\"argv_len\":%u,\"argv_total\":%u,\"argv_truncated\":%s,\"filename\":",
		       e->tgid, e->tid, e->old_tid, (unsigned long long)e->start_ticks,
		       e->flags & PMU_BPF_EXEC_TRUNCATED ? "true" : "false", e->argv_len, e->argv_total,
		       e->flags & PMU_BPF_EXEC_ARGV_TRUNCATED ? "true" : "false");
		jstr(e->filename);
		printf("}\n");
		break;
	}
	case PMU_BPF_REC_COUNTS: {
		const struct pmu_bpf_counts *c = &r->counts;
		printf("\"kind\":\"counts\",\"tgid\":%u,\"tid\":%u,\"noentry\":%s,\"slices\":%u,\"read_fail\":%u,"
		       "\"events\":[",
		       c->tgid, c->tid, c->flags & PMU_BPF_COUNTS_NOENTRY ? "true" : "false", c->slices, c->read_fail);
		for (unsigned i = 0; i < c->nev; i++)
			printf("%s{\"name\":\"%s\",\"value\":%llu,\"enabled_ns\":%llu,\"running_ns\":%llu}", i ? "," : "",
			       ev_name[i], (unsigned long long)c->value[i], (unsigned long long)c->enabled_ns[i],
			       (unsigned long long)c->running_ns[i]);
		printf("]}\n");
		break;
	}
	case PMU_BPF_REC_EXIT: {
		const struct pmu_bpf_exit *x = &r->exit;
		printf("\"kind\":\"exit\",\"tgid\":%u,\"tid\":%u,\"group_dead\":%s,\"exit_code\":%d,", x->tgid, x->tid,
		       x->flags & PMU_BPF_EXIT_GROUP_DEAD ? "true" : "false", x->exit_code);
		if (x->flags & PMU_BPF_EXIT_GROUP_DEAD) {
			int st = x->group_status;
			if (WIFSIGNALED(st))
				printf("\"signal\":%d,", WTERMSIG(st));
			else
				printf("\"status\":%d,", WEXITSTATUS(st));
			printf("\"group_status\":%d,\"max_rss_bytes\":%llu,", st,
			       (unsigned long long)x->maxrss_pages * page_size);
		}
		printf("\"start_ticks\":%llu,\"sum_exec_runtime_ns\":%llu,\"utime_ns\":%llu,\"stime_ns\":%llu,"
		       "\"min_flt\":%llu,\"maj_flt\":%llu,\"nvcsw\":%llu,\"nivcsw\":%llu,\"migrations\":%llu,"
		       "\"rchar\":%llu,\"wchar\":%llu,\"read_bytes\":%llu,\"write_bytes\":%llu,\"early\":%s,\"comm\":",
		       (unsigned long long)x->start_ticks, (unsigned long long)x->sum_exec_runtime_ns,
		       (unsigned long long)x->utime_ns, (unsigned long long)x->stime_ns, (unsigned long long)x->min_flt,
		       (unsigned long long)x->maj_flt, (unsigned long long)x->nvcsw, (unsigned long long)x->nivcsw,
		       (unsigned long long)x->nr_migrations, (unsigned long long)x->rchar, (unsigned long long)x->wchar,
		       (unsigned long long)x->read_bytes, (unsigned long long)x->write_bytes,
		       x->flags & PMU_BPF_EXIT_EARLY ? "true" : "false");
		jstr(x->comm);
		printf("}\n");
		break;
	}
	}
	return 0;
}

static void print_stats(struct pmu_bpf_follow *f, int root_status, double wall_ms)
{
	struct pmu_bpf_follow_stats st;
	pmu_bpf_follow_stats(f, &st);
	printf("{\"kind\":\"stats\",\"assigned\":%llu,\"delivered\":%llu,\"dropped\":%llu,\"map_fail\":%llu,"
	       "\"malformed\":%llu,\"gaps\":%llu,\"dropped_cpu\":[",
	       (unsigned long long)st.assigned, (unsigned long long)st.delivered, (unsigned long long)st.dropped,
	       (unsigned long long)st.map_fail, (unsigned long long)st.malformed, (unsigned long long)st.gaps);
	for (unsigned c = 0; c < st.ncpu; c++)
		printf("%s%llu", c ? "," : "", (unsigned long long)st.dropped_cpu[c]);
	printf("],\"map_fail_cpu\":[");
	for (unsigned c = 0; c < st.ncpu; c++)
		printf("%s%llu", c ? "," : "", (unsigned long long)st.map_fail_cpu[c]);
	printf("],\"count_fail\":%llu,\"count_fail_cpu\":[", (unsigned long long)st.count_fail);
	for (unsigned c = 0; c < st.ncpu && st.count_fail_cpu; c++)
		printf("%s%llu", c ? "," : "", (unsigned long long)st.count_fail_cpu[c]);
	printf("],\"ev_cpus\":%u,\"open_ms\"", st.ev_cpus);
	printf(":%.3f,\"load_ms\":%.3f,\"attach_ms\":%.3f,\"btf\":", st.open_ms, st.load_ms, st.attach_ms);
	jstr(st.btf_source);
	printf(",\"exit_hook\":");
	jstr(st.exit_hook);
	if (root_status >= 0)
		printf(",\"root_status\":%d,\"wall_ms\":%.1f", root_status, wall_ms);
	printf("}\n");
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int decode_files(int n, char **files)
{
	static const char *kinds[] = {[PMU_BPF_REC_FORK] = "fork", [PMU_BPF_REC_EXEC] = "exec",
	                              [PMU_BPF_REC_EXIT] = "exit", [PMU_BPF_REC_COUNTS] = "counts"};
	for (int k = 0; k < n; k++) {
		unsigned char buf[sizeof(union pmu_bpf_rec) + 1]; /* one byte more: a longer file is refused */
		union pmu_bpf_rec r;
		FILE *fp = fopen(files[k], "rb");
		if (!fp) {
			fprintf(stderr, "bpf-follow-dump: cannot open '%s': %s\n", files[k], strerror(errno));
			return 2;
		}
		size_t len = fread(buf, 1, sizeof(buf), fp);
		fclose(fp);
		if (pmu_bpf_decode(buf, len, &r))
			printf("%s corrupt: %s\n", files[k], pmu_error_detail());
		else
			printf("%s ok %s\n", files[k], kinds[r.h.kind]);
	}
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: bpf-follow-dump [--ring BYTES] [--btf auto|full|min] [--interval MS] "
	                "[--max-members N] [--count EV[,EV]] [--exit-kprobe] [--quiet] [--sleep] [--load-only] -- CMD ARGS...\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct pmu_bpf_follow_opts o = {0};
	struct pmu_bpf_why why;
	struct pmu_bpf_follow *f;
	int interval = 20, i;
	bool load_only = false, sleep_only = false;

	page_size = sysconf(_SC_PAGESIZE);
	if (argc > 1 && !strcmp(argv[1], "--decode"))
		return decode_files(argc - 2, argv + 2);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			i++;
			break;
		} else if (!strcmp(a, "--quiet")) {
			quiet = true;
		} else if (!strcmp(a, "--sleep")) {
			sleep_only = true;
		} else if (i + 1 < argc && !strcmp(a, "--count")) {
			if (parse_count(argv[++i], &o))
				return usage();
		} else if (!strcmp(a, "--exit-kprobe")) {
			o.exit_kprobe = true;
		} else if (!strcmp(a, "--load-only")) {
			load_only = true;
		} else if (i + 1 < argc && !strcmp(a, "--ring")) {
			o.ring_bytes = strtoull(argv[++i], NULL, 0);
		} else if (i + 1 < argc && !strcmp(a, "--interval")) {
			interval = atoi(argv[++i]);
		} else if (i + 1 < argc && !strcmp(a, "--max-members")) {
			o.max_members = strtoul(argv[++i], NULL, 0);
		} else if (i + 1 < argc && !strcmp(a, "--btf")) {
			const char *m = argv[++i];
			o.btf = !strcmp(m, "full") ? PMU_BPF_BTF_FULL : !strcmp(m, "min") ? PMU_BPF_BTF_MIN : PMU_BPF_BTF_AUTO;
		} else {
			return usage();
		}
	}
	if (load_only) {
		if (pmu_bpf_follow_open(&o, &f, &why))
			goto unavailable;
		print_stats(f, -1, 0);
		double c0 = now_ms();
		pmu_bpf_follow_close(f);
		printf("{\"kind\":\"close\",\"close_ms\":%.3f}\n", now_ms() - c0);
		return 0;
	}
	if (i >= argc || interval <= 0)
		return usage();

	/* the barrier: the child execs only after its pid is a member; on EOF
	 * without the go byte (the follower failed, or we died) it exits 127
	 * without running anything */
	int go[2];
	if (pipe2(go, O_CLOEXEC)) {
		perror("bpf-follow-dump: pipe");
		return 2;
	}
	double t0 = now_ms();
	pid_t child = fork();
	if (child < 0) {
		perror("bpf-follow-dump: fork");
		return 2;
	}
	if (child == 0) {
		char b;
		close(go[1]);
		if (read(go[0], &b, 1) != 1)
			_exit(127);
		execvp(argv[i], argv + i);
		fprintf(stderr, "bpf-follow-dump: cannot run '%s': %s\n", argv[i], strerror(errno));
		_exit(127);
	}
	close(go[0]);
	if (pmu_bpf_follow_open(&o, &f, &why)) {
		close(go[1]);
		waitpid(child, NULL, 0);
		goto unavailable;
	}
	if (pmu_bpf_follow_add_root(f, child)) {
		fprintf(stderr, "bpf-follow-dump: %s\n", pmu_error_detail());
		close(go[1]);
		waitpid(child, NULL, 0);
		pmu_bpf_follow_close(f);
		return 2;
	}
	if (write(go[1], "g", 1) != 1) {
		perror("bpf-follow-dump: release");
		return 2;
	}
	close(go[1]);

	/* the root's pidfd wakes the loop at its exit, so a short command is
	 * not held for a whole interval */
	int pidfd = syscall(SYS_pidfd_open, child, 0);
	struct pollfd pfd[2] = {{.fd = pmu_bpf_follow_fd(f), .events = POLLIN}, {.fd = pidfd, .events = POLLIN}};
	int status = -1;
	for (;;) {
		if (sleep_only)
			nanosleep(&(struct timespec){interval / 1000, interval % 1000 * 1000000L}, NULL);
		else
			poll(pfd, status < 0 && pidfd >= 0 ? 2 : 1, interval);
		if (pmu_bpf_follow_drain(f, on_rec, NULL) < 0) {
			fprintf(stderr, "bpf-follow-dump: %s\n", pmu_error_detail());
			break;
		}
		if (status < 0) {
			int st;
			if (waitpid(child, &st, WNOHANG) == child)
				status = st;
		}
		size_t n = 1;
		if (status >= 0 && (pmu_bpf_follow_members(f, &n) || n == 0))
			break;
	}
	pmu_bpf_follow_drain(f, on_rec, NULL);
	if (pidfd >= 0)
		close(pidfd);
	double wall = now_ms() - t0;
	print_stats(f, status, wall);
	pmu_bpf_follow_close(f);
	if (fflush(stdout) || ferror(stdout))
		return 2;
	return 0;

unavailable:
	printf("{\"kind\":\"unavailable\",\"avail\":\"%s\",\"reason\":", AVAIL[why.avail]);
	jstr(why.reason);
	printf(",\"remedy\":");
	jstr(why.remedy ? why.remedy : "");
	printf("}\n");
	return 3;
}
