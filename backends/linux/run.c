/*
 * Launch behind a barrier and follow the cohort with ptrace(2).
 *
 * Why ptrace: it is the one interface that, unprivileged (Yama scope 1
 * lets a parent trace its descendants), reports every fork, clone, exec
 * and exit of the tree *before* the task goes on, so that each
 * incarnation's /proc files (stat, status, io) can be read at its exit
 * event, while it still exists, and its exit status is seen even when its
 * own parent reaps it.  perf task/comm records see the same births but
 * not exit codes or resources.  Only events stop the tracee (no syscall
 * tracing), so the cost is a few context switches per process.
 *
 * The barrier: the child blocks on a pipe until the recorder has seized
 * it (PTRACE_SEIZE with EXITKILL: if the recorder dies, the cohort dies
 * with it, so nothing runs unobserved); a close-on-exec pipe carries
 * exec's errno back when exec fails.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "error.h"
#include "util.h"

volatile int pmu_backend_stop_signal;
volatile int pmu_backend_abort;

const char *const pmu_res_names[PMU_RES_COUNT_] = {
	"cpu_user_ns", "cpu_system_ns", "max_rss_bytes", "minor_faults", "major_faults",
	"voluntary_switches", "involuntary_switches", "read_bytes", "write_bytes",
};

/*
 * Live tid -> incarnation index: the follower looks up the task of every
 * wait event, so a scan of the cohort would make following quadratic in
 * its size.  Open addressing, linear probing; a deleted slot is a
 * tombstone until the next rehash.  Only tasks of incarnations not yet
 * ended are here: memory follows what runs, not what ran.
 */
struct pmu_tidmap {
	size_t cap, used, tombs; /* used: live keys */
	struct tidslot {
		pid_t tid;       /* 0 empty, -1 deleted */
		int32_t idx;
	} *s;
};

static size_t tid_hash(pid_t tid, size_t cap)
{
	return ((uint32_t)tid * 2654435761u) & (cap - 1);
}

static void tidmap_free(struct pmu_tidmap *m)
{
	if (m)
		free(m->s);
	free(m);
}

static long tidmap_get(const struct pmu_tidmap *m, pid_t tid)
{
	if (!m || tid <= 0)
		return -1;
	for (size_t i = tid_hash(tid, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->s[i].tid == tid)
			return m->s[i].idx;
		if (m->s[i].tid == 0)
			return -1;
	}
}

static int tidmap_grow(struct pmu_tidmap *m)
{
	size_t cap = 64;
	struct tidslot *s;

	while (cap < 4 * (m->used + 1))
		cap *= 2;
	if (!(s = calloc(cap, sizeof(*s))))
		return -1;
	for (size_t i = 0; i < m->cap; i++)
		if (m->s[i].tid > 0) {
			size_t j = tid_hash(m->s[i].tid, cap);

			while (s[j].tid)
				j = (j + 1) & (cap - 1);
			s[j] = m->s[i];
		}
	free(m->s);
	m->s = s;
	m->cap = cap;
	m->tombs = 0;
	return 0;
}

/* tid now belongs to idx (the newest incarnation wins). */
static int tidmap_put(struct pmu_tidmap **mp, pid_t tid, long idx)
{
	struct pmu_tidmap *m = *mp;
	size_t i;

	if (!m && !(m = *mp = calloc(1, sizeof(*m))))
		return -1;
	if (2 * (m->used + m->tombs + 1) > m->cap && tidmap_grow(m) < 0)
		return -1;
	for (i = tid_hash(tid, m->cap); m->s[i].tid != 0; i = (i + 1) & (m->cap - 1))
		if (m->s[i].tid == tid) {
			m->s[i].idx = (int32_t)idx;
			return 0;
		}
	/* not present: the probe stopped at an empty slot; reuse a tombstone before it */
	for (size_t j = tid_hash(tid, m->cap); j != i; j = (j + 1) & (m->cap - 1))
		if (m->s[j].tid == -1) {
			m->s[j] = (struct tidslot){ tid, (int32_t)idx };
			m->tombs--;
			m->used++;
			return 0;
		}
	m->s[i] = (struct tidslot){ tid, (int32_t)idx };
	m->used++;
	return 0;
}

/* Forget tid if it still belongs to idx. */
static void tidmap_del(struct pmu_tidmap *m, pid_t tid, long idx)
{
	if (!m || tid <= 0)
		return;
	for (size_t i = tid_hash(tid, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->s[i].tid == 0)
			return;
		if (m->s[i].tid == tid) {
			if (m->s[i].idx == idx) {
				m->s[i].tid = -1;
				m->used--;
				m->tombs++;
			}
			return;
		}
	}
}

void pmu_cohort_release(struct pmu_cohort *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->incs[i].tids);
		if (c->incs[i].d)
			free(c->incs[i].d->res);
		free(c->incs[i].d);
	}
	free(c->incs);
	free(c->by_pid);
	tidmap_free(c->tidmap);
	memset(c, 0, sizeof(*c));
}

static bool has_tid(const struct pmu_incarnation *in, pid_t tid)
{
	for (uint32_t k = 0; k < in->ntids; k++)
		if (in->tids[k] == tid)
			return true;
	return false;
}

static bool find_ok(const struct pmu_incarnation *in, pid_t pid, pid_t tid, uint64_t t0, uint64_t t1)
{
	return in->pid == pid && t0 >= in->start_ns && !(in->ended && t1 > in->end_ns) && has_tid(in, tid);
}

const struct pmu_incarnation *pmu_cohort_find(const struct pmu_cohort *c, pid_t pid, pid_t tid, uint64_t t0,
					      uint64_t t1)
{
	if (c->by_pid) {
		/* the first index of pid, then its incarnations in start order */
		size_t lo = 0, hi = c->n;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (c->incs[c->by_pid[mid]].pid < pid)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < c->n && c->incs[c->by_pid[lo]].pid == pid; lo++)
			if (find_ok(&c->incs[c->by_pid[lo]], pid, tid, t0, t1))
				return &c->incs[c->by_pid[lo]];
		return NULL;
	}
	for (size_t i = 0; i < c->n; i++)
		if (find_ok(&c->incs[i], pid, tid, t0, t1))
			return &c->incs[i];
	return NULL;
}

static const struct pmu_cohort *sort_cohort;

static int cmp_by_pid(const void *a, const void *b)
{
	const struct pmu_incarnation *x = &sort_cohort->incs[*(const uint32_t *)a],
				     *y = &sort_cohort->incs[*(const uint32_t *)b];

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->id - y->id; /* ids are in start order */
}

/* The pid index of pmu_cohort_find(); without memory, the linear scan stays. */
static void index_by_pid(struct pmu_cohort *c)
{
	free(c->by_pid);
	c->by_pid = c->n ? malloc(c->n * sizeof(*c->by_pid)) : NULL;
	if (!c->by_pid)
		return;
	for (size_t i = 0; i < c->n; i++)
		c->by_pid[i] = (uint32_t)i;
	sort_cohort = c;
	qsort(c->by_pid, c->n, sizeof(*c->by_pid), cmp_by_pid);
	sort_cohort = NULL;
}

/* The newest incarnation not ended that has tid among its threads. */
static struct pmu_incarnation *inc_of_tid(struct pmu_cohort *c, pid_t tid)
{
	long i = tidmap_get(c->tidmap, tid);

	return i >= 0 ? &c->incs[i] : NULL;
}

static struct pmu_incarnation *inc_of_pid(struct pmu_cohort *c, pid_t pid)
{
	struct pmu_incarnation *in = inc_of_tid(c, pid);

	return in && in->pid == pid ? in : NULL;
}

/* The sink's calls: after its first error, none. */
#define SINK(c, op, ...) \
	do { \
		if ((c)->sink && (c)->sink->op && !(c)->err) \
			(c)->err = (c)->sink->op((c)->sink->ctx, __VA_ARGS__); \
	} while (0)

/* 0 added, 1 known already, 2 refused at the bound, or a negative pmu_err. */
static int add_tid(struct pmu_cohort *c, struct pmu_incarnation *in, pid_t tid)
{
	if (has_tid(in, tid))
		return 1;
	if (c->nthreads >= (c->max_threads ? c->max_threads : PMU_COHORT_MAX_THREADS)) {
		if (!c->limit_reason[0])
			snprintf(c->limit_reason, sizeof(c->limit_reason),
				 "the cohort reached %zu threads, the most a bundle holds: it was sent SIGTERM",
				 c->nthreads);
		return 2;
	}
	/* capacity: the power of two at or above ntids */
	if (!in->ntids || !(in->ntids & (in->ntids - 1))) {
		pid_t *t = realloc(in->tids, (in->ntids ? 2 * (size_t)in->ntids : 1) * sizeof(*t));

		if (!t)
			return pmu_error(PMU_ERR_NOMEM, "out of memory");
		in->tids = t;
	}
	if (tidmap_put(&c->tidmap, tid, (long)(in - c->incs)) < 0)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	in->tids[in->ntids++] = tid;
	c->nthreads++;
	SINK(c, thread, in, tid);
	if (c->launch && c->launch->on_task)
		c->launch->on_task(c->launch->ctx, in->id, in->pid, tid, c->task_flags, pmu_now_mono_ns());
	return 0;
}

/*
 * A small /proc file into buf (NUL-terminated), or -1 with errno.  The
 * follower reads several per process while the process waits at a ptrace
 * stop: no allocation, no fstat, one buffer on the stack.
 */
static ssize_t proc_read(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t n = 0;

	if (fd < 0)
		return -1;
	while (len + 1 < cap && (n = read(fd, buf + len, cap - 1 - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (n < 0)
		return -1;
	buf[len] = '\0';
	return (ssize_t)len;
}

static void read_comm(pid_t pid, char *out, size_t n)
{
	char path[64], s[64];
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	out[0] = '\0';
	if ((len = proc_read(path, s, sizeof(s))) > 0) {
		while (len && s[len - 1] == '\n')
			s[--len] = '\0';
		snprintf(out, n, "%.31s", s);
	}
	if (!out[0])
		snprintf(out, n, "?");
}

/* "Key:\tvalue" lines of /proc/PID/status, read once: vals[i] for keys[i],
 * -1 when absent or unreadable. */
static void status_fields(pid_t pid, const char *const *keys, long long *vals, int n)
{
	char path[64], s[8192], *p;

	for (int i = 0; i < n; i++)
		vals[i] = -1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (proc_read(path, s, sizeof(s)) < 0)
		return;
	for (p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		for (int i = 0; i < n; i++) {
			size_t kl = strlen(keys[i]);

			if (!strncmp(p, keys[i], kl) && p[kl] == ':')
				vals[i] = strtoll(p + kl + 1, NULL, 10);
		}
}

static struct pmu_incarnation *add_inc(struct pmu_cohort *c, pid_t pid, int parent, uint64_t t, bool preexisting)
{
	struct pmu_incarnation *in;
	size_t max = c->max_incs ? c->max_incs : PMU_COHORT_MAX_INCARNATIONS;

	if (c->nthreads >= (c->max_threads ? c->max_threads : PMU_COHORT_MAX_THREADS) && !c->limit_reason[0])
		snprintf(c->limit_reason, sizeof(c->limit_reason),
			 "the cohort reached %zu threads, the most a bundle holds: it was sent SIGTERM", c->nthreads);
	if (c->limit_reason[0])
		return NULL;
	if (c->n >= max) {
		if (!c->limit_reason[0])
			snprintf(c->limit_reason, sizeof(c->limit_reason),
				 "the cohort reached %zu incarnations, the most a bundle holds: it was sent SIGTERM", max);
		return NULL;
	}
	if (pmu_grow(&c->incs, &c->cap, c->n, sizeof(*c->incs), 16))
		return NULL;
	in = &c->incs[c->n];
	memset(in, 0, sizeof(*in));
	if (!(in->d = calloc(1, sizeof(*in->d))))
		return NULL;
	in->id = (int)++c->n;
	in->parent = parent;
	in->pid = pid;
	in->start_ns = t;
	in->preexisting = preexisting;
	pmu_pid_starttime((int)pid, &in->boot_start);
	read_comm(pid, in->d->comm, sizeof(in->d->comm));
	SINK(c, joined, in);
	if (add_tid(c, in, pid) < 0) {
		/* its record is written: the stream cannot be finished */
		if (!c->err)
			c->err = pmu_error(PMU_ERR_NOMEM, "out of memory");
		free(in->d);
		c->n--;
		return NULL;
	}
	c->live_tasks++;
	c->live_incs++;
	return in;
}

static void add_exec(struct pmu_cohort *c, struct pmu_incarnation *in, pid_t pid, uint64_t t)
{
	char link[64], path[4096];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, path, sizeof(path) - 1);
	if (n < 0)
		snprintf(path, sizeof(path), "?");
	else
		path[n] = '\0';
	SINK(c, exec, in, t, path);
	read_comm(pid, in->d->comm, sizeof(in->d->comm));
}

static void res_set(struct pmu_resource *r, uint64_t v, const char *source)
{
	r->ok = true;
	r->value = v;
	r->source = source;
	r->reason[0] = '\0';
	r->remedy = NULL;
}

static void res_unavail(struct pmu_resource *r, const char *source, const char *remedy, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void res_unavail(struct pmu_resource *r, const char *source, const char *remedy, const char *fmt, ...)
{
	va_list ap;

	r->ok = false;
	r->source = source;
	r->remedy = remedy;
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
}

/* The nine totals of in, made when the first is read: until then none is
 * kept (an incarnation still running holds no reasons). */
static struct pmu_resource *res_of(struct pmu_incarnation *in)
{
	if (!in->d->res && (in->d->res = calloc(PMU_RES_COUNT_, sizeof(*in->d->res))))
		for (int r = 0; r < PMU_RES_COUNT_; r++)
			snprintf(in->d->res[r].reason, sizeof(in->d->res[r].reason),
				 "the incarnation's end was not observed");
	return in->d->res;
}

/* Executable file mappings of a process, for provenance (the sink keeps
 * the distinct ones, up to its bound). */
static void read_objects(struct pmu_cohort *c, pid_t pid)
{
	char path[64], *s = NULL, *line, *save = NULL;

	if (!c->sink || !c->sink->object)
		return;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (pmu_read_file(AT_FDCWD, path, 16 << 20, &s, NULL))
		return;
	for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char perms[8] = "", *file = strchr(line, '/');

		if (sscanf(line, "%*s %7s", perms) != 1 || !strchr(perms, 'x') || !file)
			continue;
		SINK(c, object, file);
	}
	free(s);
}

/*
 * Read a process's totals at its exit event, while /proc still has it.
 * /proc/PID/stat counts every thread of the process (living and dead);
 * context switches in /proc/PID/status are the leader thread's own.
 */
static void read_resources(struct pmu_incarnation *in)
{
	static const char *const remedy = "run pmurec as the owner of the command, or as root";
	static const char *const keys[] = { "VmHWM", "voluntary_ctxt_switches", "nonvoluntary_ctxt_switches" };
	char path[64], s[4096], *p = NULL;
	long tick = sysconf(_SC_CLK_TCK);
	long long v, vals[3];
	struct pmu_resource *res = res_of(in);

	if (!res)
		return; /* out of memory: the end writes "not observed" */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)in->pid);
	if (proc_read(path, s, sizeof(s)) > 0 && (p = strrchr(s, ')'))) {
		unsigned long long f[64] = { 0 };
		int n;

		/* p + 2 is field 3, the state letter: skip it, then read numbers */
		p += 2;
		p = strchr(p, ' ');
		for (n = 4, p = p ? p + 1 : ""; *p && n < 60; n++) {
			f[n] = strtoull(p, &p, 10);
			if (*p != ' ')
				break;
			p++;
		}
		/* fields (1-based, proc(5)): 10 minflt, 12 majflt, 14 utime, 15 stime */
		res_set(&res[PMU_RES_MINOR_FAULTS], f[10], "/proc/PID/stat minflt at exit");
		res_set(&res[PMU_RES_MAJOR_FAULTS], f[12], "/proc/PID/stat majflt at exit");
		res_set(&res[PMU_RES_CPU_USER_NS], f[14] * (1000000000ull / (unsigned long long)tick),
			"/proc/PID/stat utime at exit (clock ticks)");
		res_set(&res[PMU_RES_CPU_SYSTEM_NS], f[15] * (1000000000ull / (unsigned long long)tick),
			"/proc/PID/stat stime at exit (clock ticks)");
	} else {
		int e = errno;

		for (int r = PMU_RES_CPU_USER_NS; r <= PMU_RES_MAJOR_FAULTS; r++)
			if (r != PMU_RES_MAX_RSS_BYTES)
				res_unavail(&res[r], "/proc/PID/stat", remedy, "cannot read '%s': %s", path,
					    p ? "unexpected format" : strerror(e));
	}
	status_fields(in->pid, keys, vals, 3);
	v = vals[0];
	if (v >= 0)
		res_set(&res[PMU_RES_MAX_RSS_BYTES], (uint64_t)v * 1024, "/proc/PID/status VmHWM at exit");
	else
		res_unavail(&res[PMU_RES_MAX_RSS_BYTES], "/proc/PID/status", remedy,
			    "VmHWM not readable at exit");
	v = vals[1];
	if (v >= 0 && (size_t)in->ntids == 1)
		res_set(&res[PMU_RES_VOLUNTARY_SWITCHES], (uint64_t)v, "/proc/PID/status at exit");
	else
		res_unavail(&res[PMU_RES_VOLUNTARY_SWITCHES], "/proc/PID/status", "count them per thread with the counting collector (pmurec -e context-switches)",
			    v < 0 ? "not readable at exit" : "the process had %zu threads; /proc/PID/status counts the leader only",
			    (size_t)in->ntids);
	v = vals[2];
	if (v >= 0 && (size_t)in->ntids == 1)
		res_set(&res[PMU_RES_INVOLUNTARY_SWITCHES], (uint64_t)v, "/proc/PID/status at exit");
	else
		res_unavail(&res[PMU_RES_INVOLUNTARY_SWITCHES], "/proc/PID/status", "count them per thread with the counting collector (pmurec -e context-switches)",
			    v < 0 ? "not readable at exit" : "the process had %zu threads; /proc/PID/status counts the leader only",
			    (size_t)in->ntids);
	/* byte counts: see thread_io() and end_inc() */
}

/*
 * A thread's own byte counts, read at its exit event.  /proc/PID/io would
 * be wrong here: it adds the counts of every child the process reaped, so a
 * shell would be charged for its commands' reads.  /proc/PID/task/TID/io
 * is the thread's alone; summed over the threads of a process at their
 * exits, it is the process's own.
 */
static void thread_io(struct pmu_incarnation *in, pid_t tid)
{
	char path[96], s[1024], *r, *w;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/io", (int)in->pid, (int)tid);
	if (proc_read(path, s, sizeof(s)) > 0 && (r = strstr(s, "rchar: ")) && (w = strstr(s, "wchar: "))) {
		in->d->io_read += strtoull(r + 7, NULL, 10);
		in->d->io_write += strtoull(w + 7, NULL, 10);
		in->d->io_threads++;
	} else {
		in->d->io_failed = true;
	}
}

static void keep_rusage(struct pmu_launch_result *res, const struct rusage *ru)
{
	res->have_rusage = true;
	res->ru_user_ns = (uint64_t)ru->ru_utime.tv_sec * 1000000000ull + (uint64_t)ru->ru_utime.tv_usec * 1000u;
	res->ru_system_ns = (uint64_t)ru->ru_stime.tv_sec * 1000000000ull + (uint64_t)ru->ru_stime.tv_usec * 1000u;
	res->ru_maxrss_bytes = (uint64_t)ru->ru_maxrss * 1024;
	res->ru_minflt = (uint64_t)ru->ru_minflt;
	res->ru_majflt = (uint64_t)ru->ru_majflt;
}

/* mode none: the root's totals from wait4, which include the descendants it waited for. */
static void rusage_resources(struct pmu_incarnation *in, const struct rusage *ru)
{
	static const char src[] = "wait4 rusage of the command (includes the descendants it waited for)";
	static const char *const remedy = "record with --mode light to read /proc/PID/io at exit";
	struct pmu_resource *res = res_of(in);

	if (!res)
		return;
	res_set(&res[PMU_RES_CPU_USER_NS],
		(uint64_t)ru->ru_utime.tv_sec * 1000000000ull + (uint64_t)ru->ru_utime.tv_usec * 1000u, src);
	res_set(&res[PMU_RES_CPU_SYSTEM_NS],
		(uint64_t)ru->ru_stime.tv_sec * 1000000000ull + (uint64_t)ru->ru_stime.tv_usec * 1000u, src);
	res_set(&res[PMU_RES_MAX_RSS_BYTES], (uint64_t)ru->ru_maxrss * 1024, src);
	res_set(&res[PMU_RES_MINOR_FAULTS], (uint64_t)ru->ru_minflt, src);
	res_set(&res[PMU_RES_MAJOR_FAULTS], (uint64_t)ru->ru_majflt, src);
	res_set(&res[PMU_RES_VOLUNTARY_SWITCHES], (uint64_t)ru->ru_nvcsw, src);
	res_set(&res[PMU_RES_INVOLUNTARY_SWITCHES], (uint64_t)ru->ru_nivcsw, src);
	res_unavail(&res[PMU_RES_READ_BYTES], "wait4 rusage", remedy,
		    "wait4 rusage has no byte counts and mode none reads nothing else");
	res_unavail(&res[PMU_RES_WRITE_BYTES], "wait4 rusage", remedy,
		    "wait4 rusage has no byte counts and mode none reads nothing else");
}

/* Write in out (its resources and end) and keep only its compact part. */
static void write_out(struct pmu_cohort *c, struct pmu_incarnation *in)
{
	if (!in->d)
		return;
	SINK(c, ended, in);
	free(in->d->res);
	free(in->d);
	in->d = NULL;
}

static void end_inc(struct pmu_cohort *c, struct pmu_incarnation *in, int status, uint64_t t, bool followed)
{
	static const char src[] = "/proc/PID/task/TID/io rchar, wchar at each thread's exit, summed";
	struct pmu_inc_detail *d = in->d;
	struct pmu_resource *res = followed ? res_of(in) : d->res;

	if (!res) {
		/* out of memory, or mode none without rusage: "not observed" */
	} else if (followed && !d->io_failed && d->io_threads < in->ntids) {
		/* a thread ended unseen (it exec'd away, or was reaped early):
		 * a sum without it would be short, so there is no sum */
		res_unavail(&res[PMU_RES_READ_BYTES], src, "none: a thread's exit event was not delivered",
			    "%u of %u threads were read at their exits", d->io_threads, in->ntids);
		res_unavail(&res[PMU_RES_WRITE_BYTES], src, "none: a thread's exit event was not delivered",
			    "%u of %u threads were read at their exits", d->io_threads, in->ntids);
	} else if (followed && !d->io_failed) {
		res_set(&res[PMU_RES_READ_BYTES], d->io_read, src);
		res_set(&res[PMU_RES_WRITE_BYTES], d->io_write, src);
	} else if (followed) {
		res_unavail(&res[PMU_RES_READ_BYTES], src, "run pmurec as the owner of the command, or as root",
			    "a thread's /proc/PID/task/TID/io was not readable at its exit");
		res_unavail(&res[PMU_RES_WRITE_BYTES], src, "run pmurec as the owner of the command, or as root",
			    "a thread's /proc/PID/task/TID/io was not readable at its exit");
	}
	in->ended = true;
	in->end_ns = t;
	if (WIFEXITED(status)) {
		d->exit_kind = 1;
		d->exit_value = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		d->exit_kind = 2;
		d->exit_value = WTERMSIG(status);
	}
	for (uint32_t k = 0; k < in->ntids; k++)
		tidmap_del(c->tidmap, in->tids[k], (long)(in - c->incs));
	if (c->live_incs)
		c->live_incs--;
	write_out(c, in);
}

static void kill_all(struct pmu_cohort *c, int sig)
{
	for (size_t i = 0; i < c->n; i++)
		if (!c->incs[i].ended)
			kill(c->incs[i].pid, sig);
}

static bool all_ended(const struct pmu_cohort *c)
{
	return c->live_incs == 0;
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* A task we have not seen yet (its first stop can come before its
 * parent's fork event): a thread of a known process, or a new process
 * whose parent is its PPid. */
static struct pmu_incarnation *adopt(struct pmu_cohort *c, pid_t tid, uint64_t t, struct pmu_incarnation *by,
				     int hint)
{
	static const char *const keys[] = { "Tgid", "PPid" };
	long long v[2], tgid, ppid;
	struct pmu_incarnation *in, *p;

	status_fields(tid, keys, v, 2);
	tgid = v[0];
	ppid = v[1];
	in = tgid > 0 ? inc_of_pid(c, (pid_t)tgid) : NULL;
	int parent_id;

	/* /proc unreadable (the task is gone, or no descriptor is left): the
	 * ptrace event says what it is; a clone event is a thread of its
	 * reporter, never a process made up */
	if (tgid <= 0 && hint == 1 && by)
		in = by, tgid = by->pid;
	if (in && (pid_t)tgid != tid) {
		int r = add_tid(c, in, tid);

		if (r < 0 || r == 2)
			return NULL;
		if (r == 0)
			c->live_tasks++;
		return in;
	}
	/* The parent: PPid, or (CLONE_PARENT, or a parent already gone) the
	 * task that reported the fork, or else the root: every task here
	 * descends from it. */
	p = ppid > 0 ? inc_of_pid(c, (pid_t)ppid) : NULL;
	parent_id = p ? p->id : by ? by->id : c->n ? 1 : 0;
	return add_inc(c, tid, parent_id, t, false);
}

/*
 * A new task the cohort cannot take (at its bound, or out of memory): it
 * is held at its first stop and has run no code of its own.  Launched, it
 * is killed now (the run ends as truncated, the cohort is sent SIGTERM);
 * attached, it is let go, as the rest of the tree will be.
 */
static void refuse(const struct pmu_launch *l, pid_t tid)
{
	if (l->attach_pid)
		ptrace(PTRACE_DETACH, tid, 0, 0);
	else
		kill(tid, SIGKILL);
}

/* Attach mode: let go of every task, delivering any signal that was
 * stopped on its way, and leave the tree running. */
static void detach_all(struct pmu_cohort *c)
{
	for (size_t i = 0; i < c->n; i++) {
		struct pmu_incarnation *in = &c->incs[i];

		if (in->ended)
			continue;
		for (uint32_t k = 0; k < in->ntids; k++) {
			pid_t tid = in->tids[k];
			int st;

			if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0)
				continue;
			while (waitpid(tid, &st, __WALL) == tid) {
				if (!WIFSTOPPED(st))
					break;
				ptrace(PTRACE_DETACH, tid, 0, (st >> 16) == 0 ? WSTOPSIG(st) : 0);
				break;
			}
		}
	}
}

static int follow(pid_t root, struct pmu_cohort *c, const struct pmu_launch *l, struct pmu_launch_result *res)
{
	uint64_t deadline = l->max_duration_ms ? res->start_ns + (uint64_t)l->max_duration_ms * 1000000u : 0;
	uint64_t kill_at = 0;
	int stop_seen = 0;
	struct rusage ru;

	for (;;) {
		uint64_t now = pmu_now_mono_ns();
		struct pmu_incarnation *in;
		int st;
		pid_t pid;

		if (l->attach_pid) {
			const char *why = pmu_backend_abort || pmu_backend_stop_signal ? "a signal to the recorder"
					  : deadline && now >= deadline ? "--max-duration"
					  : c->limit_reason[0] ? "the cohort's bound (spec: PMU_COHORT_MAX_*)"
					  : l->over_bound && l->over_bound(l->ctx, res->truncation, sizeof(res->truncation))
						  ? "--max-output-bytes" : NULL;

			if (why) {
				snprintf(res->detach_reason, sizeof(res->detach_reason),
					 "detached from the running tree on %s", why);
				res->detached = true;
				res->truncation[0] = '\0';
				detach_all(c);
				return 0;
			}
		}
		if (pmu_backend_abort) {
			kill_all(c, SIGKILL);
			kill_at = 0;
		}
		if (pmu_backend_stop_signal && !stop_seen) {
			stop_seen = pmu_backend_stop_signal;
			res->interrupted = true;
			res->signal = stop_seen;
			/* to every process of the cohort, not just the root */
			kill_all(c, stop_seen == SIGINT ? SIGINT : SIGTERM);
			kill_at = now + (uint64_t)l->grace_ms * 1000000u;
		}
		if (deadline && now >= deadline && !res->truncated) {
			res->truncated = true;
			snprintf(res->truncation, sizeof(res->truncation),
				 "--max-duration %d ms reached: the cohort was sent SIGTERM", l->max_duration_ms);
			kill_all(c, SIGTERM);
			kill_at = now + (uint64_t)l->grace_ms * 1000000u;
		}
		if (c->limit_reason[0] && !res->truncated) {
			res->truncated = true;
			snprintf(res->truncation, sizeof(res->truncation), "%s", c->limit_reason);
			kill_all(c, SIGTERM);
			kill_at = now + (uint64_t)l->grace_ms * 1000000u;
		}
		if (l->over_bound && !res->truncated && l->over_bound(l->ctx, res->truncation, sizeof(res->truncation))) {
			res->truncated = true;
			kill_all(c, SIGTERM);
			kill_at = now + (uint64_t)l->grace_ms * 1000000u;
		}
		if (kill_at && now >= kill_at) {
			kill_all(c, SIGKILL);
			kill_at = 0;
		}
		pid = wait4(-1, &st, __WALL, &ru);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ECHILD)
				return 0;
			return pmu_error(PMU_ERR_IO, "waitpid: %s", strerror(errno));
		}
		now = pmu_now_mono_ns();
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			in = inc_of_tid(c, pid);
			if (in && l->on_task_end)
				l->on_task_end(l->ctx, in->id, pid, now);
			if (!in) {
				/* not a traced task: an external collector */
				if (l->on_other_exit)
					l->on_other_exit(l->ctx, pid, st);
				continue;
			}
			if (in->pid == pid)
				end_inc(c, in, st, now, true);
			if (pid == root) {
				res->wait_status = st;
				if (!l->attach_pid) /* only a launched command is our child */
					keep_rusage(res, &ru);
			}
			if (c->live_tasks)
				c->live_tasks--;
			if (all_ended(c))
				return 0; /* the whole cohort is gone */
			continue;
		}
		if (!WIFSTOPPED(st))
			continue;
		in = inc_of_tid(c, pid);
		if (!in)
			in = adopt(c, pid, now, NULL, 0);
		if (!in && (st >> 16) == PTRACE_EVENT_STOP && WSTOPSIG(st) == SIGTRAP) {
			/* a new task's first stop, and no room for it */
			refuse(l, pid);
			if (!l->attach_pid)
				ptrace(PTRACE_CONT, pid, 0, 0);
			continue;
		}
		switch (st >> 16) {
		case PTRACE_EVENT_FORK:
		case PTRACE_EVENT_VFORK:
		case PTRACE_EVENT_CLONE: {
			unsigned long msg = 0;

			if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg) == 0) {
				struct pmu_incarnation *x = inc_of_tid(c, (pid_t)msg);

				if (!x && !adopt(c, (pid_t)msg, now, in, (st >> 16) == PTRACE_EVENT_CLONE ? 1 : 2))
					refuse(l, (pid_t)msg);
				else if (x && c->launch && c->launch->on_task)
					/* a thread id seen before in this process (a thread
					 * that ended, or an exec'd thread's old id): a new
					 * task all the same; the listener drops repeats */
					c->launch->on_task(c->launch->ctx, x->id, x->pid, (pid_t)msg, 0, now);
			}
			ptrace(PTRACE_CONT, pid, 0, 0);
			break;
		}
		case PTRACE_EVENT_EXEC: {
			unsigned long former = 0;

			/* exec by a thread other than the leader: it now has the
			 * process id, and the old leader is gone (ptrace(2)) */
			if (in && ptrace(PTRACE_GETEVENTMSG, pid, 0, &former) == 0 && (pid_t)former != pid &&
			    former && l->on_task_exec)
				l->on_task_exec(l->ctx, in->id, pid, (pid_t)former, now);
			if (in)
				add_exec(c, in, pid, now);
			ptrace(PTRACE_CONT, pid, 0, 0);
			break;
		}
		case PTRACE_EVENT_EXIT:
			if (in)
				thread_io(in, pid);
			if (in && in->pid == pid) {
				read_resources(in);
				read_objects(c, pid);
			}
			ptrace(PTRACE_CONT, pid, 0, 0);
			break;
		case PTRACE_EVENT_STOP:
			/*
			 * A group stop (SIGSTOP, SIGTSTP, ^Z...) reports the stopping
			 * signal: the task stays stopped until SIGCONT, as untraced
			 * (PTRACE_LISTEN).  The first stop of a new task and an
			 * interrupt report SIGTRAP: go on.
			 */
			if (WSTOPSIG(st) == SIGSTOP || WSTOPSIG(st) == SIGTSTP || WSTOPSIG(st) == SIGTTIN ||
			    WSTOPSIG(st) == SIGTTOU)
				ptrace(PTRACE_LISTEN, pid, 0, 0);
			else
				ptrace(PTRACE_CONT, pid, 0, 0);
			break;
		default:
			/* signal-delivery stop: deliver the signal */
			ptrace(PTRACE_CONT, pid, 0, WSTOPSIG(st));
			break;
		}
	}
}

/* Seize pid, its threads and, recursively, its children; every task
 * found becomes part of a preexisting incarnation seen at time t. */
static int seize_tree(struct pmu_cohort *c, pid_t pid, int parent, uint64_t t, int depth)
{
	char path[96], *s = NULL;
	struct pmu_incarnation *in;
	DIR *d;
	int id;

	if (depth > 64 || inc_of_pid(c, pid) || pid == getpid())
		return 0;
	/* a zombie has exited already: nothing to follow, and it cannot be seized */
	{
		char st[64], *z = NULL, *rp;

		snprintf(st, sizeof(st), "/proc/%d/stat", (int)pid);
		if (pmu_read_file(AT_FDCWD, st, 4096, &z, NULL) == 0 && (rp = strrchr(z, ')')) && rp[1] == ' ' &&
		    (rp[2] == 'Z' || rp[2] == 'X')) {
			free(z);
			return 0;
		}
		free(z);
	}
	in = add_inc(c, pid, parent, t, true);
	if (!in && c->limit_reason[0])
		return 0; /* the bound ends the run: what is not seized stays untraced */
	if (!in)
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	id = in->id;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return pmu_error(PMU_ERR_NOTFOUND, "no process %d", (int)pid);
	for (struct dirent *e; (e = readdir(d));) {
		pid_t tid = (pid_t)atoi(e->d_name);

		if (tid <= 0)
			continue;
		if (ptrace(PTRACE_SEIZE, tid, 0,
			   PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC |
				   PTRACE_O_TRACEEXIT) < 0) {
			int e2 = errno;

			closedir(d);
			return pmu_error(e2 == EPERM ? PMU_ERR_INVAL : PMU_ERR_IO, "cannot attach to thread %d of %d: %s",
					 (int)tid, (int)pid, strerror(e2));
		}
		in = &c->incs[id - 1];
		switch (add_tid(c, in, tid)) {
		case 0:
			c->live_tasks++;
			break;
		case 2:
			ptrace(PTRACE_DETACH, tid, 0, 0); /* past the bound: not followed */
			break;
		}
	}
	closedir(d);
	/* children, from every thread's list */
	d = opendir(path);
	for (struct dirent *e; d && (e = readdir(d));) {
		char cp[128], *w, *save = NULL;

		if (atoi(e->d_name) <= 0)
			continue;
		snprintf(cp, sizeof(cp), "/proc/%d/task/%d/children", (int)pid, atoi(e->d_name));
		if (pmu_read_file(AT_FDCWD, cp, 1 << 20, &s, NULL))
			continue;
		for (w = strtok_r(s, " \n", &save); w; w = strtok_r(NULL, " \n", &save))
			seize_tree(c, (pid_t)atoi(w), id, t, depth + 1);
		free(s);
		s = NULL;
	}
	if (d)
		closedir(d);
	return 0;
}

static int attach_run(const struct pmu_launch *l, struct pmu_cohort *c, struct pmu_launch_result *res)
{
	struct sigaction sa = { 0 };
	struct itimerval it = { { 0, 50000 }, { 0, 50000 } };
	int err;

	res->start_ns = pmu_now_mono_ns();
	c->launch = l;
	c->task_flags = PMU_TASK_PREEXISTING;
	err = seize_tree(c, l->attach_pid, 0, res->start_ns, 0);
	c->task_flags = 0;
	if (err) {
		c->launch = NULL;
		detach_all(c);
		return err;
	}
	res->follow_ok = true;
	if (l->before_release)
		l->before_release(l->ctx, l->attach_pid);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	err = follow(l->attach_pid, c, l, res);
	c->launch = NULL;
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	res->end_ns = pmu_now_mono_ns();
	return err;
}

/*
 * The run is over: what is still alive (attached and let go, or past a
 * bound) is written out as alive, the live index goes, and the pid index
 * that attributes other collectors' records is made.  The sink's first
 * error is the run's when it had none of its own.
 */
static int finish_run(struct pmu_cohort *c, int err)
{
	for (size_t i = 0; i < c->n; i++)
		write_out(c, &c->incs[i]);
	tidmap_free(c->tidmap);
	c->tidmap = NULL;
	index_by_pid(c);
	return err ? err : c->err;
}

/*
 * fork(2), or, when the launch names the cohort's cgroup, clone3(2) with
 * CLONE_INTO_CGROUP so that the command is born in the leaf.  Moving it
 * there after a fork (a write to cgroup.procs) takes the cgroup
 * threadgroup rwsem for writing, which waits for an RCU grace period:
 * 7-15 ms on a 2-CPU VM, the largest single cost of pmurec -- true
 * (docs/fixed-cost.md); a child born in the cgroup takes only the read
 * side.  Where clone3 or the flag is refused (before Linux 5.7, a seccomp
 * filter, a leaf that may not be entered) the plain fork is used and the
 * leaf is entered as before (pmu_cg_enter() sees which happened).  Either
 * way the child is a fork: no CLONE_VM, SIGCHLD at its end, and it calls
 * only what is safe after fork.
 */
static pid_t spawn(const struct pmu_launch *l)
{
#ifdef CLONE_INTO_CGROUP
	if (l->into_cgroup) {
		struct clone_args ca;
		long pid;

		memset(&ca, 0, sizeof(ca));
		ca.flags = CLONE_INTO_CGROUP;
		ca.exit_signal = SIGCHLD;
		ca.cgroup = (uint64_t)l->cgroup_fd;
		pid = syscall(SYS_clone3, &ca, sizeof(ca));
		if (pid >= 0)
			return (pid_t)pid;
	}
#endif
	return fork();
}

int pmu_backend_run(const struct pmu_launch *l, struct pmu_cohort *c, struct pmu_launch_result *res)
{
	int barrier[2], errpipe[2], e = 0, err = 0;
	struct sigaction sa = { 0 };
	struct itimerval it = { { 0, 50000 }, { 0, 50000 } };
	struct rusage ru;
	pid_t pid, recorder = getpid();
	ssize_t n;

	memset(res, 0, sizeof(*res));
	c->sink = l->sink;
	if (l->attach_pid)
		return finish_run(c, attach_run(l, c, res));
	if (pipe2(barrier, O_CLOEXEC) < 0 || pipe2(errpipe, O_CLOEXEC) < 0)
		return pmu_error(PMU_ERR_IO, "pipe: %s", strerror(errno));
	res->start_ns = pmu_now_mono_ns();
	pid = spawn(l);
	if (pid < 0)
		return pmu_error(PMU_ERR_IO, "fork: %s", strerror(errno));
	if (pid == 0) {
		char go;

		/* The command dies with the recorder: traced, by EXITKILL;
		 * untraced (mode none), by this alone.  It is sent when the
		 * forking thread exits: the fork stays on the main thread. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != recorder)
			_exit(127);
		close(barrier[1]);
		close(errpipe[0]);
		ssize_t got;

		while ((got = read(barrier[0], &go, 1)) < 0 && errno == EINTR)
			;
		/* EOF instead of the go-ahead: the recorder died before it could
		 * attach, so nothing may run unobserved */
		if (got != 1)
			_exit(127);
		close(barrier[0]);
		if (l->child_nofile) {
			struct rlimit rl;

			if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
				rl.rlim_cur = (rlim_t)l->child_nofile;
				setrlimit(RLIMIT_NOFILE, &rl);
			}
		}
		execvp(l->argv[0], l->argv);
		e = errno;
		if (write(errpipe[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(barrier[0]);
	close(errpipe[1]);
	if (!add_inc(c, pid, 0, res->start_ns, false)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return pmu_error(PMU_ERR_NOMEM, "out of memory");
	}
	if (l->follow) {
		if (ptrace(PTRACE_SEIZE, pid, 0,
			   PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC |
				   PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL) == 0) {
			res->follow_ok = true;
			/* from here on every task that joins is reported */
			c->launch = l;
			if (l->on_task)
				l->on_task(l->ctx, c->incs[0].id, pid, pid, PMU_TASK_ROOT_PREEXEC, pmu_now_mono_ns());
		} else {
			int pe = errno;
			long long scope = -1;
			char *s = NULL;

			if (pmu_read_file(AT_FDCWD, "/proc/sys/kernel/yama/ptrace_scope", 16, &s, NULL) == 0)
				scope = atoll(s);
			free(s);
			if (scope >= 0)
				snprintf(res->follow_reason, sizeof(res->follow_reason),
					 "ptrace(PTRACE_SEIZE) of the command failed: %s (kernel.yama.ptrace_scope=%lld)",
					 strerror(pe), scope);
			else
				snprintf(res->follow_reason, sizeof(res->follow_reason),
					 "ptrace(PTRACE_SEIZE) of the command failed: %s", strerror(pe));
			res->follow_remedy = pe == EPERM
				? "set kernel.yama.ptrace_scope=1 (or 0), or allow ptrace in the container's seccomp profile"
				: "check that ptrace is available on this kernel";
		}
	}
	if (l->before_release)
		l->before_release(l->ctx, pid);
	/* release the child */
	if (write(barrier[1], "g", 1) != 1)
		err = pmu_error(PMU_ERR_IO, "cannot release the command: %s", strerror(errno));
	close(barrier[1]);
	/*
	 * A traced child may stop (a signal on its way, a group stop) before
	 * it execs, and only the follow loop can let it go on: so exec's
	 * outcome is read after following.  Untraced, it is read now; the
	 * pipe ends at the exec, or carries its errno.
	 */
	if (!res->follow_ok) {
		while ((n = read(errpipe[0], &e, sizeof(e))) < 0 && errno == EINTR)
			;
		close(errpipe[0]);
		errpipe[0] = -1;
		if (n == (ssize_t)sizeof(e)) {
			res->exec_failed = true;
			res->exec_errno = e;
		}
	}
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL); /* no SA_RESTART: waitpid wakes up */
	setitimer(ITIMER_REAL, &it, NULL);
	if (res->follow_ok) {
		int ferr = follow(pid, c, l, res);

		if (!err)
			err = ferr;
		while ((n = read(errpipe[0], &e, sizeof(e))) < 0 && errno == EINTR)
			;
		close(errpipe[0]);
		if (n == (ssize_t)sizeof(e)) {
			res->exec_failed = true;
			res->exec_errno = e;
		}
	} else {
		uint64_t kill_at = 0;

		for (;;) {
			uint64_t now = pmu_now_mono_ns();
			pid_t w;
			int st;

			if (pmu_backend_stop_signal && !res->interrupted) {
				res->interrupted = true;
				res->signal = pmu_backend_stop_signal;
				kill(pid, pmu_backend_stop_signal == SIGINT ? SIGINT : SIGTERM);
				kill_at = now + (uint64_t)l->grace_ms * 1000000u;
			}
			if (pmu_backend_abort)
				kill(pid, SIGKILL);
			if (l->over_bound && !res->truncated &&
			    l->over_bound(l->ctx, res->truncation, sizeof(res->truncation))) {
				res->truncated = true;
				kill(pid, SIGTERM);
				kill_at = now + (uint64_t)l->grace_ms * 1000000u;
			}
			if (l->max_duration_ms && !res->truncated &&
			    now >= res->start_ns + (uint64_t)l->max_duration_ms * 1000000u) {
				res->truncated = true;
				snprintf(res->truncation, sizeof(res->truncation),
					 "--max-duration %d ms reached: the command was sent SIGTERM", l->max_duration_ms);
				kill(pid, SIGTERM);
				kill_at = now + (uint64_t)l->grace_ms * 1000000u;
			}
			/* SIGTERM first, SIGKILL after the grace period, as when following */
			if (kill_at && now >= kill_at) {
				kill(pid, SIGKILL);
				kill_at = 0;
			}
			w = wait4(pid, &st, 0, &ru);
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				err = pmu_error(PMU_ERR_IO, "wait4: %s", strerror(errno));
				break;
			}
			res->wait_status = st;
			rusage_resources(&c->incs[0], &ru);
			end_inc(c, &c->incs[0], st, pmu_now_mono_ns(), false);
			keep_rusage(res, &ru);
			break;
		}
	}
	c->launch = NULL;
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	res->end_ns = pmu_now_mono_ns();
	return finish_run(c, err);
}
